package payload

// Connection is the data of connection.update.
type Connection struct {
	Status string `json:"status"` // the GraphQL SessionStatus value
	QR     Text   `json:"qr"`     // the QR code to show while PAIRING
	Reason Text   `json:"reason"` // why, when the status was not asked for
}

// Creds is the data of creds.update: what the account's own identity became.
// Only what changed is set; the rest is null.
type Creds struct {
	JID          Text `json:"jid"` // the linked device
	LID          Text `json:"lid"`
	Phone        Text `json:"phone"`
	Platform     Text `json:"platform"`
	BusinessName Text `json:"businessName"`
	PushName     Text `json:"pushName"`
}

// WebhookTest is the data of webhook.test.
type WebhookTest struct {
	WebhookID string `json:"webhookId"`
	Message   string `json:"message"`
}

func (*Connection) isData()  {}
func (*Creds) isData()       {}
func (*WebhookTest) isData() {}
