// What the dashboard says about an event in one line: who wrote what, or
// what changed. The events page shows it for each event, the delivery log
// for what each delivery carried. Everything in it comes from the event's
// data, which a contact chose (a text, an emoji, a poll's options): it is
// only ever text, put in the page by dom.js's h.

import { time } from "./dom.js";

// summary is one line about the event ev ({kind, data}, kind as the
// schema spells it).
export function summary(ev) {
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
  ["WEBHOOK_TEST", (d) => (str(d.message) ? "test event: " + d.message : "")],
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

// short is the line cut to at most n characters, the last an ellipsis
// when cut: where a page lists many events, each takes a line.
export function short(line, n = 120) {
  const chars = [...line];
  return chars.length > n ? chars.slice(0, n - 1).join("") + "…" : line;
}
