package restcompat

// settingsRoutes: a session's settings (surface.md §4).
func settingsRoutes() []route {
	return []route{
		{
			method: "GET", path: "/session/{sessionId}/settings", id: "sessionSettings", tag: "sessions",
			summary:     "Get a session's settings",
			description: "The session's settings: its send rate and jitter, typing simulation, auto mark read, auto reject calls with their message, and its proxy (the password shown as ***). Answers from the store whatever the session's status.",
			params:      []param{pSession},
			handling:    noBody((*Handler).getSettings),
			status:      200, answer: "The settings.",
			data:        settingsJSON{},
			dataExample: settingsExample,
		},
		{
			method: "PUT", path: "/session/{sessionId}/settings", id: "updateSessionSettings", tag: "sessions",
			summary:     "Change a session's settings",
			description: "Changes the settings the body names; a field left out keeps its value, and \"\" removes a send rate, a proxy or a call reject message. A value that breaks its rule is 400 naming the field and the rule, and nothing changes. A proxy applies from the session's next connect.",
			params:      []param{pSession},
			handling:    withBody(false, (*Handler).putSettings),
			bodyExample: `{"sendRate":"30/m","sendJitter":"2s","simulateTyping":true,"autoRejectCalls":true,"callRejectMessage":"Please write, I cannot take calls here","proxy":"socks5://bob:secret@proxy.example:1080"}`,
			status:      200, answer: "The settings as they are now.",
			data:        settingsJSON{},
			dataExample: settingsExample,
		},
	}
}

const settingsExample = `{"sendRate":"30/m","sendJitter":"2s","simulateTyping":true,"autoMarkRead":false,"autoRejectCalls":true,"callRejectMessage":"Please write, I cannot take calls here","proxy":"socks5://bob:***@proxy.example:1080"}`
