package payload

import "encoding/json"

// Connection is the data of connection.update.
type Connection struct {
	Status string `json:"status"` // the GraphQL SessionStatus value
	QR     Text   `json:"qr"`     // the QR code to show while PAIRING
	Reason Text   `json:"reason"` // why, when the status was not asked for
	// PairingCode is the code to enter on the phone while PAIRING by phone
	// number (pairPhone); absent otherwise.
	PairingCode Text `json:"pairingCode,omitempty"`
	// Passkey is the passkey step while PAIRING, when WhatsApp asks for
	// the account's passkey; absent otherwise.
	Passkey *Passkey `json:"passkey,omitempty"`
	// OfflineSync is set on the connection.update that tells where the
	// replay of what WhatsApp queued while the device was offline stands;
	// null on every other.
	OfflineSync *OfflineSync `json:"offlineSync"`
	// Limits is set on the connection.update that tells a change of what
	// WhatsApp said of the account's limits (reason "reach-out
	// timelock"); null on every other.
	Limits *Limits `json:"limits"`
}

// Limits is what WhatsApp said of an account's limits on reaching new
// contacts (Session.limits): null fields, it said nothing (or lifted it).
type Limits struct {
	// ReachoutTimelockUntil is when the reach-out timelock WhatsApp put
	// on the account ends.
	ReachoutTimelockUntil Time `json:"reachoutTimelockUntil"`
	// NewContactQuota is how many more new contacts the account may
	// message, when WhatsApp says.
	NewContactQuota *int `json:"newContactQuota"`
}

// Passkey is the passkey step of a pairing: WhatsApp asked for the
// account's passkey (a WebAuthn assertion), then for the confirmation code
// to be compared.
type Passkey struct {
	Status string `json:"status"` // AWAITING_ASSERTION or AWAITING_CONFIRMATION
	// PublicKey is the WebAuthn request options, as WhatsApp sent them.
	PublicKey json.RawMessage `json:"publicKey"`
	Code      Text            `json:"code"` // the confirmation code, once known
	ExpiresAt Time            `json:"expiresAt"`
}

// OfflineSync is the replay of the offline queue at a login: announced
// (Completed false, with the counts WhatsApp gave), then done (Completed
// true): every queued message before it has been published.
type OfflineSync struct {
	Completed bool `json:"completed"`
	// Count is how many stanzas (messages, receipts, notifications, calls)
	// WhatsApp said it replays, or replayed once completed.
	Count int `json:"count"`
	// Messages is how many of them are messages, when WhatsApp announces
	// it; null otherwise.
	Messages *int `json:"messages"`
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
