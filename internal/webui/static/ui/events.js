// A session's live event stream: the events subscription, filtered by kind,
// paused and resumed, and picked up again after the last event shown when
// the socket drops (the server replays what was stored in between). In
// sandbox mode a panel acts as a contact writing to the session.

import { query, GraphQLError, eventKinds, showSessionName } from "./gql.js";
import { h, replace, time, errorText, busy, notice } from "./dom.js";

// The page keeps this many events; older ones leave the page (they stay in
// the stored log: the events query pages through it).
const keep = 500;

export function render(root, ctx) {
  const [id] = ctx.params;
  const list = h("ol#event-list.events", { "aria-live": "polite" });
  const state = h("span#stream-state.muted");
  const pauseButton = h("button#stream-pause", { type: "button" }, "Pause");
  const reconnectButton = h("button#stream-reconnect", { type: "button", title: "Close the live socket and open it again, resuming after the last event shown" }, "Reconnect");
  const kindsBox = h("div.kinds#kinds");
  const filter = h("details.filter", h("summary#kinds-summary", "Kinds: all"), kindsBox);
  let lastId = null;
  let lastSeq = 0;
  let paused = false;
  let kinds = [];
  let unsubscribe = null;
  let retry = 0;
  let retryTimer = 0;
  let stopped = false;

  const sessionName = h("span", id);
  root.appendChild(
    h(
      "section.events-page",
      h("h1", "Events of ", sessionName),
      h("div.toolbar", pauseButton, reconnectButton, filter, state),
      h("div.columns", h("div.stream", list), ctx.viewer.sandbox ? sandboxPanel(id) : null)
    )
  );
  showSessionName(id, sessionName);
  loadKinds(kindsBox, (selected) => {
    kinds = selected;
    document.getElementById("kinds-summary").textContent = "Kinds: " + (kinds.length ? kinds.length + " selected" : "all");
    if (!paused) start();
  });

  function showState() {
    const after = lastId ? ` after ${lastId}` : "";
    state.textContent = paused ? `paused${after}` : `following${after}`;
    state.dataset.state = paused ? "paused" : "following";
  }

  function start() {
    if (unsubscribe) unsubscribe();
    clearTimeout(retryTimer);
    unsubscribe = ctx.live.subscribe(
      `subscription($id: ID!, $kinds: [EventKind!], $after: String) {
         events(sessionId: $id, kinds: $kinds, after: $after) { id seq kind occurredAt data } }`,
      () => ({ id, kinds: kinds.length ? kinds : null, after: lastId }),
      { next: (d) => add(d.events), error: failed, complete: ended }
    );
    showState();
  }

  function add(ev) {
    if (ev.seq <= lastSeq) return; // shown already
    lastSeq = ev.seq;
    lastId = ev.id;
    retry = 0;
    list.prepend(row(ev));
    while (list.children.length > keep) list.lastElementChild.remove();
    showState();
  }

  // failed: a subscriber that fell behind is ended with RATE_LIMITED and
  // the last event it got; subscribing again after it loses nothing.
  function failed(e) {
    unsubscribe = null;
    if (e.code === "RATE_LIMITED" && !stopped) {
      if (e.extensions.lastEventId) lastId = e.extensions.lastEventId;
      const delay = Math.min(10000, 500 * 2 ** retry++);
      state.textContent = `fell behind; resuming after ${lastId} in ${delay / 1000} s`;
      retryTimer = setTimeout(start, delay);
      return;
    }
    state.textContent = "stopped: " + errorText(e);
    notice(errorText(e), "error");
  }

  function ended() {
    unsubscribe = null;
    state.textContent = "the stream ended: the session was deleted or the token revoked";
  }

  pauseButton.addEventListener("click", () => {
    paused = !paused;
    pauseButton.textContent = paused ? "Resume" : "Pause";
    if (paused) {
      if (unsubscribe) unsubscribe();
      unsubscribe = null;
      clearTimeout(retryTimer);
      showState();
    } else {
      start();
    }
  });
  reconnectButton.addEventListener("click", () => ctx.live.drop());

  return () => {
    stopped = true;
    clearTimeout(retryTimer);
    if (unsubscribe) unsubscribe();
  };
}

