package restcompat

// accountRoutes: the linked account's profile and its logout.
func accountRoutes() []route {
	return []route{
		{
			method: "PUT", path: "/session/{sessionId}/display-picture", id: "updateDisplayPicture", tag: "account",
			summary:     "Set the account's or a group's picture",
			description: "Sets the account's own picture, or a group's. The image is converted to the square JPEG WhatsApp requires.",
			params:      []param{pSession},
			handling:    withBody(false, (*Handler).updateDisplayPicture),
			maxBody:     mediaBody,
			bodyExample: `{"identifier":"491701234567","source":"https://example.com/files/logo.png"}`,
			status:      200, answer: "Set; the image was converted to a square JPEG.",
			data:        empty{},
			dataExample: `{}`,
			failures:    []int{409, 422, 502, 504},
		},
		{
			method: "PUT", path: "/session/{sessionId}/update-profile-name", id: "updateProfileName", tag: "account",
			summary:     "Set the account's profile name",
			description: "Sets the name the account shows to others (its push name).",
			params:      []param{pSession},
			handling:    withBody(false, (*Handler).updateProfileName),
			bodyExample: `{"name":"Shop"}`,
			status:      200, answer: "Set.",
			data:        empty{},
			dataExample: `{}`,
			failures:    []int{409, 502, 504},
		},
		{
			method: "PUT", path: "/session/{sessionId}/logout", id: "logout", tag: "account",
			summary:     "Log the linked device out",
			description: "Logs the linked device out (it disappears from the phone's linked devices); the session stays, LOGGED_OUT, and can be linked again. Answers {\"status\":\"success\",\"message\":…} instead of data.",
			params:      []param{pSession},
			handling:    noBody((*Handler).logout),
			status:      200, answer: "Logged out: {\"status\":\"success\",\"message\":\"Session <sessionId> logged out\"}.",
			bare: true, data: logoutResultJSON{},
			dataExample: `{"status":"success","message":"Session 8c2858ac-7f25-41db-abda-c73a4e1a5e46 logged out"}`,
			failures:    []int{409, 502, 504},
		},
	}
}
