package restcompat

import (
	"net/http"

	"github.com/swaggest/openapi-go/openapi31"
)

// What every route's description shares: the document's header, the
// parameters several routes take and the failure answers.

func info() openapi31.Info {
	i := openapi31.Info{Title: "wagraph", Version: "1.0.0"}
	i.WithSummary("REST compatibility API of the wagraph WhatsApp gateway.").
		WithDescription("wagraph is a WhatsApp gateway: link a WhatsApp account to a session, then send messages and receive events through webhooks. This is its REST API (the same operations are served over GraphQL at /graphql).\n\n" +
			"Every REST operation calls the GraphQL resolver of the same name (its operationId), so the two APIs cannot drift.\n\n" +
			"Requests: JSON bodies (Content-Type application/json; a missing content type is tolerated, any other is 415). Unknown fields are 400 naming the field; a wrong JSON type is 400 naming the field and the expected type; every field that is a string must be valid UTF-8 without NUL. Each operation caps its body at what its fields need (its request body says how much: 64 KiB for most, up to 1 MiB for a text; --max-body, default 64 MiB, for the media sent inline), and --max-body caps them all: over the cap is 413, answered before the body is read when its Content-Length says so.\n\n" +
			"Answers: success is {\"status\":\"success\",\"data\":…} (a few operations answer without this envelope, as stated on each); failure is {\"status\":\"failed\",\"message\":…} with a message naming the field or thing at fault and the rule.\n\n" +
			"Phone numbers: in international format, country code first. Spaces, dashes, dots, parentheses and a leading + are ignored, and a leading 00 is taken as the international prefix: \"491701234567\", \"+49 170 1234567\", \"0049 170 123 4567\" and \"(49) 170-1234567\" name the same account. A number with a single leading 0 (a national number such as 01701234567) is refused with 400: use the international format. Where a number is a recipient, a full JID is accepted too, so messages can go to groups (…@g.us).").
		WithContact(*(&openapi31.Contact{}).WithName("wagraph").WithURL("https://github.com/wagraph/wagraph")).
		WithLicense(*(&openapi31.License{Name: "MIT"}).WithURL("https://opensource.org/license/mit"))
	return i
}

// tags are the areas of the table, in the order the document lists them.
func tags() []openapi31.Tag {
	tag := func(name, desc string) openapi31.Tag { return *(&openapi31.Tag{Name: name}).WithDescription(desc) }
	return []openapi31.Tag{
		tag("sessions", "A session is one linked WhatsApp account (a linked device). Create one, connect it, link it by scanning its QR code or entering a pairing code on the phone, and use it to send."),
		tag("messages", "Send texts, media, locations and contact cards to users and groups, read a stored message or its media, and revoke a sent message. Sends need a CONNECTED session (409 otherwise)."),
		tag("conversation", "What a person does in a conversation besides sending: mark messages read, show presence and typing, follow a contact's presence, react to and edit messages, reject calls. Needs a CONNECTED session."),
		tag("chats", "Read the session's chats, a chat's messages and its contacts, as stored from the session's own events: answered from the database whatever the session's status."),
		tag("groups", "Create, read and change groups: participants, admins, invite links, joining, leaving, join requests and settings."),
		tag("account", "The linked account's profile: display picture, profile name, and logging the linked device out."),
		tag("privacy", "Read and change the linked account's privacy settings."),
		tag("contacts", "Who a number or LID is, asked of WhatsApp: whether numbers are on WhatsApp, a user's info and profile picture, phone ↔ LID identities; and the account's block list. Needs a CONNECTED session."),
		tag("webhooks", "Receive a session's events by HTTP POST: create webhooks, choose their events, read their delivery log, redeliver and test them. Deliveries are signed with the webhook's secret (Standard Webhooks headers webhook-id, webhook-timestamp, webhook-signature)."),
	}
}

// param is a parameter several routes share, described once under
// components/parameters.
type param struct {
	key, name   string // key in components; name in the request
	in          openapi31.ParameterIn
	description string
	schema      map[string]any
	example     any
}

func (p param) parameter() *openapi31.Parameter {
	out := &openapi31.Parameter{Name: p.name, In: p.in, Schema: p.schema}
	out.WithRequired(p.in == openapi31.ParameterInPath).WithDescription(p.description)
	ex := p.example
	out.Example = &ex
	return out
}

func str(extra ...any) map[string]any {
	s := map[string]any{"type": "string"}
	for i := 0; i+1 < len(extra); i += 2 {
		s[extra[i].(string)] = extra[i+1]
	}
	return s
}

func integer(minimum, maximum, def int) map[string]any {
	return map[string]any{"type": "integer", "minimum": minimum, "maximum": maximum, "default": def}
}

