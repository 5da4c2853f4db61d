package restcompat

import "github.com/swaggest/openapi-go/openapi31"

var (
	pInviteCode = param{key: "code", name: "code", in: openapi31.ParameterInPath, description: "An invite link's code (what follows https://chat.whatsapp.com/).",
		schema: str("pattern", "^[0-9A-Za-z]{1,64}$"), example: "AbCdEfGhIjKlMnOpQrStUv"}
	pReset = param{key: "reset", name: "reset", in: openapi31.ParameterInQuery, description: "true revokes the current link and makes a new one.",
		schema: map[string]any{"type": "boolean", "default": false}, example: false}
)

const (
	groupExample        = `{"id":"120363025246125888@g.us","name":"Night shift","description":"Who covers which night","participants":[{"jid":"491701234567@s.whatsapp.net","phone":"491701234567","lid":"200000000000001@lid","role":"superadmin"}],"onlyAdminsCanPost":false,"onlyAdminsCanEditInfo":false,"owner":"491701234567@s.whatsapp.net","createdAt":"2026-01-02T03:04:05Z","approvalMode":true,"memberAddMode":"ADMINS","ephemeralSeconds":0,"joinRequestPending":false}`
	participantsExample = `["491701234567","491709876543"]`
	outcomesExample     = `{"status":{"491701234567":{"status":"success"},"491709876543":{"status":"failed","code":403,"message":"their privacy settings do not allow the account to add them to groups: invite them with the group's link https://chat.whatsapp.com/AbCdEfGhIjKlMnOpQrStUv","inviteLink":"https://chat.whatsapp.com/AbCdEfGhIjKlMnOpQrStUv"}}}`
	perParticipant      = " Answers 200 with an outcome per number, even when some failed, keyed by each number exactly as sent, as a bare object (no envelope), as demote does."
)

// participantsRoute is one per-participant change of group {jid}: its body
// the numbers, its answer an outcome per number.
func participantsRoute(path, id, summary, description string) route {
	return route{
		method: "POST", path: "/session/{sessionId}/group/{jid}/" + path, id: id, tag: "groups",
		summary: summary, description: description + perParticipant,
		params:      []param{pSession, pGroup},
		handling:    withBody(false, participantsHandler(id)),
		maxBody:     listBody,
		bodyExample: participantsExample,
		status:      200, answer: "Outcome per participant (200 even when some failed), keyed by each number exactly as sent; no envelope.",
		bare: true, data: demoteOutcomeJSON{}, dataExample: outcomesExample,
		failures: []int{409, 422, 502, 504},
	}
}

// groupMemberRoutes: reading a group, its members, invite links, joining,
// leaving and join requests (surface.md §3).
func groupMemberRoutes() []route {
	return []route{
		{
			method: "GET", path: "/session/{sessionId}/group/{jid}", id: "group", tag: "groups",
			summary:     "Read a group",
			description: "The group fresh from WhatsApp: participants with role, phone and LID, owner, creation time, approval and member-add modes, disappearing timer.",
			params:      []param{pSession, pGroup},
			handling:    noBody((*Handler).group),
			status:      200, answer: "The group.",
			data: groupInfoJSON{}, dataExample: groupExample,
			failures: []int{409, 422, 502, 504},
		},
		participantsRoute("add", "addGroupParticipants", "Add participants",
			"Adds the numbers to the group. Only admins may, or every member when the group's memberAddMode is ALL. A number whose privacy settings refuse the add fails with 403 and the group's invite link to send them."),
		participantsRoute("remove", "removeGroupParticipants", "Remove participants", "Removes the numbers from the group; admins only."),
		participantsRoute("promote", "promoteGroupParticipants", "Promote participants to admins", "Makes the participants admins; admins only."),
		{
			method: "GET", path: "/session/{sessionId}/group/{jid}/invite-link", id: "groupInviteLink", tag: "groups",
			summary:     "Read or reset a group's invite link",
			description: "The group's invite link; with reset=true the current one is revoked first (anyone using it is refused) and a new one made. Admins only (422 otherwise).",
			params:      []param{pSession, pGroup, pReset},
			handling:    noBody((*Handler).groupInviteLink),
			status:      200, answer: "The invite link.",
			data: inviteLinkJSON{}, dataExample: `{"link":"https://chat.whatsapp.com/AbCdEfGhIjKlMnOpQrStUv"}`,
			failures: []int{409, 422, 502, 504},
		},
		{
			method: "GET", path: "/session/{sessionId}/group/invite/{code}", muxPath: "/session/{sessionId}/group/{jid}/{code}", id: "groupInviteInfo", tag: "groups",
			summary:     "What an invite link leads to",
			description: "The group an invite code leads to, without joining it. A revoked link is 422, an unknown one 404.",
			params:      []param{pSession, pInviteCode},
			handling:    noBody((*Handler).groupInviteInfo),
			status:      200, answer: "The group the link leads to.",
			data: groupInfoJSON{}, dataExample: groupExample,
			failures: []int{409, 422, 502, 504},
		},
		{
			method: "POST", path: "/session/{sessionId}/group/join", id: "joinGroup", tag: "groups",
			summary:     "Join a group by its invite link",
			description: "Joins the group of an invite link (or its code). Where the group's admins approve who joins, the account is not a member yet: joinRequestPending is true and the request waits for them.",
			params:      []param{pSession},
			handling:    withBody(false, (*Handler).joinGroup),
			bodyExample: `{"link":"https://chat.whatsapp.com/AbCdEfGhIjKlMnOpQrStUv"}`,
			status:      200, answer: "The group joined, or asked to join (joinRequestPending).",
			data: groupInfoJSON{}, dataExample: groupExample,
			failures: []int{409, 422, 502, 504},
		},
		{
			method: "POST", path: "/session/{sessionId}/group/{jid}/leave", id: "leaveGroup", tag: "groups",
			summary:     "Leave a group",
			description: "The account leaves the group.",
			params:      []param{pSession, pGroup},
			handling:    noBody((*Handler).leaveGroup),
			status:      200, answer: "Left.",
			data: empty{}, dataExample: `{}`,
			failures: []int{409, 422, 502, 504},
		},
		{
			method: "GET", path: "/session/{sessionId}/group/{jid}/requests", id: "groupJoinRequests", tag: "groups",
			summary:     "Requests to join a group",
			description: "The pending requests to join a group whose admins approve who joins, oldest first, all in one page. Admins only (422 otherwise).",
			params:      []param{pSession, pGroup},
			handling:    noBody((*Handler).groupJoinRequests),
			status:      200, answer: "The requests, in one page: the envelope's nextCursor is always null.",
			data:        []joinRequestJSON{},
			dataExample: `[{"jid":"491701234567@s.whatsapp.net","phone":"491701234567","lid":"200000000000001@lid","requestedAt":"2026-01-02T03:04:05Z"}]`,
			failures:    []int{409, 422, 502, 504},
		},
		participantsRoute("requests/approve", "approveGroupJoinRequests", "Approve requests to join", "Adds the requesters to the group; admins only. A number that did not ask fails with 404."),
		participantsRoute("requests/reject", "rejectGroupJoinRequests", "Reject requests to join", "Declines the requests; admins only. A number that did not ask fails with 404."),
	}
}
