// The sessions page: every session the token reaches, their statuses kept
// live by one sessionStatuses subscription for them all, and the actions
// on each.

import { query } from "./gql.js";
import { h, replace, time, notice, errorText, confirmButton, busy, statusBadge } from "./dom.js";
import { mcpCard } from "./mcp.js";

const fields = "id name status statusReason jid phone pushName createdAt connectedAt";

// Past this many sessions the server refuses one stream for them all
// (graph.MaxStatusSessions): the rows then stay as the list drew them.
const maxLive = 500;

export function render(root, ctx) {
  const rows = h("tbody#session-rows");
  const created = h("div#created-token");
  const stops = [];
  const page = h(
    "section",
    h("h1", "Sessions"),
    ctx.viewer.session ? null : createForm(created, reload),
    created,
    h(
      "table.list#sessions",
      h("thead", h("tr", h("th", "Name"), h("th", "Status"), h("th", "Account"), h("th", "Created"), h("th", "Actions"))),
      rows
    ),
    mcpCard()
  );
  root.appendChild(page);

  async function reload() {
    for (const s of stops.splice(0)) s();
    let list;
    try {
      list = (await query(`{ sessions { ${fields} } }`)).sessions;
    } catch (e) {
      replace(rows, h("tr", h("td.error", { colSpan: 5 }, errorText(e))));
      return;
    }
    replace(rows);
    if (list.length === 0) {
      rows.appendChild(h("tr", h("td.empty", { colSpan: 5 }, "No session yet: create one above, then pair it.")));
    }
    const byId = new Map();
    for (const s of list) {
      const tr = h("tr", { "data-session-id": s.id });
      rows.appendChild(tr);
      fill(tr, s, reload);
      byId.set(s.id, tr);
    }
    if (list.length === 0 || list.length > maxLive) return;
    // One stream for every row: each session's state comes tagged with
    // its id, and null once it was deleted (maybe elsewhere).
    stops.push(
      ctx.live.subscribe(
        `subscription { sessionStatuses { sessionId session { ${fields} } } }`,
        () => ({}),
        {
          next: (d) => {
            const ev = d.sessionStatuses;
            const tr = byId.get(ev.sessionId);
            if (!tr) return;
            if (ev.session) {
              fill(tr, ev.session, reload);
            } else {
              byId.delete(ev.sessionId);
              tr.remove();
            }
          },
          error: (e) => notice(`Sessions: ${errorText(e)}`, "error"),
        }
      )
    );
  }
  reload();
  return () => stops.forEach((s) => s());
}

// createForm asks for the new session's name: required, and unique among
// the person's sessions (the server refuses a taken one with CONFLICT; its
// message, which names the session holding it, is shown beside the field).
function createForm(created, reload) {
  const name = h("input#new-session-name", {
    placeholder: "name, such as Sales line",
    maxLength: 100,
    "aria-label": "session name",
    "aria-describedby": "new-session-help new-session-error",
  });
  const error = h("span.error-text#new-session-error", { role: "alert" });
  const help = h("span.muted#new-session-help", "Each of your sessions has its own name.");
  const button = h("button.primary#create-session", { type: "submit" }, "Create session");
  const form = h("form.inline", { noValidate: true }, name, button, error, help);
  const refuse = (text) => {
    replace(error, text);
    name.setAttribute("aria-invalid", "true");
    name.focus();
  };
  name.addEventListener("input", () => {
    replace(error);
    name.removeAttribute("aria-invalid");
  });
  form.addEventListener(
    "submit",
    busy(button, async () => {
      const n = name.value.trim();
      if (!n) {
        refuse("Give the session a name.");
        return;
      }
      let d;
      try {
        d = await query(`mutation($n: String) { createSession(name: $n) { session { id name } token } }`, { n });
      } catch (e) {
        // A rule about the name: said beside it.
        if (e.code === "CONFLICT" || (e.code === "BAD_USER_INPUT" && e.extensions.field === "name")) {
          refuse(e.message);
          return;
        }
        throw e;
      }
      const s = d.createSession.session;
      name.value = "";
      replace(error);
      name.removeAttribute("aria-invalid");
      replace(
        created,
        h(
          "div.card.secret",
          h("p", "Session ", h("strong", s.name), " created. Its token, shown this once (it reaches this session only):"),
          h("code.token#session-token", d.createSession.token),
          h("p", h("a.button.primary#pair-new", { href: `#/sessions/${encodeURIComponent(s.id)}/pair` }, "Pair it now"),
            " ", h("button", { type: "button", onclick: () => replace(created) }, "Done"))
        )
      );
      await reload();
    })
  );
  return form;
}

