package sessions

import (
	"context"
	"fmt"
	"strings"

	"github.com/wagraph/wagraph/ent"
	entsession "github.com/wagraph/wagraph/ent/session"
	entuser "github.com/wagraph/wagraph/ent/user"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/storage"
	"github.com/wagraph/wagraph/internal/textrule"
)

// generatedNamePrefix starts the name of a session created without one:
// "session-N", N the user's count of sessions with this one, raised past
// the names already taken.
const generatedNamePrefix = "session-"

// settleName settles the name of a new session of user inside tx: wanted
// (already trimmed and checked) when no other session of the user has it,
// compared as read (textrule.Key) ignoring case; a generated one when wanted is empty. It locks
// the user's row on PostgreSQL first, so two creations for one user take
// turns and cannot both pass the check (SQLite lets one writer at a time
// in anyway).
//
// limit (0: none) is how many sessions the user may have: at it, the
// creation is refused, under the same lock, so two creations cannot both
// take the last place.
func settleName(ctx context.Context, tx *ent.Tx, userID, wanted string, limit int) (string, error) {
	if _, err := tx.User.Query().Where(entuser.ID(userID), storage.ForUpdate).Only(ctx); err != nil {
		return "", fmt.Errorf("lock user %s: %w", userID, err)
	}
	taken, err := tx.Session.Query().Where(entsession.OwnerID(userID)).
		Select(entsession.FieldID, entsession.FieldName).All(ctx)
	if err != nil {
		return "", fmt.Errorf("names of the sessions of user %s: %w", userID, err)
	}
	if limit > 0 && len(taken) >= limit {
		return "", fault.New(fault.Conflict, "quota reached: you have %d sessions, the most a user may have (--max-sessions-per-user); delete one first", len(taken))
	}
	// Compared as read (textrule.Key: "Ｓｈｏｐ" and "Sh\u200bop" are "Shop"),
	// ignoring case.
	used := func(name string) *ent.Session {
		key := textrule.Key(name)
		for _, s := range taken {
			if strings.EqualFold(textrule.Key(s.Name), key) {
				return s
			}
		}
		return nil
	}
	if wanted != "" {
		s := used(wanted)
		switch {
		case s == nil:
			return wanted, nil
		case strings.EqualFold(strings.TrimSpace(s.Name), wanted):
			return "", &fault.Error{Code: fault.Conflict, Field: "name", Message: fmt.Sprintf(
				"name %q is taken by your session %s: a session's name must be unique among your sessions (ignoring case)",
				fault.Clip(wanted, fault.QuoteLen), s.ID)}
		}
		return "", &fault.Error{Code: fault.Conflict, Field: "name", Message: fmt.Sprintf(
			"name %q reads as the name of your session %s (%q): a session's name must be unique among your sessions as read (ignoring case, width, invisible characters and spacing)",
			fault.Clip(wanted, fault.QuoteLen), s.ID, fault.Clip(s.Name, fault.QuoteLen))}
	}
	for n := len(taken) + 1; ; n++ {
		if name := fmt.Sprintf("%s%d", generatedNamePrefix, n); used(name) == nil {
			return name, nil
		}
	}
}
