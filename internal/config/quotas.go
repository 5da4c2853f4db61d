package config

// Quotas bound what one user or session may keep, each refused past its
// bound with a message naming it: one tenant's records (and the work each
// one makes: a webhook multiplies every event into a delivery row) must not
// grow without end at everybody's cost.
type Quotas struct {
	// SessionsPerUser bounds the sessions of a user who is not an admin.
	SessionsPerUser int
	// WebhooksPerSession bounds a session's webhooks.
	WebhooksPerSession int
	// TokensPerSession bounds a session's live (unrevoked) session tokens.
	TokensPerSession int
	// ScheduledPerSession bounds a session's pending scheduled sends, and
	// ScheduledBytesPerSession the bytes their payloads keep.
	ScheduledPerSession      int
	ScheduledBytesPerSession int64
}

func parseScheduledBytes(c *Config, v string) string {
	n, err := ParseSize(v)
	if err != nil {
		return err.Error() + "; must be between 1MiB and 64GiB"
	}
	if n < 1<<20 || n > 64<<30 {
		return "must be between 1MiB and 64GiB"
	}
	c.Quotas.ScheduledBytesPerSession = n
	return ""
}
