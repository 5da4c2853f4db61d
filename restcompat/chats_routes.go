package restcompat

import "github.com/swaggest/openapi-go/openapi31"

// The parameters of the stored lists (surface.md section 2).
var (
	pLimit = param{key: "limit", name: "limit", in: openapi31.ParameterInQuery, description: "Items per page, 1 to 100.",
		schema: integer(1, 100, 50), example: 50}
	pCursor = param{key: "cursor", name: "cursor", in: openapi31.ParameterInQuery, description: "The nextCursor of the page before; absent starts at the first item.",
		schema: str(), example: "eyJ0IjoxNzY0MzI0MDAwMDAwMDAwMDAwLCJyIjo0MiwiaSI6N30"}
	pBefore = param{key: "before", name: "before", in: openapi31.ParameterInQuery, description: "The nextCursor of the page before: the messages older than its last; absent starts at the newest.",
		schema: str(), example: "eyJ0IjoxNzY0MzI0MDAwMDAwMDAwMDAwLCJpIjo0Mn0"}
	pArchived = param{key: "archived", name: "archived", in: openapi31.ParameterInQuery, description: "true: only archived chats; false: only those not archived; absent: all.",
		schema: map[string]any{"type": "boolean"}, example: false}
	pSearch = param{key: "search", name: "search", in: openapi31.ParameterInQuery, description: "Keeps the contacts whose name, push name, business name or phone holds it, ignoring case.",
		schema: str(), example: "ada"}
)

// chatRoutes: the stored reads of chats, a chat's messages and contacts.
func chatRoutes() []route {
	const message = `{"id":"3EB0C431C26A1916E0A1","chat":"491701234567@s.whatsapp.net","sender":"491701234567@s.whatsapp.net","fromMe":false,"type":"text","text":"See you at 9","caption":null,"mediaUrl":null,"status":"received","timestamp":"2026-01-02T03:04:15.000Z","viewOnce":false,"senderPhone":"491701234567","senderLid":"200000000000123@lid","edited":false,"reactions":[]}`
	const chat = `{"jid":"491701234567@s.whatsapp.net","name":"Ada","isGroup":false,"phone":"491701234567","lid":"200000000000123@lid","unreadCount":1,"lastMessage":` + message + `,"lastMessageAt":"2026-01-02T03:04:15.000Z","archived":false,"pinned":false,"mutedUntil":null}`
	return []route{
		{
			method: "GET", path: "/session/{sessionId}/chat", id: "chats", tag: "chats",
			summary:     "List chats",
			description: "The session's chats, most recent first (of two with the same time, the later-stored first), each with its unread count and last message. Stored: answers from the database whatever the session's status.",
			params:      []param{pSession, pLimit, pCursor, pArchived},
			handling:    noBody((*Handler).listChats),
			status:      200, answer: "One page of chats.",
			bare: true, data: chatPage{},
			dataExample: `{"status":"success","data":[` + chat + `],"nextCursor":null}`,
			failures:    []int{400},
		},
		{
			method: "GET", path: "/session/{sessionId}/chat/{chat}", id: "chat", tag: "chats",
			summary:     "Get a chat",
			description: "One chat, named by a phone number, a user JID, a LID or a group JID (a user's chat whichever address it is stored under); 404 when the store has none. Stored.",
			params:      []param{pSession, pChat},
			handling:    noBody((*Handler).getChat),
			status:      200, answer: "The chat.",
			data:        chatJSON{},
			dataExample: chat,
			failures:    []int{400},
		},
		{
			method: "GET", path: "/session/{sessionId}/chat/{chat}/messages", id: "messages", tag: "chats",
			summary:     "List a chat's messages",
			description: "The chat's stored messages, newest first (of two of the same second, the later-stored first); pass nextCursor as before for older ones. Each carries its reactions, whether it was edited, its media's path and its sender's phone and LID when ever learned. Stored.",
			params:      []param{pSession, pChat, pLimit, pBefore},
			handling:    noBody((*Handler).listMessages),
			status:      200, answer: "One page of messages.",
			bare: true, data: messagePage{},
			dataExample: `{"status":"success","data":[` + message + `],"nextCursor":null}`,
			failures:    []int{400},
		},
		{
			method: "GET", path: "/session/{sessionId}/contact", id: "contacts", tag: "chats",
			summary:     "List contacts",
			description: "The people the session knows (the phone's address book, push names, business names, message senders) by name, each with phone and LID when ever learned; search keeps those whose name, push name, business name or phone holds it, ignoring case. Stored.",
			params:      []param{pSession, pLimit, pCursor, pSearch},
			handling:    noBody((*Handler).listContacts),
			status:      200, answer: "One page of contacts.",
			bare: true, data: contactPage{},
			dataExample: `{"status":"success","data":[{"jid":"491701234567@s.whatsapp.net","phone":"491701234567","lid":"200000000000123@lid","name":"Ada Lovelace","pushName":"Ada","businessName":null}],"nextCursor":null}`,
			failures:    []int{400},
		},
	}
}