// drawn is what each row shows now.
const drawn = new WeakMap();

// fill draws one session's row, unless it shows that already: the
// subscription's first answer repeats the list's, and redrawing would
// replace a button under the person's pointer (and disarm a confirm).
function fill(tr, s, reload) {
  const sig = JSON.stringify(s);
  if (drawn.get(tr) === sig) return;
  drawn.set(tr, sig);
  const id = encodeURIComponent(s.id);
  const act = (label, doc, cls = "") => {
    const b = h("button" + cls, { type: "button", "data-action": label.toLowerCase() }, label);
    b.addEventListener("click", busy(b, async () => {
      await query(doc, { id: s.id });
    }));
    return b;
  };
  const linked = !!s.jid && s.status !== "LOGGED_OUT";
  replace(
    tr,
    // The session's pages are links under its name: its buttons, which act
    // on it, then fit one line, on a phone too.
    h(
      "td",
      h("strong.name", s.name),
      h("div.muted.mono", s.id),
      h(
        "div.links",
        h("a", { href: `#/sessions/${id}/chats`, "data-action": "chats" }, "Chats"),
        " · ",
        h("a", { href: `#/sessions/${id}/groups`, "data-action": "groups" }, "Groups"),
        " · ",
        h("a", { href: `#/sessions/${id}/events`, "data-action": "events" }, "Events"),
        " · ",
        h("a", { href: `#/sessions/${id}/webhooks`, "data-action": "webhooks" }, "Webhooks")
      )
    ),
    h("td.status", statusBadge(s.status), s.statusReason ? h("div.muted", s.statusReason) : null),
    h("td", s.phone ? "+" + s.phone : "—", s.pushName ? h("div.muted", s.pushName) : null),
    h("td", { "data-label": "Created" }, time(s.createdAt)),
    h(
      "td.actions",
      h(
        "div.buttons",
        linked ? null : h("a.button#pair-" + cssId(s.id), { href: `#/sessions/${id}/pair`, "data-action": "pair" }, "Pair"),
        linked && s.status === "DISCONNECTED" ? act("Connect", `mutation($id: ID!) { connectSession(id: $id) { id } }`) : null,
        ["CONNECTED", "CONNECTING", "PAIRING"].includes(s.status)
          ? act("Disconnect", `mutation($id: ID!) { disconnectSession(id: $id) { id } }`)
          : null,
        linked
          ? confirmButton(
              "Log out",
              "Really log out?",
              async () => {
                try {
                  await query(`mutation($id: ID!) { logout(sessionId: $id) { id } }`, { id: s.id });
                } catch (e) {
                  notice(errorText(e), "error");
                }
              },
              "",
              s.id + ":logout"
            )
          : null,
        confirmButton("Delete", "Really delete?", async () => {
          try {
            await query(`mutation($id: ID!) { deleteSession(id: $id) }`, { id: s.id });
            notice(`Session ${s.name} deleted.`);
            await reload();
          } catch (e) {
            notice(errorText(e), "error");
          }
        }, ".danger", s.id + ":delete")
      )
    )
  );
}

// cssId makes an id usable in an element id.
function cssId(id) {
  return String(id).replace(/[^\w-]/g, "_");
}
