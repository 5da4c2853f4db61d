package restcompat

import "github.com/swaggest/openapi-go/openapi31"

// sessionRoutes: creating, reading, linking and deleting sessions.
func sessionRoutes() []route {
	return []route{
		{
			method: "POST", path: "/session", id: "createSession", tag: "sessions",
			summary:     "Create a session",
			description: "Creates a session for the token's user: user tokens only (403 for a session token). The name is optional: when absent, a unique name is generated; names are unique per user (409 on a duplicate). An empty body is taken as {}. The answer carries the session token (wgs_…) of the new session, shown only here.",
			handling:    withBody(true, (*Handler).createSession),
			bodyExample: `{"name":"shop"}`,
			status:      201, answer: "Session created; token is the new session token, shown only here.",
			data:        createdSessionJSON{},
			dataExample: `{"id":"8c2858ac-7f25-41db-abda-c73a4e1a5e46","name":"shop","status":"DISCONNECTED","token":"wgs_azk9bSVOTdvDQvzRBz2ZyPtanAruolfKmPuoW2yY"}`,
			failures:    []int{403, 409},
		},
		{
			method: "GET", path: "/session", id: "sessions", tag: "sessions",
			summary:     "List the sessions visible to the token",
			description: "Lists the sessions this token reaches: every session of the user for a user token (every session for an admin), only its own for a session token.",
			handling:    noBody((*Handler).listSessions),
			status:      200, answer: "The sessions this token reaches.",
			data:        []sessionJSON{},
			dataExample: `[{"id":"8c2858ac-7f25-41db-abda-c73a4e1a5e46","name":"shop","status":"CONNECTED","statusReason":null,"jid":"491701234567:12@s.whatsapp.net","pushName":"Shop","createdAt":"2026-01-02T03:04:09.000Z"}]`,
		},
		{
			method: "GET", path: "/session/{sessionId}", id: "session", tag: "sessions",
			summary:     "Get a session",
			description: "Reads one session: its status, why it is in it, and the linked account once linked.",
			params:      []param{pSession},
			handling:    noBody((*Handler).getSession),
			status:      200, answer: "The session.",
			data:        sessionJSON{},
			dataExample: `{"id":"8c2858ac-7f25-41db-abda-c73a4e1a5e46","name":"shop","status":"CONNECTED","statusReason":null,"jid":"491701234567:12@s.whatsapp.net","pushName":"Shop","createdAt":"2026-01-02T03:04:09.000Z"}`,
		},
		{
			method: "DELETE", path: "/session/{sessionId}", id: "deleteSession", tag: "sessions",
			summary:     "Delete a session",
			description: "Deletes the session with its tokens, webhooks and messages. Logs the linked device out first when the session has one; a failure there leaves the session intact.",
			params:      []param{pSession},
			handling:    noBody((*Handler).deleteSession),
			status:      200, answer: "Deleted, with its tokens, webhooks and messages.",
			data:        empty{},
			dataExample: `{}`,
			failures:    []int{502, 504},
		},
		{
			method: "POST", path: "/session/{sessionId}/connect", id: "connectSession", tag: "sessions",
			summary:     "Start connecting",
			description: "Starts connecting the session. A session without a device starts pairing: read the QR code (GET …/qr) and scan it on the phone, or ask for a pairing code (POST …/pair-phone).",
			params:      []param{pSession},
			handling:    noBody((*Handler).connectSession),
			status:      200, answer: "The session, now connecting (or pairing when it has no device yet).",
			data:        sessionJSON{},
			dataExample: `{"id":"8c2858ac-7f25-41db-abda-c73a4e1a5e46","name":"shop","status":"CONNECTING","statusReason":null,"jid":null,"pushName":null,"createdAt":"2026-01-02T03:04:09.000Z"}`,
			failures:    []int{409, 502, 504},
		},
		{
			method: "GET", path: "/session/{sessionId}/qr", id: "qrCode", tag: "sessions",
			summary:     "Current pairing QR code",
			description: "The current QR code of a PAIRING session (409 otherwise), as JSON with a PNG data URI, or as the PNG itself when the Accept header prefers image/png. Scan it on the phone under Settings › Linked devices; WhatsApp renews it while the session is pairing: read it again when it no longer works.",
			params:      []param{pSession},
			handling:    noBody((*Handler).getQR),
			status:      200, answer: "The QR code: JSON by default, the PNG itself when Accept prefers image/png.",
			data:        qrCodeJSON{},
			dataExample: `{"code":"2@Qm9ndXNRUkNvZGU=,ZXhhbXBsZQ==,c2VjcmV0,a2V5","image":"data:image/png;base64,iVBORw0KGgo="}`,
			failures:    []int{409},
			// wantsPNG: the same route answers the PNG itself.
			describe: func(r *openapi31.Response) { r.Content["image/png"] = binary("image/png", "") },
		},
		{
			method: "POST", path: "/session/{sessionId}/pair-phone", id: "pairPhone", tag: "sessions",
			summary:     "Pair by phone number",
			description: "Asks WhatsApp for a pairing code for the account of number: enter it on that phone under Linked devices › Link with phone number, instead of scanning the QR code. Starts connecting the session when it is not; 409 when the session is already linked (log out first).",
			params:      []param{pSession},
			handling:    withBody(false, (*Handler).pairPhone),
			bodyExample: `{"number":"491701234567"}`,
			status:      200, answer: "The pairing code to enter on the phone.",
			data:        pairingCodeJSON{},
			dataExample: `{"code":"ABCD-EFGH"}`,
			failures:    []int{409, 422, 502, 504},
		},
	}
}
