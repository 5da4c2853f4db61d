// The inbox: a session's chats (most recent first, unread counts, the last
// message) and one chat's messages (newest at the bottom, older ones read
// a page at a time as the person scrolls up), both answered from the
// gateway's store (the chats and messages queries) and kept current by the
// events subscription: a message in or out, a reaction or an edit redraws
// what it touches without a reload. A chat is read as it is shown (markRead),
// and answered from a text box (sendText) or with a reaction.

import { query, token, showSessionName } from "./gql.js";
import { h, replace, time, errorText, busy, notice } from "./dom.js";

const chatsPage = 50;
const messagesPage = 30;

// What moves a chat or a message: the stream of these kinds is enough to
// keep both pages current.
const liveKinds = [
  "INBOUND_MESSAGE_UPSERT",
  "OUTBOUND_MESSAGE_UPSERT",
  "MESSAGES_UPDATE",
  "MESSAGES_REACTION",
  "MESSAGES_DELETE",
  "MESSAGE_RECEIPT_UPDATE",
  "CHATS_UPDATE",
  "CHATS_UPSERT",
];

// The emojis the reaction picker offers (any emoji is allowed by the API).
const reactions = ["👍", "❤️", "😂", "😮", "😢", "🙏"];

const messageFields = "id chat sender fromMe type text caption status timestamp mediaUrl viewOnce reactions { emoji sender fromMe }";
const chatFields = `jid name isGroup unreadCount lastMessageAt archived pinned mutedUntil lastMessage { ${messageFields} }`;

// live calls changed (at most every 250 ms) while the session's events of
// liveKinds come and the page is shown; it returns the stop.
function live(ctx, id, changed) {
  return ctx.live.changes(id, liveKinds, changed, (e) => notice("Live updates stopped: " + errorText(e), "error"));
}

// preview is a message in one line: its text, or what it is.
function preview(m) {
  if (!m) return "";
  const body = m.text || m.caption || "";
  if (m.type === "text") return body;
  return `[${m.type}]` + (body ? " " + body : "");
}

// render is the chats page (#/sessions/ID/chats), or a chat's
// (#/sessions/ID/chats/JID).
export function render(root, ctx) {
  const [id, chat] = ctx.params;
  if (chat) return renderChat(root, ctx, id, chat);
  const name = h("span", id);
  showSessionName(id, name);
  const rows = h("ul#chat-list.chats");
  const empty = h("p.muted#chats-empty", { hidden: true }, "No chat stored yet: they show here as messages come and go.");
  const more = h("button#chats-more", { type: "button", hidden: true }, "Show more");
  root.appendChild(h("section", h("h1", "Chats of ", name), rows, empty, more));
  const byJid = new Map(); // chat → its row
  let endCursor = null; // where "Show more" goes on
  let stopped = false;

  async function load(after) {
    const d = await query(
      `query($id: ID!, $first: Int, $after: String) { chats(sessionId: $id, first: $first, after: $after) {
         edges { node { ${chatFields} } } pageInfo { hasNextPage endCursor } } }`,
      { id, first: chatsPage, after }
    );
    return d.chats;
  }

  // top reads the most recent page again (on open, and when the stream
  // says something moved): its chats go to the top in its order, each
  // replacing its own row wherever that was.
  async function top() {
    const p = await load(null);
    if (stopped) return;
    const fresh = p.edges.map((e) => row(e.node));
    for (const r of fresh) {
      const old = byJid.get(r.dataset.jid);
      if (old) old.remove();
      byJid.set(r.dataset.jid, r);
    }
    rows.prepend(...fresh);
    if (endCursor === null) {
      endCursor = p.pageInfo.endCursor;
      more.hidden = !p.pageInfo.hasNextPage;
    }
    empty.hidden = byJid.size > 0;
  }

  function row(c) {
    const href = `#/sessions/${encodeURIComponent(id)}/chats/${encodeURIComponent(c.jid)}`;
    return h(
      "li.chat",
      { "data-jid": c.jid, "data-unread": c.unreadCount },
      h(
        "a.chat-link",
        { href },
        h("span.chat-name", c.name || c.jid),
        c.unreadCount > 0 ? h("span.badge.unread", { "aria-label": `${c.unreadCount} unread` }, String(c.unreadCount)) : null,
        c.pinned ? h("span.muted", " · pinned") : null,
        c.archived ? h("span.muted", " · archived") : null,
        " ",
        h("time.muted", time(c.lastMessageAt)),
        h("div.chat-last.muted", (c.lastMessage && c.lastMessage.fromMe ? "You: " : "") + preview(c.lastMessage))
      )
    );
  }

  more.addEventListener(
    "click",
    busy(more, async () => {
      const p = await load(endCursor);
      for (const e of p.edges) {
        if (byJid.has(e.node.jid)) continue;
        const r = row(e.node);
        byJid.set(e.node.jid, r);
        rows.appendChild(r);
      }
      endCursor = p.pageInfo.endCursor || endCursor;
      more.hidden = !p.pageInfo.hasNextPage;
    })
  );
  top().catch((e) => replace(rows, h("li.error", errorText(e))));
  const stop = live(ctx, id, () => top().catch((e) => notice(errorText(e), "error")));
  return () => {
    stopped = true;
    stop();
  };
}

