// A webhook's delivery log, newest first: what each delivery carried (the
// event's kind, seq and id, and the line the events page shows for it),
// its status, its last answer, and every attempt (status code, duration,
// error); a delivery can be sent again. The log has no subscription: the
// page reads it again every two seconds while it is open, and reads each
// event once.

import { query, kindNames } from "./gql.js";
import { h, replace, time, errorText, busy, notice } from "./dom.js";
import { testButton, toggleButton } from "./webhooks.js";
import { summary, short } from "./summary.js";

const every = 2000;

export function render(root, ctx) {
  const [sessionId, webhookId] = ctx.params;
  const sid = encodeURIComponent(sessionId);
  const head = h("div#webhook-head");
  const rows = h("tbody#delivery-rows");
  const more = h("button#deliveries-more", { type: "button", hidden: true }, "Show older");
  const open = new Set(); // the deliveries whose attempts are unfolded
  const delivered = new Map(); // event id → the event (null: no longer stored)
  let names = new Map(); // kind → its name, as webhooks give it
  let first = 20;
  let timer = 0;
  let stopped = false;
  let latest = 0; // only the newest read draws and schedules the next

  root.appendChild(
    h(
      "section",
      h("p", h("a", { href: `#/sessions/${sid}/webhooks` }, "← Webhooks")),
      head,
      h(
        "table.list#deliveries",
        h(
          "thead",
          h("tr", h("th", "Created"), h("th", "Event"), h("th", "Status"), h("th", "Attempts"), h("th", "Last answer"), h("th", "Error"), h("th", ""))
        ),
        rows
      ),
      more
    )
  );
  more.addEventListener("click", () => {
    first = Math.min(100, first + 20);
    refresh();
  });

  async function refresh() {
    clearTimeout(timer);
    const mine = ++latest;
    const current = () => !stopped && mine === latest;
    try {
      const d = await query(
        `query($s: ID!, $w: ID!, $n: Int) {
           webhook(sessionId: $s, id: $w) { id url displayName enabled }
           deliveries(sessionId: $s, webhookId: $w, first: $n) {
             edges { node { id eventId event attempt status statusCode durationMs error createdAt
               attempts { n statusCode durationMs error at } } }
             pageInfo { hasNextPage } } }`,
        { s: sessionId, w: webhookId, n: first }
      );
      if (!current()) return;
      if (!d.webhook) {
        replace(head, h("p.error", "No such webhook."));
        return;
      }
      if (names.size === 0) names = await kindNames();
      await readEvents(d.deliveries.edges.map((e) => e.node.eventId));
      if (!current()) return;
      drawHead(d.webhook);
      replace(rows);
      const edges = d.deliveries.edges;
      if (edges.length === 0) rows.appendChild(h("tr", h("td.empty", { colSpan: 7 }, "Nothing delivered yet. Send a test event.")));
      for (const e of edges) rows.append(...row(e.node));
      more.hidden = !d.deliveries.pageInfo.hasNextPage || first >= 100;
    } catch (e) {
      if (!current()) return;
      replace(rows, h("tr", h("td.error", { colSpan: 7 }, errorText(e))));
    }
    if (current()) timer = setTimeout(refresh, every);
  }

  // readEvents reads the events of ids the page has not read yet, in one
  // request: a delivery's event never changes.
  async function readEvents(ids) {
    const missing = [...new Set(ids)].filter((id) => !delivered.has(id));
    if (missing.length === 0) return;
    const vars = { s: sessionId };
    const fields = missing.map((id, i) => {
      vars["e" + i] = id;
      return `e${i}: event(sessionId: $s, id: $e${i}) { id seq kind data }`;
    });
    const d = await query(`query($s: ID!, ${missing.map((_, i) => `$e${i}: ID!`).join(", ")}) { ${fields.join(" ")} }`, vars);
    missing.forEach((id, i) => delivered.set(id, d["e" + i]));
  }

  // carried is what a delivery carried: the event's kind by name, its seq
  // and id, and its line, cut short.
  function carried(d) {
    const ev = delivered.get(d.eventId);
    return [
      h("span.kind", names.get(d.event) || d.event),
      ev ? [" ", h("span.seq", "#" + ev.seq)] : null,
      h("div.muted.mono.event-id", d.eventId),
      ev ? h("div.event-summary", short(summary(ev))) : h("div.muted", "no longer stored (--event-retention)"),
    ];
  }

  function drawHead(w) {
    const test = testButton(sessionId, w, refresh, "button#dl-test");
    const toggle = toggleButton(sessionId, w, refresh, "button#dl-toggle");
    replace(
      head,
      h("h1", "Deliveries to ", w.displayName || w.id),
      h(
        "p",
        h("span.mono.url", w.url),
        " ",
        h("span.badge." + (w.enabled ? "on" : "off"), { "data-enabled": String(w.enabled) }, w.enabled ? "enabled" : "disabled"),
        " ",
        test,
        " ",
        toggle
      ),
      w.enabled ? null : h("p.muted", "A disabled webhook gets test events only; enable it to redeliver.")
    );
  }

  function row(d) {
    const redeliver = h("button#redeliver-" + d.id.replace(/[^\w-]/g, "_"), { type: "button", "data-action": "redeliver" }, "Redeliver");
    redeliver.addEventListener(
      "click",
      busy(redeliver, async () => {
        const r = await query(`mutation($s: ID!, $d: ID!) { redeliver(sessionId: $s, deliveryId: $d) { id } }`, { s: sessionId, d: d.id });
        notice(`Sent again as delivery ${r.redeliver.id}.`);
        await refresh();
      })
    );
    const unfold = h("button.link", { type: "button", "aria-expanded": String(open.has(d.id)) }, `${d.attempt} ▾`);
    const attempts = h(
      "tr.attempts",
      { hidden: !open.has(d.id) },
      h(
        "td",
        { colSpan: 7 },
        d.attempts.length === 0
          ? h("p.muted", "No attempt yet.")
          : h(
              "table.attempts",
              h("thead", h("tr", h("th", "#"), h("th", "At"), h("th", "Status code"), h("th", "Duration"), h("th", "Error"))),
              h(
                "tbody",
                d.attempts.map((a) =>
                  h("tr", h("td", String(a.n)), h("td", time(a.at)), h("td", a.statusCode ? String(a.statusCode) : "no answer"), h("td", a.durationMs + " ms"), h("td.error-text", a.error || ""))
                )
              )
            )
      )
    );
    unfold.addEventListener("click", () => {
      attempts.hidden = !attempts.hidden;
      if (attempts.hidden) open.delete(d.id);
      else open.add(d.id);
      unfold.setAttribute("aria-expanded", String(!attempts.hidden));
    });
    return [
      h(
        "tr",
        { "data-delivery-id": d.id, "data-status": d.status, "data-kind": d.event, "data-event-id": d.eventId },
        h("td", time(d.createdAt)),
        h("td.carried", carried(d)),
        h("td", h("span.badge.delivery-" + d.status.toLowerCase(), d.status)),
        h("td", { "data-label": "Attempts" }, unfold),
        h("td.status-code", { "data-label": "Last answer" }, d.statusCode ? `${d.statusCode} in ${d.durationMs} ms` : d.durationMs != null ? `no answer (${d.durationMs} ms)` : "—"),
        h("td.error-text", d.error || ""),
        h("td", d.status === "PENDING" ? null : redeliver)
      ),
      attempts,
    ];
  }

  refresh();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
