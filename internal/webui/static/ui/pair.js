// The pairing page: starts pairing, shows the QR code and redraws it each
// time WhatsApp rotates it (about every 20 s), offers a pairing code by
// phone number instead, walks the passkey step when WhatsApp asks for one
// (passkey.js), and turns to CONNECTED by itself: all of it from one
// sessionStatus subscription.

import { query } from "./gql.js";
import { h, replace, time, errorText, busy, statusBadge, notice } from "./dom.js";
import { passkeyCard } from "./passkey.js";

const fields = "id name status statusReason jid phone pushName qrImage pairingCode connectedAt passkey { status publicKey code expiresAt }";

export function render(root, ctx) {
  const [id] = ctx.params;
  const sid = encodeURIComponent(id);
  const title = h("h1", "Pair a session");
  const status = h("div#pair-status");
  const body = h("div.pair-body");
  const phone = h("input#pair-phone", {
    inputMode: "tel",
    placeholder: "number with country code",
    pattern: "\\+?[0-9 ]{7,20}",
    "aria-label": "phone number",
  });
  const codeButton = h("button#pair-phone-submit", { type: "submit" }, "Get a pairing code");
  const code = h("div#pairing-code.code", { "aria-live": "polite" });
  const byPhone = h(
    "form.card.by-phone",
    h("h2", "Or pair by phone number"),
    h("p.muted", "On the phone: Linked devices → Link a device → Link with phone number instead, then enter the code shown here."),
    h("div.inline", phone, codeButton),
    code
  );
  byPhone.addEventListener(
    "submit",
    busy(codeButton, async () => {
      const d = await query(`mutation($id: ID!, $n: String!) { pairPhone(sessionId: $id, number: $n) }`, {
        id,
        n: phone.value.replace(/[^0-9]/g, ""),
      });
      replace(code, d.pairPhone);
    })
  );
  // In sandbox mode no real phone can scan the code: a simulated one can.
  let simulated = null;
  let simPhone = null;
  if (ctx.viewer.sandbox) {
    simPhone = h("input#sb-link-phone", { value: "4915550123456", inputMode: "tel", "aria-label": "simulated phone's number" });
    const scan = h("button.primary#sb-link", { type: "submit" }, "Scan with this phone");
    simulated = h(
      "form.card.by-phone",
      h("h2", "Sandbox: a simulated phone"),
      h("p.muted", "Any number of 7 to 15 digits is an account of the simulated network; its phone scans the code shown here."),
      h("div.inline", simPhone, scan)
    );
    simulated.addEventListener(
      "submit",
      busy(scan, async () => {
        await query(`mutation($id: ID!, $p: String!) { sandboxLinkDevice(sessionId: $id, phone: $p) { id } }`, {
          id,
          p: simPhone.value.replace(/[^0-9]/g, ""),
        });
      })
    );
  }
  const again = h("button.primary#pair-start", { type: "button" }, "Start pairing");
  again.addEventListener("click", busy(again, connect));
  root.appendChild(h("section.pair", title, status, body));

  let started = false;
  let qrCount = 0;
  let lastQR = "";
  let lastStep = "";
  async function connect() {
    await query(`mutation($id: ID!) { connectSession(id: $id) { id } }`, { id });
  }

  function draw(s) {
    replace(title, "Pair ", s.name);
    replace(status, statusBadge(s.status), s.statusReason ? h("span.muted", " " + s.statusReason) : null);
    if (s.status === "CONNECTED") {
      replace(
        body,
        h(
          "div.card.connected#pair-connected",
          h("h2", "Connected"),
          h("p", "Linked to ", h("strong", s.phone ? "+" + s.phone : s.jid), s.pushName ? ` (${s.pushName})` : "", " since ", time(s.connectedAt), "."),
          h("p", h("a.button.primary", { href: `#/sessions/${sid}/events` }, "Watch its events"), " ",
            h("a.button", { href: `#/sessions/${sid}/webhooks` }, "Add a webhook"))
        )
      );
      return;
    }
    if (s.status === "PAIRING" && s.passkey) {
      // Drawn again only when the step changes: an answer being pasted
      // stays.
      const key = JSON.stringify(s.passkey);
      if (key !== lastStep || !body.querySelector("#passkey")) {
        lastStep = key;
        const phoneOf = simPhone ? () => simPhone.value.replace(/[^0-9]/g, "") : null;
        replace(body, passkeyCard(id, s.passkey, phoneOf));
      }
      return;
    }
    lastStep = "";
    if (s.status === "PAIRING" && s.qrImage) {
      if (s.qrImage !== lastQR) {
        lastQR = s.qrImage;
        qrCount++;
      }
      const img = body.querySelector("#qr");
      if (img) {
        // Redraw in place: the phone's camera keeps its aim.
        img.src = s.qrImage;
        img.dataset.n = String(qrCount);
        body.querySelector("#qr-note").textContent = `Code ${qrCount}, shown ${new Date().toLocaleTimeString()}; WhatsApp replaces it every 20 seconds or so.`;
      } else {
        replace(
          body,
          h(
            "div.card.qr-card",
            h("p", "On the phone: WhatsApp → Settings → Linked devices → Link a device, then point it at this code."),
            h("img#qr", { src: s.qrImage, alt: "QR code to scan with WhatsApp", "data-n": String(qrCount) }),
            h("p.muted#qr-note", `Code ${qrCount}, shown ${new Date().toLocaleTimeString()}; WhatsApp replaces it every 20 seconds or so.`)
          ),
          h("div.pair-side", byPhone, simulated)
        );
      }
      if (s.pairingCode) replace(code, s.pairingCode);
      return;
    }
    if (s.status === "CONNECTING" || s.status === "PAIRING") {
      replace(body, h("p.muted", "Waiting for WhatsApp…"), s.pairingCode ? byPhone : null);
      if (s.pairingCode) replace(code, s.pairingCode);
      return;
    }
    // DISCONNECTED or LOGGED_OUT: pairing has not started, or it ended
    // (nobody scanned before the codes ran out).
    replace(body, h("p", s.jid && s.status === "DISCONNECTED" ? "The session is linked and disconnected." : "Pairing is not running."), again);
    if (!started) {
      started = true;
      connect().catch((e) => notice(errorText(e), "error"));
    }
  }

  return ctx.live.subscribe(`subscription($id: ID!) { sessionStatus(sessionId: $id) { ${fields} } }`, () => ({ id }), {
    next: (d) => draw(d.sessionStatus),
    error: (e) => replace(body, h("p.error", errorText(e))),
    complete: () => replace(body, h("p.error", "The session was deleted.")),
  });
}