// renderChat is one chat: #/sessions/ID/chats/JID.
function renderChat(root, ctx, id, jid) {
  const title = h("h1", "Chat");
  const back = h("a", { href: `#/sessions/${encodeURIComponent(id)}/chats` }, "← Chats");
  const list = h("ol#message-list.messages", { "aria-live": "polite" });
  const scroller = h("div#message-scroll.message-scroll", h("p.muted#messages-start", { hidden: true }, "The start of the stored history."), list);
  const text = h("input#compose-text", { placeholder: "Write a message", autocomplete: "off", "aria-label": "message text", maxLength: 4096 });
  const send = h("button.primary#compose-send", { type: "submit" }, "Send");
  const form = h("form.compose#compose", { noValidate: true }, text, send);
  root.appendChild(h("section.chat-page", back, title, scroller, form));
  const byId = new Map(); // message id → its row
  let oldestCursor = null;
  let hasOlder = true;
  let loadingOlder = false;
  let stopped = false;

  query(`query($id: ID!, $jid: String!) { chat(sessionId: $id, jid: $jid) { jid name } }`, { id, jid })
    .then((d) => replace(title, (d.chat && d.chat.name) || jid))
    .catch(() => replace(title, jid));

  async function page(before, first) {
    const d = await query(
      `query($id: ID!, $jid: String!, $first: Int, $before: String) {
         messages(sessionId: $id, chat: $jid, first: $first, before: $before) {
           edges { cursor node { ${messageFields} } } pageInfo { hasNextPage endCursor } } }`,
      { id, jid, first, before }
    );
    return d.messages;
  }

  // newest reads the newest page: rows not shown yet go to the bottom,
  // rows shown are redrawn (reactions, an edit, a revoke).
  async function newest() {
    const p = await page(null, messagesPage);
    if (stopped) return;
    const atBottom = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 40;
    let added = false;
    const nodes = p.edges.map((e) => e.node).reverse(); // oldest first
    for (const m of nodes) {
      const old = byId.get(m.id);
      if (old) {
        const fresh = row(m);
        old.replaceWith(fresh);
        byId.set(m.id, fresh);
        continue;
      }
      const r = row(m);
      byId.set(m.id, r);
      list.appendChild(r);
      added = true;
    }
    if (oldestCursor === null) {
      oldestCursor = p.pageInfo.endCursor;
      hasOlder = p.pageInfo.hasNextPage;
      document.getElementById("messages-start").hidden = hasOlder;
    }
    if (added && (atBottom || list.children.length === nodes.length)) scroller.scrollTop = scroller.scrollHeight;
    if (added) markRead();
  }

  // older reads the page before the oldest shown, keeping what the person
  // looks at in place.
  async function older() {
    if (!hasOlder || loadingOlder || oldestCursor === null) return;
    loadingOlder = true;
    try {
      const p = await page(oldestCursor, messagesPage);
      if (stopped) return;
      const height = scroller.scrollHeight;
      for (const e of p.edges) {
        if (byId.has(e.node.id)) continue;
        const r = row(e.node);
        byId.set(e.node.id, r);
        list.prepend(r);
      }
      scroller.scrollTop += scroller.scrollHeight - height;
      oldestCursor = p.pageInfo.endCursor || oldestCursor;
      hasOlder = p.pageInfo.hasNextPage;
      document.getElementById("messages-start").hidden = hasOlder;
    } catch (e) {
      notice(errorText(e), "error");
    } finally {
      loadingOlder = false;
    }
  }
  scroller.addEventListener("scroll", () => {
    if (scroller.scrollTop < 60) older();
  });

  function markRead() {
    query(`mutation($id: ID!, $jid: String!) { markRead(sessionId: $id, chat: $jid) }`, { id, jid }).catch((e) =>
      notice("Marking the chat read: " + errorText(e), "error")
    );
  }

  function row(m) {
    const r = h(
      "li.message" + (m.fromMe ? ".mine" : ".theirs"),
      { "data-id": m.id, "data-type": m.type, "data-status": m.status },
      m.fromMe ? null : h("div.sender.muted", m.sender),
      body(m),
      h("div.meta.muted", h("time", time(m.timestamp)), m.fromMe ? " · " + m.status : null),
      m.reactions.length ? h("div.reactions", m.reactions.map((x) => h("span.reaction", { title: x.fromMe ? "you" : x.sender }, x.emoji))) : null,
      picker(m)
    );
    return r;
  }

  function body(m) {
    if (m.status === "revoked") return h("p.muted", "This message was deleted.");
    const parts = [];
    if ((m.type === "image" || m.type === "sticker") && m.mediaUrl && !m.viewOnce) {
      const img = h("img.media", { alt: m.caption || m.type, "data-media": m.mediaUrl });
      loadImage(img, m.mediaUrl);
      parts.push(img);
    } else if (m.type !== "text") {
      parts.push(h("p.muted", `[${m.type}]`));
    }
    const words = m.text || m.caption;
    if (words) parts.push(h("p.text", words));
    return parts;
  }

  // picker offers the reactions; the person's own shows pressed.
  function picker(m) {
    const mine = (m.reactions.find((x) => x.fromMe) || {}).emoji;
    return h(
      "div.picker",
      reactions.map((e) => {
        const b = h("button.react", { type: "button", "aria-pressed": String(e === mine), title: "React with " + e }, e);
        b.addEventListener(
          "click",
          busy(b, async () => {
            // Pressing one's reaction again takes it away (an empty emoji).
            await query(`mutation($id: ID!, $m: ID!, $e: String!) { sendReaction(sessionId: $id, messageId: $m, emoji: $e) { messageId } }`, {
              id,
              m: m.id,
              e: e === mine ? "" : e,
            });
            await newest();
          })
        );
        return b;
      })
    );
  }

  form.addEventListener(
    "submit",
    busy(send, async () => {
      const words = text.value.trim();
      if (!words) {
        text.focus();
        return;
      }
      await query(`mutation($id: ID!, $in: SendTextInput!) { sendText(sessionId: $id, input: $in) { messageId } }`, {
        id,
        in: { number: jid, text: words },
      });
      text.value = "";
      markRead();
      await newest();
      scroller.scrollTop = scroller.scrollHeight;
      text.focus();
    })
  );

  newest()
    .then(() => {
      scroller.scrollTop = scroller.scrollHeight;
      markRead();
    })
    .catch((e) => replace(list, h("li.error", errorText(e))));
  const stop = live(ctx, id, () => newest().catch((e) => notice(errorText(e), "error")));
  return () => {
    stopped = true;
    stop();
  };
}

// loadImage shows a media message's picture: the media route needs the
// token in a header, which an <img> cannot send, so it is fetched here and
// shown as a data: URL (the page's policy allows data: images, not blob:).
async function loadImage(img, url) {
  try {
    const r = await fetch(url, { headers: { Authorization: "Bearer " + token.get() } });
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
    const blob = await r.blob();
    const data = await new Promise((ok, fail) => {
      const reader = new FileReader();
      reader.onload = () => ok(reader.result);
      reader.onerror = () => fail(reader.error);
      reader.readAsDataURL(blob);
    });
    img.src = data;
  } catch (e) {
    img.replaceWith(h("p.muted", "The picture could not be loaded: " + errorText(e)));
  }
}
