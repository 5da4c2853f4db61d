// The dashboard: asks for a token once, then routes on the URL's fragment
// (#/sessions/ID/pair …) to one page at a time. Each page's render returns
// the function that stops what it started (subscriptions, timers) when
// the person goes elsewhere.

import { query, token, onUnauthorized, Live } from "./gql.js";
import { h, replace, notice, errorText, disarmAll } from "./dom.js";
import * as sessions from "./sessions.js";
import * as pair from "./pair.js";
import * as events from "./events.js";
import * as webhooks from "./webhooks.js";
import * as deliveries from "./deliveries.js";
import * as inbox from "./inbox.js";
import * as groups from "./groups.js";

const routes = [
  [/^#\/sessions\/([^/]+)\/pair$/, pair],
  [/^#\/sessions\/([^/]+)\/events$/, events],
  [/^#\/sessions\/([^/]+)\/chats(?:\/([^/]+))?$/, inbox],
  [/^#\/sessions\/([^/]+)\/groups$/, groups],
  [/^#\/sessions\/([^/]+)\/webhooks$/, webhooks],
  [/^#\/sessions\/([^/]+)\/webhooks\/([^/]+)$/, deliveries],
  [/^#?\/?(?:sessions)?$/, sessions],
];

const main = document.getElementById("page");
const live = new Live();
let stop = () => {};
let viewer = null;

// A token refused once the dashboard is open (revoked, say) sends the
// person back to the token form; the form itself reports its own refusals.
onUnauthorized((why) => {
  if (!token.get() || !viewer) return;
  token.clear();
  viewer = null;
  notice("The token was refused: " + why + ". Paste a valid one.", "error");
  show();
});

live.onState((s) => {
  const el = document.getElementById("live-state");
  el.dataset.state = s;
  el.textContent = { live: "live", connecting: "connecting…", reconnecting: "reconnecting…", closed: "idle" }[s];
});
document.getElementById("forget").addEventListener("click", () => {
  token.clear();
  viewer = null;
  show();
});
window.addEventListener("hashchange", () => show());

// login asks for the token; it is checked with the viewer query before it
// is kept.
function login() {
  const input = h("input#token", {
    type: "password",
    autocomplete: "off",
    spellcheck: false,
    placeholder: "wgu_… or wgs_…",
    required: true,
    "aria-label": "API token",
  });
  const error = h("p.error#login-error", { role: "alert" });
  const button = h("button.primary#login-submit", { type: "submit" }, "Open the dashboard");
  const form = h(
    "form.card.login",
    h("h1", "wagraph"),
    h(
      "p",
      "Paste a user token (wgu_…) or a session token (wgs_…). It is kept in this tab only (sessionStorage) and sent in a header, never in a URL."
    ),
    h(
      "p.muted#token-help",
      "Where tokens come from: the admin token wagraph printed once, at its first start (or the WAGRAPH_ADMIN_TOKEN you set); " +
        "an admin's createUser returns a new user's token; createSession (here, once signed in) and createSessionToken return a session's."
    ),
    input,
    button,
    error
  );
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    button.disabled = true;
    token.set(input.value.trim());
    try {
      await loadViewer();
      show();
    } catch (e) {
      token.clear();
      replace(error, errorText(e));
    } finally {
      button.disabled = false;
    }
  });
  replace(main, form);
  input.focus();
}

async function loadViewer() {
  const d = await query(`{ viewer { user { id name admin } session { id } } sandboxMode }`);
  viewer = { ...d.viewer, sandbox: d.sandboxMode };
  document.getElementById("who").textContent = viewer.user.name + (viewer.user.admin ? " (admin)" : "");
}

async function show() {
  stop();
  stop = () => {};
  live.close();
  disarmAll();
  document.body.classList.toggle("signed-in", !!token.get());
  if (!token.get()) {
    document.getElementById("who").textContent = "";
    return login();
  }
  if (!viewer) {
    try {
      await loadViewer();
    } catch (e) {
      replace(main, h("p.error", errorText(e)));
      return;
    }
  }
  const hash = location.hash || "#/sessions";
  for (const [re, page] of routes) {
    const m = re.exec(hash);
    if (!m) continue;
    for (const a of document.querySelectorAll("nav a")) a.classList.toggle("current", hash.startsWith(a.getAttribute("href")));
    replace(main);
    const ctx = { live, viewer, params: m.slice(1).map((p) => (p === undefined ? undefined : decodeURIComponent(p))), show };
    try {
      stop = page.render(main, ctx) || (() => {});
    } catch (e) {
      replace(main, h("p.error", errorText(e)));
    }
    return;
  }
  replace(main, h("p", "No such page. ", h("a", { href: "#/sessions" }, "Sessions")));
}

show();
