// Building the page. Everything a person or a contact wrote (message texts,
// push names, webhook URLs, error messages) enters the page as text nodes
// through h, never as markup: no string is ever parsed as HTML in the
// dashboard, so a text such as <img src=x onerror=…> shows as itself.

// h makes an element: h("button.primary#go", {onclick: f}, "Go").
// Attributes starting with "on" are listeners; others are properties
// (className, value, disabled, …) or, with a "-" in their name
// (data-…, aria-…), attributes. Children are nodes or strings, nested
// arrays allowed; null and false are skipped.
export function h(spec, attrs = {}, ...children) {
  const m = /^([a-z0-9]+)((?:[.#][\w-]+)*)$/.exec(spec);
  if (!m) throw new Error("bad element spec " + spec);
  const el = document.createElement(m[1]);
  for (const part of m[2].match(/[.#][\w-]+/g) || []) {
    if (part[0] === ".") el.classList.add(part.slice(1));
    else el.id = part.slice(1);
  }
  if (attrs instanceof Node || typeof attrs === "string" || Array.isArray(attrs)) {
    children.unshift(attrs);
    attrs = {};
  }
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k.includes("-")) el.setAttribute(k, v === true ? "" : String(v));
    else el[k] = v;
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

// replace empties el and fills it with children.
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// time shows an RFC 3339 time in the reader's locale.
export function time(t) {
  if (!t) return "";
  const d = new Date(t);
  return isNaN(d) ? String(t) : d.toLocaleString();
}

// errorText is what a failed call shows: the server's message, which names
// the field and the rule, with its code.
export function errorText(e) {
  return e && e.code ? `${e.message} (${e.code})` : String((e && e.message) || e);
}

// notice shows a message in the page's notice area for a while.
export function notice(text, kind = "info") {
  const area = document.getElementById("notices");
  const n = h("div.notice." + kind, { role: kind === "error" ? "alert" : "status" }, text);
  area.appendChild(n);
  setTimeout(() => n.remove(), kind === "error" ? 10000 : 5000);
}

// armedAt is when each confirm button of the page, by its key, was armed:
// a row drawn again by a live update keeps the person's first click.
const armedAt = new Map();
const armedFor = 4000;

// disarmAll forgets every armed button: a new page starts unarmed.
export function disarmAll() {
  armedAt.clear();
}

// confirmButton is a button that acts on a second click within four
// seconds: a safe way to ask before deleting that needs no dialog. key
// names what it acts on, so that a button drawn again in its place stays
// armed.
export function confirmButton(label, confirmLabel, action, cls = "", key = "") {
  const b = h("button" + cls, { type: "button", "data-action": label.toLowerCase() }, label);
  let timer = 0;
  const disarm = () => {
    clearTimeout(timer);
    timer = 0;
    if (key) armedAt.delete(key);
    b.textContent = label;
    b.classList.remove("armed");
  };
  const arm = (ms) => {
    b.textContent = confirmLabel;
    b.classList.add("armed");
    timer = setTimeout(disarm, ms);
  };
  const left = key && armedAt.has(key) ? armedFor - (Date.now() - armedAt.get(key)) : 0;
  if (left > 0) arm(left);
  b.addEventListener("click", async () => {
    if (!timer) {
      if (key) armedAt.set(key, Date.now());
      arm(armedFor);
      return;
    }
    disarm();
    await action();
  });
  return b;
}

// busy disables a button while its action runs and reports its error.
export function busy(button, action) {
  return async (ev) => {
    if (ev) ev.preventDefault();
    button.disabled = true;
    try {
      await action();
    } catch (e) {
      notice(errorText(e), "error");
    } finally {
      button.disabled = false;
    }
  };
}

// statusBadge shows a session's status.
export function statusBadge(status) {
  return h("span.badge.status-" + String(status).toLowerCase(), { "data-status": status }, status);
}
