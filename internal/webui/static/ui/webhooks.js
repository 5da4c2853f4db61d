// A session's webhooks: list, create, edit, enable or disable, delete, and
// send a test event; each links to its delivery log.

import { query, eventKinds, showSessionName } from "./gql.js";
import { h, replace, errorText, busy, notice, confirmButton } from "./dom.js";

const fields = "id url displayName enabled events headers { name value } createdAt updatedAt";

export function render(root, ctx) {
  const [id] = ctx.params;
  const sid = encodeURIComponent(id);
  const rows = h("tbody#webhook-rows");
  const secret = h("div#webhook-secret");
  const formBox = h("div");
  const sessionName = h("span", id);
  root.appendChild(
    h(
      "section",
      h("h1", "Webhooks of ", sessionName),
      secret,
      formBox,
      h(
        "table.list#webhooks",
        h("thead", h("tr", h("th", "Name"), h("th", "URL"), h("th", "Kinds"), h("th", "State"), h("th", "Actions"))),
        rows
      )
    )
  );
  showSessionName(id, sessionName);

  let kinds = []; // the kinds a webhook can select: { kind, name }
  let names = new Map(); // kind → its name
  eventKinds()
    .then((all) => {
      // webhook.test is sent by testWebhook only, never selected.
      kinds = all.filter((k) => k.selectable);
      names = new Map(all.map((k) => [k.kind, k.name]));
      edit(null);
    })
    .catch((e) => replace(formBox, h("p.error", errorText(e))))
    .finally(() => reload());

  async function reload() {
    let page;
    try {
      page = (await query(`query($id: ID!) { webhooks(sessionId: $id, pageSize: 100) { total items { ${fields} } } }`, { id })).webhooks;
    } catch (e) {
      replace(rows, h("tr", h("td.error", { colSpan: 5 }, errorText(e))));
      return;
    }
    replace(rows);
    if (page.items.length === 0) rows.appendChild(h("tr", h("td.empty", { colSpan: 5 }, "No webhook yet: add one above.")));
    for (const w of page.items) rows.appendChild(row(w));
    if (page.total > page.items.length) rows.appendChild(h("tr", h("td.muted", { colSpan: 5 }, `${page.items.length} of ${page.total} shown.`)));
  }

  function row(w) {
    const wid = encodeURIComponent(w.id);
    const toggle = toggleButton(id, w, reload);
    const test = testButton(
      id,
      w,
      async () => {
        location.hash = `#/sessions/${sid}/webhooks/${wid}`;
      },
      "button",
      "Send test"
    );
    const editButton = h("button", { type: "button", "data-action": "edit", onclick: () => edit(w) }, "Edit");
    return h(
      "tr",
      { "data-webhook-id": w.id },
      // Its delivery log is a link under its name: its buttons, which act
      // on it, then fit one line, on a phone too.
      h(
        "td",
        h("strong", w.displayName || "(no name)"),
        h("div.muted.mono", w.id),
        h("div.links", h("a", { href: `#/sessions/${sid}/webhooks/${wid}`, "data-action": "deliveries" }, "Deliveries"))
      ),
      h("td.mono.url", w.url),
      h("td", w.events.length === kinds.length ? "every kind" : w.events.map((k, i) => [i ? ", " : null, h("span.kind-name", names.get(k) || k)])),
      h("td", h("span.badge." + (w.enabled ? "on" : "off"), w.enabled ? "enabled" : "disabled")),
      h(
        "td.actions",
        h(
          "div.buttons",
          editButton,
          toggle,
          test,
          confirmButton("Delete", "Really delete?", async () => {
            try {
              await query(`mutation($s: ID!, $id: ID!) { deleteWebhook(sessionId: $s, id: $id) }`, { s: id, id: w.id });
              await reload();
            } catch (e) {
              notice(errorText(e), "error");
            }
          }, ".danger", w.id + ":delete")
        )
      )
    );
  }

  // edit shows the form: empty to create a webhook, filled to edit w.
  function edit(w) {
    const url = h("input#wh-url", { type: "url", required: true, placeholder: "https://example.com/hook", value: w ? w.url : "" });
    const name = h("input#wh-name", { placeholder: "a name for people", value: w ? w.displayName : "" });
    const enabled = h("input#wh-enabled", { type: "checkbox", checked: w ? w.enabled : true });
    const every = h("input#wh-every", { type: "checkbox", checked: !w || w.events.length === kinds.length });
    const boxes = kinds.map((k) => h("input", { type: "checkbox", value: k.kind, "data-kind": k.kind, checked: !!w && w.events.includes(k.kind) }));
    const pick = h("div.kinds", boxes.map((b, i) => h("label", b, " " + kinds[i].name)));
    pick.hidden = every.checked;
    every.addEventListener("change", () => {
      pick.hidden = every.checked;
      // Leaving "every kind" starts an empty pick, not 27 boxes to clear.
      if (!every.checked && boxes.every((b) => b.checked)) boxes.forEach((b) => (b.checked = false));
    });
    const headers = h("textarea#wh-headers", {
      rows: 2,
      placeholder: "Name: value, one per line",
      value: w ? w.headers.map((x) => `${x.name}: ${x.value}`).join("\n") : "",
    });
    const save = h("button.primary#wh-save", { type: "submit" }, w ? "Save" : "Create webhook");
    const form = h(
      "form.card.webhook-form",
      h("h2", w ? "Edit " + (w.displayName || w.id) : "New webhook"),
      h("label", "URL ", url),
      h("label", "Name ", name),
      h("label.check", enabled, " enabled"),
      h("label.check", every, " every kind"),
      pick,
      h("label", "Headers ", headers),
      h("div.inline", save, w ? h("button", { type: "button", onclick: () => edit(null) }, "Cancel") : null)
    );
    form.addEventListener(
      "submit",
      busy(save, async () => {
        const input = {
          url: url.value.trim(),
          displayName: name.value.trim(),
          enabled: enabled.checked,
          events: every.checked ? (w ? kinds.map((k) => k.kind) : null) : boxes.filter((b) => b.checked).map((b) => b.value),
          headers: parseHeaders(headers.value),
        };
        if (!w && input.events === null) delete input.events; // absent: every kind
        if (w) {
          await query(`mutation($s: ID!, $id: ID!, $in: WebhookInput!) { updateWebhook(sessionId: $s, id: $id, input: $in) { id } }`, {
            s: id,
            id: w.id,
            in: input,
          });
          notice("Webhook saved.");
        } else {
          const d = await query(`mutation($s: ID!, $in: WebhookInput!) { createWebhook(sessionId: $s, input: $in) { webhook { id } secret } }`, {
            s: id,
            in: input,
          });
          replace(
            secret,
            h(
              "div.card.secret",
              h("p", "Webhook created. Its signing secret, shown this once (Standard Webhooks: verify the webhook-signature header with it):"),
              h("code.token#wh-secret", d.createWebhook.secret),
              h("p", h("button", { type: "button", onclick: () => replace(secret) }, "Done"))
            )
          );
        }
        edit(null);
        await reload();
      })
    );
    replace(formBox, form);
  }
}

