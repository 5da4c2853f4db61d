package restcompat

import "github.com/wagraph/wagraph/graph"

// privacyRoutes: reading and changing the privacy settings.
func privacyRoutes() []route {
	return []route{
		{
			method: "GET", path: "/session/{sessionId}/privacy", id: "privacy", tag: "privacy",
			summary:     "Get the account's privacy settings",
			description: "Reads the account's privacy settings from WhatsApp. Answers the bare object (no envelope).",
			params:      []param{pSession},
			handling:    noBody((*Handler).getPrivacy),
			status:      200, answer: "The bare privacy object (no envelope).",
			bare: true, data: privacyJSON{},
			dataExample: `{"lastSeen":"contacts","online":"all","profilePicture":"contacts","status":"contacts","readReceipts":"all","groupsAdd":"contacts","callAdd":"all"}`,
			failures:    []int{409, 502, 504},
		},
		{
			method: "PUT", path: "/session/{sessionId}/privacy/default-disappearing-mode", id: "setDefaultDisappearingMode", tag: "privacy",
			summary:     "Set the default disappearing-messages timer",
			description: "Sets the disappearing-messages timer new chats of the account start with. Needs a CONNECTED session (409 otherwise). An invalid value is 400 and the message lists the allowed values.",
			params:      []param{pSession},
			handling:    privacySetter[disappearingModeRequest](graph.MutationResolver.SetDefaultDisappearingMode),
			bodyExample: `{"mode":"ONE_WEEK"}`,
			status:      200, answer: "Set.",
			data:        empty{},
			dataExample: `{}`,
			failures:    []int{409, 502, 504},
		},
		{
			method: "PUT", path: "/session/{sessionId}/privacy/read-receipts", id: "setReadReceiptsPrivacy", tag: "privacy",
			summary:     "Set who sees read receipts",
			description: "Sets whether the account sends read receipts. Needs a CONNECTED session (409 otherwise). An invalid value is 400 and the message lists the allowed values.",
			params:      []param{pSession},
			handling:    privacySetter[readReceiptsPrivacyRequest](graph.MutationResolver.SetReadReceiptsPrivacy),
			bodyExample: `{"privacy":"none"}`,
			status:      200, answer: "Set.",
			data:        empty{},
			dataExample: `{}`,
			failures:    []int{409, 502, 504},
		},
		{
			method: "PUT", path: "/session/{sessionId}/privacy/groups-add", id: "setGroupsAddPrivacy", tag: "privacy",
			summary:     "Set who may add the account to groups",
			description: "Sets who may add the account to groups. Needs a CONNECTED session (409 otherwise). An invalid value is 400 and the message lists the allowed values.",
			params:      []param{pSession},
			handling:    privacySetter[groupsAddPrivacyRequest](graph.MutationResolver.SetGroupsAddPrivacy),
			bodyExample: `{"privacy":"contacts"}`,
			status:      200, answer: "Set.",
			data:        empty{},
			dataExample: `{}`,
			failures:    []int{409, 502, 504},
		},
		{
			method: "PUT", path: "/session/{sessionId}/privacy/status", id: "setStatusPrivacy", tag: "privacy",
			summary:     "Set who sees status updates",
			description: "Sets who sees the account's status updates. Needs a CONNECTED session (409 otherwise). An invalid value is 400 and the message lists the allowed values.",
			params:      []param{pSession},
			handling:    privacySetter[statusPrivacyRequest](graph.MutationResolver.SetStatusPrivacy),
			bodyExample: `{"privacy":"contact_blacklist"}`,
			status:      200, answer: "Set.",
			data:        empty{},
			dataExample: `{}`,
			failures:    []int{409, 502, 504},
		},
	}
}
