// A session's groups (#/sessions/ID/groups): each group fresh from WhatsApp
// (the groups query) with its participants and their roles; a number
// added, a participant removed, promoted or demoted; the invite link shown,
// copied or reset. WhatsApp answers each participant of a change on its
// own, and the page says each answer beside the group, a refusal with
// WhatsApp's reason (not an admin, not a participant, privacy), never
// dropped. The events of groups (a change made from a phone too) redraw the
// list without a reload.

import { query, showSessionName } from "./gql.js";
import { h, replace, errorText, busy, notice, confirmButton } from "./dom.js";

const groupFields = "id name description owner approvalMode memberAddMode ephemeralSeconds participants { jid phone lid role }";
const resultFields = "participant ok code message inviteLink";

// What changes a group or its members: a redraw follows each.
const liveKinds = ["GROUP_PARTICIPANTS_UPDATE", "GROUPS_UPDATE", "GROUPS_UPSERT"];

// The per-participant operations, as the API names them, with what the
// page says of a success.
const operations = {
  add: { mutation: "addGroupParticipants", verb: "Add", done: "added" },
  remove: { mutation: "removeGroupParticipants", verb: "Remove", done: "removed" },
  promote: { mutation: "promoteGroupParticipants", verb: "Promote", done: "now an admin" },
  demote: { mutation: "demoteGroupParticipants", verb: "Demote", done: "no longer an admin" },
};

const isAdmin = (p) => p.role === "admin" || p.role === "superadmin";

// who names a participant: its number, else its JID.
function who(p) {
  return p.phone ? "+" + p.phone : p.jid;
}

