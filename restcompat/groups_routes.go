package restcompat

// groupRoutes: creating and changing groups.
func groupRoutes() []route {
	return []route{
		{
			method: "POST", path: "/session/{sessionId}/group", id: "createGroup", tag: "groups",
			summary:     "Create a group",
			description: "Creates a group with the account as its admin, and adds the participants.",
			params:      []param{pSession},
			handling:    withBody(false, (*Handler).createGroup),
			maxBody:     listBody,
			bodyExample: `{"subject":"Night shift","description":"Who covers which night","participants":["491701234567","491709876543"]}`,
			status:      200, answer: "The new group; id is its JID.",
			data:        groupJSON{},
			dataExample: `{"id":"120363025246125888@g.us","name":"Night shift","description":"Who covers which night"}`,
			failures:    []int{409, 422, 502, 504},
		},
		{
			method: "PUT", path: "/session/{sessionId}/group/{jid}", id: "updateGroup", tag: "groups",
			summary:     "Change a group's settings",
			description: "Changes a group's subject, description and settings; only the given fields change. The account must be an admin of the group (422 otherwise).",
			params:      []param{pSession, pGroup},
			handling:    withBody(false, (*Handler).updateGroup),
			bodyExample: `{"subject":"Night shift (May)","onlyAdminsCanPost":true}`,
			status:      200, answer: "Changed; only the given fields change.",
			data:        empty{},
			dataExample: `{}`,
			failures:    []int{409, 422, 502, 504},
		},
		{
			method: "POST", path: "/session/{sessionId}/group/{jid}/send-invite", id: "sendGroupInvite", tag: "groups",
			summary:     "Send a group's invite link",
			description: "Sends message followed by the group's invite link to number. The account must be an admin of the group (422 otherwise).",
			params:      []param{pSession, pGroup, pIdempotencyKey},
			handling:    withBody(false, (*Handler).sendGroupInvite),
			bodyExample: `{"number":"491701234567","message":"Join our group:"}`,
			status:      200, answer: "The invitation text followed by the group's invite link was sent to number.",
			data:        sendResultJSON{},
			dataExample: `{"messageId":"3EB0C431C26A1916E0A1","timestamp":"2026-01-02T03:04:15.000Z"}`,
			failures:    []int{409, 422, 502, 504},
		},
		{
			method: "POST", path: "/session/{sessionId}/group/{jid}/demote", id: "demoteGroupParticipants", tag: "groups",
			summary:     "Demote admins to participants",
			description: "Makes the given admins ordinary participants. Answers 200 with an outcome per number, even when some failed, as a bare array (no envelope).",
			params:      []param{pSession, pGroup},
			handling:    withBody(false, (*Handler).demoteGroup),
			maxBody:     listBody,
			bodyExample: `["491701234567","491709876543"]`,
			status:      200, answer: "Outcome per participant (200 even when some failed), keyed by each number exactly as sent; no envelope.",
			bare: true, data: demoteOutcomeJSON{},
			dataExample: `{"status":{"491701234567":{"status":"success"},"491709876543":{"status":"failed","code":404,"message":"not a participant"}}}`,
			failures:    []int{409, 422, 502, 504},
		},
	}
}
