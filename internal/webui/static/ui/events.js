// A session's events: the stored ones, newest first, a page at a time
// (the events query, newestFirst), then the live ones on top as they come
// (the events subscription, resuming after the newest shown, so that none
// is lost or shown twice); filtered by kind, paused and resumed, and picked
// up again after the last event shown when the socket drops (the server
// replays what was stored in between). In sandbox mode a panel acts as a
// contact writing to the session.

import { query, GraphQLError, eventKinds, showSessionName } from "./gql.js";
import { h, replace, time, errorText, busy, notice } from "./dom.js";
import { summary } from "./summary.js";

// A page of stored events, read when the page opens and at each "Show
// older".
const pageSize = 50;

// The live events keep at most this many rows, or as many as the person
// asked for with "Show older"; older ones leave the page (they stay in the
// stored log: "Show older" reads them again).
const keep = 500;

const eventFields = "id seq kind occurredAt data";

export function render(root, ctx) {
  const [id] = ctx.params;
  const list = h("ol#event-list.events", { "aria-live": "polite" });
  const empty = h("p.muted#events-empty", { hidden: true }, "No event stored yet: they show here as they happen.");
  const older = h("button#events-older", { type: "button", hidden: true }, "Show older");
  const state = h("span#stream-state.muted");
  const pauseButton = h("button#stream-pause", { type: "button" }, "Pause");
  const reconnectButton = h("button#stream-reconnect", { type: "button", title: "Close the live socket and open it again, resuming after the last event shown" }, "Reconnect");
  const kindsBox = h("div.kinds#kinds");
  const filter = h("details.filter", h("summary#kinds-summary", "Kinds: all"), kindsBox);
  let names = new Map(); // kind → its name, as webhooks give it
  let lastId = null; // the newest event shown or passed over: the stream resumes after it
  let lastSeq = 0;
  let room = keep;
  let paused = false;
  let kinds = [];
  let unsubscribe = null;
  let retry = 0;
  let retryTimer = 0;
  let stopped = false;
  let generation = 0; // each load of the stored events; an older one draws nothing

  const sessionName = h("span", id);
  root.appendChild(
    h(
      "section.events-page",
      h("h1", "Events of ", sessionName),
      h("div.toolbar", pauseButton, reconnectButton, filter, state),
      h("div.columns", h("div.stream", list, empty, older), ctx.viewer.sandbox ? sandboxPanel(id) : null)
    )
  );
  showSessionName(id, sessionName);
  loadKinds(kindsBox, (kindsRead) => {
    names = new Map(kindsRead.map((k) => [k.kind, k.name]));
  }, (selected) => {
    kinds = selected;
    document.getElementById("kinds-summary").textContent = "Kinds: " + (kinds.length ? kinds.length + " selected" : "all");
    load();
  });

  function showState() {
    const after = lastId ? ` after ${lastId}` : "";
    state.textContent = paused ? `paused${after}` : `following${after}`;
    state.dataset.state = paused ? "paused" : "following";
  }

  // load shows the newest stored events of the kinds chosen, then follows
  // the live ones. With a filter, the newest event of any kind is read
  // first: the stream resumes after it or after the newest shown, whichever
  // is newer, so an event of the kinds stored while the page was read is
  // either on it or replayed.
  async function load() {
    const mine = ++generation;
    stopStream();
    state.textContent = "reading the stored events…";
    delete state.dataset.state;
    let anchor = null;
    let page;
    try {
      if (kinds.length) anchor = (await storedPage(null, [], 1)).edges.map((e) => e.node)[0] || null;
      page = await storedPage(null, kinds, pageSize);
    } catch (e) {
      if (mine !== generation) return;
      state.textContent = "the stored events could not be read: " + errorText(e);
      notice(errorText(e), "error");
      return;
    }
    if (mine !== generation) return;
    // The rows shown until now stay until the new ones are there.
    const shown = page.edges.map((e) => e.node);
    replace(list, shown.map(row));
    room = keep;
    const newest = [shown[0], anchor].filter(Boolean).sort((a, b) => b.seq - a.seq)[0];
    lastId = newest ? newest.id : null;
    lastSeq = newest ? newest.seq : 0;
    older.hidden = !page.pageInfo.hasNextPage;
    empty.hidden = shown.length > 0;
    if (paused) showState();
    else start();
  }

  // storedPage reads a page of the stored events, newest first, below the
  // event after (null: from the newest).
  async function storedPage(after, only, first) {
    const d = await query(
      `query($id: ID!, $kinds: [EventKind!], $after: String, $first: Int) {
         events(sessionId: $id, kinds: $kinds, after: $after, first: $first, newestFirst: true) {
           edges { node { ${eventFields} } } pageInfo { hasNextPage } } }`,
      { id, kinds: only.length ? only : null, after, first }
    );
    return d.events;
  }

  older.addEventListener(
    "click",
    busy(older, async () => {
      const mine = generation;
      const last = list.lastElementChild;
      const page = await storedPage(last ? last.dataset.id : null, kinds, pageSize);
      if (mine !== generation) return;
      for (const e of page.edges) list.appendChild(row(e.node));
      room = Math.max(keep, list.children.length);
      older.hidden = !page.pageInfo.hasNextPage;
    })
  );

  function start() {
    stopStream();
    unsubscribe = ctx.live.subscribe(
      `subscription($id: ID!, $kinds: [EventKind!], $after: String) {
         events(sessionId: $id, kinds: $kinds, after: $after) { ${eventFields} } }`,
      () => ({ id, kinds: kinds.length ? kinds : null, after: lastId }),
      { next: (d) => add(d.events), error: failed, complete: ended }
    );
    showState();
  }

  function stopStream() {
    if (unsubscribe) unsubscribe();
    unsubscribe = null;
    clearTimeout(retryTimer);
  }

  function add(ev) {
    if (ev.seq <= lastSeq) return; // shown already
    lastSeq = ev.seq;
    lastId = ev.id;
    retry = 0;
    list.prepend(row(ev));
    empty.hidden = true;
    while (list.children.length > room) {
      list.lastElementChild.remove();
      older.hidden = false;
    }
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
      stopStream();
      showState();
    } else {
      start();
    }
  });
  reconnectButton.addEventListener("click", () => ctx.live.drop());

  // row shows an event: its seq, its kind by name, when, its line, and
  // its data on request.
  function row(ev) {
    return h(
      "li.event",
      { "data-seq": ev.seq, "data-kind": ev.kind, "data-id": ev.id },
      h("div.event-head", h("span.seq", "#" + ev.seq), " ", h("span.kind", names.get(ev.kind) || ev.kind), " ", h("time.muted", time(ev.occurredAt))),
      h("div.event-summary", summary(ev)),
      h("details", h("summary", ev.id), h("pre.json", JSON.stringify(ev.data, null, 2)))
    );
  }

  return () => {
    stopped = true;
    generation++;
    stopStream();
  };
}

// loadKinds offers a checkbox per event kind, by its name, from the
// server's table of kinds; read gets the table, changed the kinds checked
// (none: every kind), first once the boxes are there.
async function loadKinds(box, read, changed) {
  let kinds;
  try {
    kinds = await eventKinds();
  } catch (e) {
    replace(box, h("p.error", errorText(e)));
    changed([]);
    return;
  }
  read(kinds);
  const boxes = kinds.map((k) => h("input", { type: "checkbox", value: k.kind, "data-kind": k.kind }));
  replace(
    box,
    h("p.muted", "None checked: every kind."),
    kinds.map((k, i) => h("label", boxes[i], " " + k.name))
  );
  box.addEventListener("change", () => changed(boxes.filter((b) => b.checked).map((b) => b.value)));
  changed([]);
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