var (
	pSession = param{key: "sessionId", name: "sessionId", in: openapi31.ParameterInPath, description: "The session's id.",
		schema: str(), example: "8c2858ac-7f25-41db-abda-c73a4e1a5e46"}
	pMessage = param{key: "messageId", name: "messageId", in: openapi31.ParameterInPath, description: "A message id, resolved only inside the session.",
		schema: str(), example: "3EB0C431C26A1916E0A1"}
	pGroup = param{key: "jid", name: "jid", in: openapi31.ParameterInPath, description: "The group: 123…@g.us or the bare group number.",
		schema: str("pattern", `^[0-9]+(-[0-9]+)?(@g\.us)?$`), example: "120363025246125888@g.us"}
	pWebhook = param{key: "webhookId", name: "webhookId", in: openapi31.ParameterInPath, description: "A webhook id, resolved only inside the session.",
		schema: str(), example: "acacfee1-96ac-412a-acf8-73937c482279"}
	pPage = param{key: "page", name: "page", in: openapi31.ParameterInQuery, description: "Page number, 1 to 1000000.",
		schema: integer(1, 1000000, 1), example: 1}
	pPageSize = param{key: "pageSize", name: "pageSize", in: openapi31.ParameterInQuery, description: "Webhooks per page, 1 to 100.",
		schema: integer(1, 100, 20), example: 20}
	pDelivery = param{key: "deliveryId", name: "deliveryId", in: openapi31.ParameterInPath, description: "A delivery id (dlv_…), resolved only inside the webhook.",
		schema: str(), example: "dlv_01KDYAKAY8F4D2G6CEK48WE0FQ"}
	pFirst = param{key: "first", name: "first", in: openapi31.ParameterInQuery, description: "Deliveries per page, 1 to 100.",
		schema: integer(1, 100, 20), example: 20}
	pAfter = param{key: "after", name: "after", in: openapi31.ParameterInQuery, description: "The endCursor of the page before; absent starts at the newest delivery.",
		schema: str(), example: "dlv_01KDYAKAY8F4D2G6CEK48WE0FQ"}
	pChat = param{key: "chat", name: "chat", in: openapi31.ParameterInPath, description: "The chat: a phone number (digits), a user JID (…@s.whatsapp.net), a LID (…@lid) or a group JID (…@g.us).",
		schema: str("minLength", 1), example: "491701234567"}
	pIdempotencyKey = param{key: "idempotencyKey", name: "Idempotency-Key", in: openapi31.ParameterInHeader,
		description: "Makes the send once however often it is asked for with this key within 24 hours: a retry answers the first send's result and sends nothing (also after a restart, and on any process of a cluster); the same key with another body is 409. 1-255 printable ASCII characters, a UUID for example. Same as the body's idempotencyKey.",
		schema:      str("minLength", 1, "maxLength", 255), example: "7d4f3c2a-1b9e-4c8d-9f6a-2e5b8c1d0a3f"}
	pNumber = param{key: "number", name: "number", in: openapi31.ParameterInPath, description: "The user: a phone number (digits), a user JID (…@s.whatsapp.net) or a LID (…@lid); not a group.",
		schema: str("minLength", 1), example: "491701234567"}
	pPreview = param{key: "preview", name: "preview", in: openapi31.ParameterInQuery, description: "true: the picture's thumbnail instead of the full picture.",
		schema: map[string]any{"type": "boolean", "default": false}, example: false}
	pCall = param{key: "callId", name: "callId", in: openapi31.ParameterInPath, description: "The call: the id of a call event.",
		schema: str("pattern", "^[0-9A-Za-z]{1,64}$"), example: "9F2C7B1E4A6D8035C1E2F3A4B5C6D7E8"}
)

// allParams are the shared parameters, in the order components list them.
var allParams = []param{pSession, pMessage, pGroup, pWebhook, pPage, pPageSize, pDelivery, pFirst, pAfter, pChat, pIdempotencyKey, pCall,
	pNumber, pPreview, pInviteCode, pReset, pLimit, pCursor, pBefore, pArchived, pSearch}

// failure is a failure answer routes share: the Failure envelope with what
// the status means in this API (internal/fault's codes behind it).
type failureAnswer struct {
	status      int
	name        string
	description string
}

func (f failureAnswer) response() *openapi31.Response {
	r := &openapi31.Response{Description: f.description, Content: map[string]openapi31.MediaType{
		"application/json": {Schema: map[string]any{"$ref": schemaRefs + "Failure"}}}}
	if f.status == http.StatusTooManyRequests {
		r.WithHeadersItem("Retry-After", openapi31.HeaderOrReference{Header: (&openapi31.Header{
			Schema: map[string]any{"type": "integer", "minimum": 1}}).WithDescription("Seconds to wait before retrying.")})
	}
	return r
}

var failureResponses = []failureAnswer{
	{400, "BadRequest", "Malformed JSON, an unknown field, a missing required field, a wrong type or an invalid value; the message names the field and the rule."},
	{401, "Unauthorized", "Missing, unknown or revoked token."},
	{403, "Forbidden", "A valid token whose kind may not do this (a session token creating sessions)."},
	{404, "NotFound", "The session, webhook, message or group does not exist or is not visible to this token (a token never learns that another user's session exists)."},
	{409, "Conflict", "The operation needs a connected WhatsApp session and this one is not connected, or the object is in a conflicting state."},
	{413, "TooLarge", "The request body is over its operation's limit (stated on its request body; --max-body for the media sends, default 64 MiB), or the fetched media is larger than WhatsApp takes."},
	{415, "UnsupportedMediaType", "Content-Type other than application/json, or media of a type WhatsApp cannot take (or cannot be converted here)."},
	{422, "Unprocessable", "A well-formed request WhatsApp refuses: number not on WhatsApp, not a group admin, address could not be geocoded."},
	{429, "TooManyRequests", "This token's rate limit is exceeded; retry after the number of seconds in Retry-After."},
	{500, "InternalError", "Unexpected server error; the message carries only the request id under which it was logged."},
	{502, "BadGateway", "WhatsApp's servers answered with an error."},
	{504, "GatewayTimeout", "WhatsApp's servers did not answer in time."},
}

func failureOf(status int) (failureAnswer, bool) {
	for _, f := range failureResponses {
		if f.status == status {
			return f, true
		}
	}
	return failureAnswer{}, false
}
