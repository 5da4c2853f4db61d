package restcompat

// passkeyRoutes: the passkey step of linking an account WhatsApp protects
// with a passkey.
func passkeyRoutes() []route {
	return []route{
		{
			method: "GET", path: "/session/{sessionId}/passkey", id: "passkey", tag: "sessions",
			summary:     "The passkey step of a pairing",
			description: "While PAIRING an account that WhatsApp protects with a passkey, once the phone scanned the QR code (or took the pairing code): the WebAuthn request options to answer with the account's passkey, then the confirmation code to compare with the phone's. 409 when the session is not in that step.",
			params:      []param{pSession},
			handling:    noBody((*Handler).getPasskey),
			status:      200, answer: "The passkey step.",
			data:        passkeyJSON{},
			dataExample: `{"status":"AWAITING_ASSERTION","publicKey":{"challenge":"3q2-7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","timeout":120000,"rpId":"whatsapp.com","allowCredentials":[{"id":"q83vEjRWeJCrze8SNFZ4kA","type":"public-key","transports":["internal","hybrid"]}],"userVerification":"required","extensions":null},"code":null,"expiresAt":"2026-01-02T03:06:09.000Z"}`,
			failures:    []int{409},
		},
		{
			method: "POST", path: "/session/{sessionId}/passkey/assertion", id: "submitPasskeyAssertion", tag: "sessions",
			summary:     "Answer the passkey step",
			description: "Hands WhatsApp the assertion of the account's passkey (the PublicKeyCredential's toJSON()) and answers the step once WhatsApp gave the confirmation code. A wrong or late assertion is 422 with WhatsApp's reason; the session stays PAIRING with a fresh QR code. 409 when the session is not waiting for an assertion.",
			params:      []param{pSession},
			handling:    withBody(false, (*Handler).submitPasskeyAssertion),
			bodyExample: `{"assertion":{"id":"q83vEjRWeJCrze8SNFZ4kA","rawId":"q83vEjRWeJCrze8SNFZ4kA","type":"public-key","response":{"clientDataJSON":"eyJ0eXBlIjoid2ViYXV0aG4uZ2V0In0","authenticatorData":"SZYN5YgO","signature":"MEUCIQ"}}}`,
			status:      200, answer: "The passkey step, now AWAITING_CONFIRMATION with the code.",
			data:        passkeyJSON{},
			dataExample: `{"status":"AWAITING_CONFIRMATION","publicKey":{"challenge":"3q2-7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","timeout":120000,"rpId":"whatsapp.com","allowCredentials":[{"id":"q83vEjRWeJCrze8SNFZ4kA","type":"public-key","transports":["internal","hybrid"]}],"userVerification":"required","extensions":null},"code":"K7QH-3MXD","expiresAt":"2026-01-02T03:06:09.000Z"}`,
			failures:    []int{409, 422, 502, 504},
		},
		{
			method: "POST", path: "/session/{sessionId}/passkey/confirm", id: "confirmPasskey", tag: "sessions",
			summary:     "Confirm the passkey step's code",
			description: "Confirms that the step's code matches the code the phone shows; WhatsApp then links the device and the session connects. 409 when the session is not waiting for a confirmation.",
			params:      []param{pSession},
			handling:    noBody((*Handler).confirmPasskey),
			status:      200, answer: "The session, linked and connecting.",
			data:        sessionJSON{},
			dataExample: `{"id":"8c2858ac-7f25-41db-abda-c73a4e1a5e46","name":"shop","status":"CONNECTING","statusReason":null,"jid":"491701234567:12@s.whatsapp.net","pushName":null,"createdAt":"2026-01-02T03:04:09.000Z"}`,
			failures:    []int{409, 422, 502, 504},
		},
	}
}
