// The passkey step of the pairing page. Since mid-2026 WhatsApp asks some
// accounts for their passkey when a device is linked: the page shows the
// challenge (WebAuthn request options, to copy as JSON to wherever the
// passkey is: no browser asserts for whatsapp.com from this origin), takes
// the answer pasted back (the PublicKeyCredential's toJSON()), then shows
// the code to compare with the phone's and the button that confirms it.

import { query } from "./gql.js";
import { h, busy, notice } from "./dom.js";

// passkeyCard draws the step of session id; simulatedPhone, in sandbox mode,
// returns the number whose simulated passkey may answer instead.
export function passkeyCard(id, step, simulatedPhone) {
  if (step.status === "AWAITING_CONFIRMATION") {
    const confirm = h("button.primary#passkey-confirm", { type: "button" }, "The codes match: link the device");
    confirm.addEventListener(
      "click",
      busy(confirm, () => query(`mutation($id: ID!) { confirmPasskey(sessionId: $id) { id } }`, { id }))
    );
    return h(
      "div.card.passkey#passkey",
      h("h2", "Compare the code"),
      h("p", "WhatsApp took the passkey. The phone shows a code: link only if it is this one."),
      h("div#passkey-code.code", { "aria-live": "polite" }, step.code || ""),
      h("p", confirm)
    );
  }
  const challenge = h("textarea#passkey-challenge", { readOnly: true, rows: 8, spellcheck: false, "aria-label": "the challenge, as JSON" });
  challenge.value = JSON.stringify(step.publicKey, null, 2);
  const copy = h("button#passkey-copy", { type: "button" }, "Copy the challenge");
  copy.addEventListener("click", () => {
    challenge.select();
    const copied = navigator.clipboard ? navigator.clipboard.writeText(challenge.value) : Promise.reject(new Error("no clipboard"));
    copied.then(
      () => notice("The challenge is on the clipboard."),
      () => notice("Selected: copy it with Ctrl+C (⌘C).")
    );
  });
  const answer = h("textarea#passkey-assertion", {
    rows: 6,
    spellcheck: false,
    placeholder: '{"id": "…", "rawId": "…", "type": "public-key", "response": {…}}',
    "aria-label": "the passkey's answer, as JSON",
  });
  const submit = h("button.primary#passkey-submit", { type: "submit" }, "Send the answer");
  const form = h("form#passkey-form", h("label", "The answer: the credential's toJSON(), pasted", answer), h("p", submit));
  form.addEventListener(
    "submit",
    busy(submit, async () => {
      let assertion;
      try {
        assertion = JSON.parse(answer.value);
      } catch {
        throw new Error("The answer is not JSON: paste the credential's toJSON().");
      }
      await query(`mutation($id: ID!, $a: JSON!) { submitPasskeyAssertion(sessionId: $id, assertion: $a) { id } }`, { id, a: assertion });
    })
  );
  let simulated = null;
  if (simulatedPhone) {
    const sim = h("button#sb-passkey", { type: "button" }, "Sandbox: answer with the simulated phone's passkey");
    sim.addEventListener(
      "click",
      busy(sim, async () => {
        const d = await query(`mutation($p: String!, $k: JSON!) { sandboxPasskeyAssertion(phone: $p, publicKey: $k) }`, {
          p: simulatedPhone(),
          k: step.publicKey,
        });
        answer.value = JSON.stringify(d.sandboxPasskeyAssertion, null, 2);
      })
    );
    simulated = h("p", sim);
  }
  return h(
    "div.card.passkey#passkey",
    h("h2", "WhatsApp asks for the account's passkey"),
    h(
      "p",
      "Answer this challenge where the account's passkey is (navigator.credentials.get with PublicKeyCredential.parseRequestOptionsFromJSON of it, for whatsapp.com), then paste the credential's toJSON() below. WhatsApp takes it until ",
      new Date(step.expiresAt).toLocaleTimeString(),
      "; a wrong or late answer starts over with a new QR code."
    ),
    challenge,
    h("p", copy),
    form,
    simulated
  );
}