export function render(root, ctx) {
  const [id] = ctx.params;
  const name = h("span", id);
  showSessionName(id, name);
  const list = h("div#group-list");
  const empty = h("p.muted#groups-empty", { hidden: true }, "This account is in no group.");
  root.appendChild(
    h(
      "section",
      h("h1", "Groups of ", name),
      h("p.muted", "Read from WhatsApp as the page opens. Adding, removing, promoting and demoting need the account to be an admin of the group: WhatsApp answers each participant on its own."),
      empty,
      list
    )
  );
  const cards = new Map(); // group JID → its card
  let me = ""; // the session's own number
  let stopped = false;

  async function reload() {
    const d = await query(`query($id: ID!) { session(id: $id) { phone } groups(sessionId: $id) { ${groupFields} } }`, { id });
    if (stopped) return;
    me = (d.session && d.session.phone) || "";
    const groups = d.groups.slice().sort((a, b) => (a.name || a.id).localeCompare(b.name || b.id));
    for (const [jid, card] of cards) {
      if (groups.some((g) => g.id === jid)) continue;
      card.el.remove();
      cards.delete(jid);
      notice(`${card.name()}: this session's account is no longer in the group.`);
    }
    groups.forEach((g, i) => {
      let card = cards.get(g.id);
      if (!card) {
        card = groupCard(g);
        cards.set(g.id, card);
      }
      card.draw(g);
      // In the sorted order, moving a card only when it is out of place:
      // a card taken out and put back loses the focus in it.
      if (list.children[i] !== card.el) list.insertBefore(card.el, list.children[i] || null);
    });
    empty.hidden = groups.length > 0;
  }

  // refresh reads one group again after a change made here.
  async function refresh(jid) {
    const d = await query(`query($id: ID!, $jid: ID!) { group(sessionId: $id, jid: $jid) { ${groupFields} } }`, { id, jid });
    if (stopped || !d.group) return;
    const card = cards.get(jid);
    if (card) card.draw(d.group);
  }

  // groupCard is one group: its head, its participants, the add form, the
  // invite link and the answers to the last change. draw redraws what
  // WhatsApp says of it; the answers and the link stay as they are.
  function groupCard(g) {
    const jid = g.id;
    const title = h("h2.group-name");
    const facts = h("div.muted.group-facts");
    const role = h("p.group-role");
    const rows = h("tbody.participant-rows");
    const outcomes = h("ul.outcomes", { "aria-live": "polite", hidden: true });
    const number = h("input.add-number", {
      placeholder: "Number with country code, e.g. 4915551234567",
      autocomplete: "off",
      inputMode: "tel",
      "aria-label": "number to add",
    });
    const addButton = h("button.primary.add-submit", { type: "submit" }, "Add");
    const addForm = h("form.inline.add-form", { noValidate: true }, number, addButton);
    const invite = inviteBox(jid);
    const el = h(
      "section.card.group",
      { "data-jid": jid },
      h("div.group-head", title, facts),
      role,
      h(
        "table.list.participants",
        h("thead", h("tr", h("th", "Participant"), h("th", "Role"), h("th", "Actions"))),
        rows
      ),
      addForm,
      outcomes,
      invite
    );
    let current = g;
    let drawn = ""; // what the card shows now, to skip redrawing the same

    // change runs one operation on participants and shows WhatsApp's
    // answer for each of them.
    async function change(op, participants) {
      const o = operations[op];
      const d = await query(
        `mutation($id: ID!, $jid: ID!, $p: [String!]!) { ${o.mutation}(sessionId: $id, jid: $jid, participants: $p) { ${resultFields} } }`,
        { id, jid, p: participants }
      );
      showOutcomes(o, d[o.mutation]);
      try {
        await refresh(jid);
      } catch (e) {
        // The group may be out of reach now (the account removed itself):
        // the list says what is left.
        await reload();
      }
      return d[o.mutation];
    }

    function showOutcomes(o, results) {
      replace(
        outcomes,
        results.map((r) => {
          const p = current.participants.find((x) => x.phone === r.participant || x.jid === r.participant);
          const label = p ? who(p) : /^\d+$/.test(r.participant) ? "+" + r.participant : r.participant;
          if (r.ok) {
            return h("li.outcome.ok", { "data-participant": r.participant, "data-ok": "true" }, `${o.verb} ${label}: ${o.done}.`);
          }
          return h(
            "li.outcome.refused",
            { "data-participant": r.participant, "data-ok": "false", "data-code": r.code == null ? "" : String(r.code), role: "alert" },
            `${o.verb} ${label}: refused by WhatsApp: ${r.message || "no reason given"}` + (r.code ? ` (${r.code})` : "") + ".",
            r.inviteLink ? offerInvite(r) : null
          );
        })
      );
      outcomes.hidden = results.length === 0;
    }

    // offerInvite: an add their privacy refused can go as an invite link
    // the person may follow.
    function offerInvite(r) {
      const b = h("button.send-invite", { type: "button" }, "Send them the invite link");
      b.addEventListener(
        "click",
        busy(b, async () => {
          await query(`mutation($id: ID!, $jid: ID!, $n: String!, $m: String!) { sendGroupInvite(sessionId: $id, jid: $jid, number: $n, message: $m) { messageId } }`, {
            id,
            jid,
            n: r.participant,
            m: `You are invited to the group ${current.name || jid}.`,
          });
          replace(b.parentNode, `The invite link went to ${r.participant}.`);
        })
      );
      return [" ", b];
    }

    addForm.addEventListener(
      "submit",
      busy(addButton, async () => {
        const n = number.value.trim();
        if (!n) {
          number.focus();
          return;
        }
        const results = await change("add", [n]);
        if (results.every((r) => r.ok)) number.value = "";
      })
    );

    function participantRow(p) {
      const mine = p.phone && p.phone === me;
      const act = (op) => {
        const b = h("button", { type: "button", "data-action": op }, operations[op].verb);
        b.addEventListener("click", busy(b, () => change(op, [p.phone || p.jid])));
        return b;
      };
      return h(
        "tr.participant",
        { "data-phone": p.phone, "data-jid": p.jid, "data-role": p.role },
        h("td", h("strong", who(p)), mine ? h("span.muted", " (this session)") : null, h("div.muted.mono", p.jid), p.lid ? h("div.muted.mono", p.lid) : null),
        h("td", { "data-label": "Role" }, h("span.badge.role-" + p.role, p.role)),
        h(
          "td.actions",
          h(
            "div.buttons",
            isAdmin(p) ? act("demote") : act("promote"),
            confirmButton(
              "Remove",
              "Really remove?",
              async () => {
                try {
                  await change("remove", [p.phone || p.jid]);
                } catch (e) {
                  notice(errorText(e), "error");
                }
              },
              ".danger",
              `${jid}:${p.jid}:remove`
            )
          )
        )
      );
    }

    // draw skips a group that shows as it is: the events of a change made
    // here repeat what the change's own answer drew, and redrawing would
    // replace a button under the person's pointer.
    function draw(fresh) {
      const sig = JSON.stringify([fresh, me]);
      if (sig === drawn) return;
      drawn = sig;
      current = fresh;
      replace(title, fresh.name || "(no subject)");
      replace(
        facts,
        h("span.mono", jid),
        ` · ${fresh.participants.length} participant${fresh.participants.length === 1 ? "" : "s"}`,
        fresh.approvalMode ? " · admins approve who joins" : null,
        fresh.memberAddMode === "ALL" ? " · every member may add" : null
      );
      const self = fresh.participants.find((p) => p.phone && p.phone === me);
      const admin = self && isAdmin(self);
      el.dataset.admin = String(!!admin);
      replace(
        role,
        admin
          ? h("span.muted", "This session's account is an admin of the group.")
          : h("span.warn-text", "This session's account is not an admin of this group: WhatsApp refuses its changes to the members and its invite link.")
      );
      const admins = fresh.participants.filter(isAdmin);
      const others = fresh.participants.filter((p) => !isAdmin(p));
      replace(rows, [...admins, ...others].map(participantRow));
    }

    return { el, draw, name: () => current.name || jid };
  }

  // inviteBox shows the group's invite link on demand (reading it is an
  // admin's right: a refusal is said there), copies it, and resets it
  // (the old link stops working).
  function inviteBox(jid) {
    const link = h("input.invite-link.mono", { readOnly: true, "aria-label": "the invite link", hidden: true });
    const error = h("p.error.invite-error", { role: "alert", hidden: true });
    const show = h("button.invite-show", { type: "button" }, "Show the invite link");
    const copy = h("button.invite-copy", { type: "button", hidden: true }, "Copy");
    const load = async (reset) => {
      try {
        const d = await query(`query($id: ID!, $jid: ID!, $reset: Boolean) { groupInviteLink(sessionId: $id, jid: $jid, reset: $reset) }`, { id, jid, reset });
        link.value = d.groupInviteLink;
        link.hidden = false;
        copy.hidden = false;
        resetButton.hidden = false;
        error.hidden = true;
        if (reset) notice("A new invite link: the old one no longer works.");
      } catch (e) {
        replace(error, "The invite link: " + errorText(e));
        error.hidden = false;
      }
    };
    const resetButton = confirmButton("Reset the link", "Really reset?", () => load(true), ".invite-reset", jid + ":reset-invite");
    resetButton.hidden = true;
    show.addEventListener("click", busy(show, () => load(false)));
    copy.addEventListener("click", () => {
      link.select();
      const copied = navigator.clipboard ? navigator.clipboard.writeText(link.value) : Promise.reject(new Error("no clipboard"));
      copied.then(
        () => notice("The invite link is on the clipboard."),
        () => notice("Selected: copy it with Ctrl+C (⌘C).")
      );
    });
    return h("div.invite", h("div.inline", show, link, copy, resetButton), error);
  }

  // Group events come for every change, one's own and a phone's: at most
  // one reload each 250 ms.
  const stop = ctx.live.changes(
    id,
    liveKinds,
    () => reload().catch((e) => notice(errorText(e), "error")),
    (e) => notice("Live updates stopped: " + errorText(e), "error")
  );
  reload().catch((e) => replace(list, h("p.error#groups-error", errorText(e))));
  return () => {
    stopped = true;
    stop();
  };
}