// loadKinds offers a checkbox per event kind, read from the schema.
async function loadKinds(box, changed) {
  let names;
  try {
    names = await eventKinds();
  } catch (e) {
    replace(box, h("p.error", errorText(e)));
    changed([]);
    return;
  }
  const boxes = names.map((n) => h("input", { type: "checkbox", value: n, "data-kind": n }));
  replace(
    box,
    h("p.muted", "None checked: every kind."),
    boxes.map((b) => h("label", b, " " + b.value))
  );
  box.addEventListener("change", () => changed(boxes.filter((b) => b.checked).map((b) => b.value)));
  changed([]);
}

function row(ev) {
  return h(
    "li.event",
    { "data-seq": ev.seq, "data-kind": ev.kind, "data-id": ev.id },
    h("div.event-head", h("span.seq", "#" + ev.seq), " ", h("span.kind", ev.kind), " ", h("time.muted", time(ev.occurredAt))),
    h("div.event-summary", summary(ev)),
    h("details", h("summary", ev.id), h("pre.json", JSON.stringify(ev.data, null, 2)))
  );
}

// summary is one line about the event: who wrote what, or what changed.
function summary(ev) {
  const d = ev.data || {};
  if (d.text !== undefined || d.caption !== undefined || (d.type && d.chat)) {
    const who = d.fromMe ? "me" : d.pushName || (d.senderPhone ? "+" + d.senderPhone : d.sender || "");
    const what = d.text || (d.type && d.type !== "text" ? `[${d.type}]` + (d.caption ? " " + d.caption : "") : d.caption || "");
    if (what || who) return `${who}: ${what}`;
  }
  if (d.status) return [d.status, d.reason, d.id].filter(Boolean).join(" · ");
  if (d.pushName || d.name) return [d.pushName || d.name, d.phone ? "+" + d.phone : d.id].filter(Boolean).join(" · ");
  const json = JSON.stringify(d);
  return json.length > 160 ? json.slice(0, 157) + "…" : json;
}

// sandboxPanel acts as a contact of the simulated network: its texts and
// images reach the session as a phone's would.
function sandboxPanel(id) {
  const from = h("input#sb-from", { value: "15550001111", inputMode: "tel", "aria-label": "contact's phone number" });
  const text = h("input#sb-text", { placeholder: "a text", "aria-label": "text" });
  const sendText = h("button.primary#sb-send-text", { type: "submit" }, "Send text");
  const file = h("input#sb-image", { type: "file", accept: "image/jpeg,image/png,image/webp", "aria-label": "image" });
  const caption = h("input#sb-caption", { placeholder: "caption (optional)", "aria-label": "caption" });
  const sendImage = h("button#sb-send-image", { type: "submit" }, "Send image");
  const result = h("p.muted#sb-result", { role: "status" });
  const textForm = h("form.stack", text, sendText);
  const imageForm = h("form.stack", file, caption, sendImage);
  textForm.addEventListener(
    "submit",
    busy(sendText, async () => {
      const d = await query(`mutation($id: ID!, $from: String!, $text: String!) { sandboxSendText(sessionId: $id, from: $from, text: $text) }`, {
        id,
        from: from.value.trim(),
        text: text.value,
      });
      replace(result, "Sent text ", h("code", d.sandboxSendText), ".");
      text.value = "";
    })
  );
  imageForm.addEventListener(
    "submit",
    busy(sendImage, async () => {
      if (!file.files.length) throw new GraphQLError("choose an image first", "BAD_USER_INPUT");
      const source = await readDataURL(file.files[0]);
      const d = await query(
        `mutation($id: ID!, $from: String!, $src: String!, $c: String) { sandboxSendImage(sessionId: $id, from: $from, source: $src, caption: $c) }`,
        { id, from: from.value.trim(), src: source, c: caption.value || null }
      );
      replace(result, "Sent image ", h("code", d.sandboxSendImage), ".");
      caption.value = "";
    })
  );
  return h(
    "aside.card.sandbox#sandbox-panel",
    h("h2", "Sandbox: act as a contact"),
    h("p.muted", "The simulated network delivers these to the session as a contact's phone would; watch them arrive in the stream."),
    h("label", "Contact's number ", from),
    textForm,
    imageForm,
    result
  );
}

function readDataURL(f) {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(r.result);
    r.onerror = () => reject(new GraphQLError("could not read " + f.name, "BAD_USER_INPUT"));
    r.readAsDataURL(f);
  });
}
