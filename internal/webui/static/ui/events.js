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
// Everything in it comes from the event's data, which a contact chose (an
// emoji, a poll's options, an edit's text): it is only ever text.
function summary(ev) {
  const d = ev.data && typeof ev.data === "object" && !Array.isArray(ev.data) ? ev.data : {};
  const special = summaries.get(kindName(ev.kind));
  const line = special && special(d);
  if (line) return line;
  if (d.text !== undefined || d.caption !== undefined || (d.type && d.chat)) {
    const who = d.fromMe ? "me" : d.pushName || (d.senderPhone ? "+" + d.senderPhone : d.sender || "");
    const what = d.type === "poll" ? pollText(d) : d.text || (d.type && d.type !== "text" ? `[${d.type}]` + (d.caption ? " " + d.caption : "") : d.caption || "");
    if (what || who) return `${who}: ${what}`;
  }
  if (d.status) return [d.status, d.reason, d.id].filter(Boolean).join(" · ");
  if (d.pushName || d.name) return [d.pushName || d.name, d.phone ? "+" + d.phone : d.id].filter(Boolean).join(" · ");
  const json = JSON.stringify(d);
  return json.length > 160 ? json.slice(0, 157) + "…" : json;
}

// kindName is the kind as the schema spells it (MESSAGES_REACTION), whether
// given so or as events.md does (messages.reaction).
function kindName(kind) {
  return String(kind || "")
    .toUpperCase()
    .replace(/[.-]/g, "_");
}

// The kinds whose data a generic line would not say well; each gives ""
// when the data is not of the shape it knows, and the generic line is shown.
const summaries = new Map([
  ["MESSAGES_REACTION", reactionLine],
  ["MESSAGES_UPDATE", updateLine],
  ["MESSAGES_DELETE", deleteLine],
  ["PRESENCE_UPDATE", presenceLine],
  ["CALL", callLine],
]);

// str is v when it is a non-empty string, else "".
function str(v) {
  return typeof v === "string" ? v : "";
}

// person names someone by number (+15550001111) when known, else by JID:
// a phone JID gives its number, a LID stays as it is.
function person(jid, phone) {
  if (str(phone)) return "+" + phone;
  const m = /^(\d+)(?::\d+)?@s\.whatsapp\.net$/.exec(str(jid));
  return m ? "+" + m[1] : str(jid);
}

function quoted(names) {
  return names.map((n) => `"${n}"`).join(", ");
}

// pollText is a poll's question and options (an upsert of type poll).
function pollText(d) {
  const options = Array.isArray(d.pollOptions) ? d.pollOptions.filter((o) => typeof o === "string") : [];
  return ["[poll]", str(d.text) || str(d.caption), options.length ? "· " + quoted(options) : ""].filter(Boolean).join(" ");
}

// messages.reaction: "+15550001111 reacted 👍 to 3EB0…"; an empty emoji
// takes the reaction back.
function reactionLine(d) {
  const r = d.reaction && typeof d.reaction === "object" ? d.reaction : {};
  const target = str(d.id) || str(r.key && r.key.id);
  const who = d.fromMe ? "me" : person(d.sender, d.senderPhone) || "someone";
  const emoji = str(r.text);
  return emoji ? `${who} reacted ${emoji} to ${target}` : `${who} removed their reaction to ${target}`;
}

// messages.update: a vote, an edit, a revoke, a receipt or a send's end.
function updateLine(d) {
  const id = str(d.id);
  const status = str(d.status);
  const by = person(d.sender);
  switch (status) {
    case "voted":
      return voteLine(d);
    case "edited": {
      const text = str(d.text) || str(d.caption);
      return `${by ? by + " " : ""}edited ${id}: ${text}`;
    }
    case "revoked":
      return `${by || "someone"} deleted ${id} for everyone`;
    case "revoke-refused":
    case "edit-refused":
      return [`${status === "revoke-refused" ? "refused a revoke" : "refused an edit"} of ${id}`, by ? "by " + by : "", str(d.error)].filter(Boolean).join(" · ");
    default:
      return [status, str(d.error), id].filter(Boolean).join(" · ");
  }
}

// voteLine: "+15550001111 voted "Red", "Blue" in 3EB0…". The names are
// missing when the session has not seen the poll (only hashes then); an
// empty selection takes the vote back.
function voteLine(d) {
  const v = (d.vote && typeof d.vote === "object" && d.vote) || {};
  const poll = str(v.pollId) || str(d.id);
  const who = person(v.voter, v.voterPhone) || "someone";
  const names = Array.isArray(v.selectedOptions) ? v.selectedOptions.filter((o) => typeof o === "string") : null;
  const hashes = Array.isArray(v.selectedHashes) ? v.selectedHashes : null;
  if (names && names.length) return `${who} voted ${quoted(names)} in ${poll}`;
  if ((names && !hashes) || (hashes && !hashes.length)) return `${who} withdrew their vote in ${poll}`;
  if (hashes) return `${who} voted ${hashes.length} option${hashes.length === 1 ? "" : "s"} (names not known) in ${poll}`;
  return [`a vote in ${poll} could not be read`, str(d.error)].filter(Boolean).join(" · ");
}

// messages.delete: deleted on this account's devices only.
function deleteLine(d) {
  if (d.all) return `cleared the chat ${str(d.chat)}`;
  if (!str(d.id)) return "";
  return `deleted ${d.id} for me${d.deleteMedia ? " (and its media)" : ""}`;
}

// presence.update: "+15550001111 is typing…", "… is online".
function presenceLine(d) {
  const who = person(d.participant, d.participantPhone) || person(d.chat) || "someone";
  const chat = str(d.chat);
  const where = chat.endsWith("@g.us") ? " in " + chat : "";
  switch (str(d.presence)) {
    case "composing":
      return str(d.media) === "audio" ? `${who} is recording audio…${where}` : `${who} is typing…${where}`;
    case "recording":
      return `${who} is recording audio…${where}`;
    case "paused":
      return `${who} stopped typing${where}`;
    case "available":
      return `${who} is online`;
    case "unavailable":
      return `${who} is offline` + (str(d.lastSeen) ? " · last seen " + time(d.lastSeen) : "");
    default:
      return "";
  }
}

// call: "video call from +15550001111 · reject".
function callLine(d) {
  if (!str(d.status)) return "";
  const what = (d.isGroup ? "group " : "") + (d.isVideo === true ? "video call" : d.isVideo === false ? "voice call" : "call");
  const from = person(d.from, d.fromPhone);
  return [`${what}${from ? " from " + from : ""}`, d.status, str(d.reason)].filter(Boolean).join(" · ");
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