// toggleButton enables or disables webhook w of session sessionId, then
// calls then.
export function toggleButton(sessionId, w, then, spec = "button") {
  const b = h(spec, { type: "button", "data-action": w.enabled ? "disable" : "enable" }, w.enabled ? "Disable" : "Enable");
  b.addEventListener(
    "click",
    busy(b, async () => {
      await query(`mutation($s: ID!, $id: ID!, $on: Boolean!) { updateWebhook(sessionId: $s, id: $id, input: { enabled: $on }) { id } }`, {
        s: sessionId,
        id: w.id,
        on: !w.enabled,
      });
      await then();
    })
  );
  return b;
}

// testButton has the server send webhook w a webhook.test event, then
// calls then.
export function testButton(sessionId, w, then, spec = "button", label = "Send test event") {
  const b = h(spec, { type: "button", "data-action": "test", title: "Send a webhook.test event" }, label);
  b.addEventListener(
    "click",
    busy(b, async () => {
      await query(`mutation($s: ID!, $id: ID!) { testWebhook(sessionId: $s, id: $id) { id } }`, { s: sessionId, id: w.id });
      await then();
    })
  );
  return b;
}

// parseHeaders reads "Name: value" lines; the server checks names and
// values and names the bad one.
function parseHeaders(text) {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => {
      const i = l.indexOf(":");
      return i < 0 ? { name: l, value: "" } : { name: l.slice(0, i).trim(), value: l.slice(i + 1).trim() };
    });
}
