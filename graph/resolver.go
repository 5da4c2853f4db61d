// Package graph is wagraph's GraphQL API: the schema (*.graphqls, written by
// hand), the resolvers that authorize, validate and call the domain, and the
// error table that maps fault codes to extensions.code. The REST layer calls
// these same resolvers, so a rule lives here once and both APIs obey it.
package graph

//go:generate sh -c "cd .. && go tool gqlgen generate"

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/account"
	"github.com/wagraph/wagraph/internal/auth"
	"github.com/wagraph/wagraph/internal/chats"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/lookup"
	"github.com/wagraph/wagraph/internal/media"
	"github.com/wagraph/wagraph/internal/messaging"
	"github.com/wagraph/wagraph/internal/sessions"
	"github.com/wagraph/wagraph/internal/sessionsettings"
	"github.com/wagraph/wagraph/internal/textrule"
	"github.com/wagraph/wagraph/internal/webhook"
)

// Resolver holds the dependencies of every resolver.
type Resolver struct {
	DB       *ent.Client
	Auth     *auth.Service
	Registry *webhook.Registry
	// Deliveries is the webhooks' delivery log.
	Deliveries *webhook.DeliveryLog
	// WhatsApp runs the operations on sessions where each runs.
	WhatsApp WhatsApp
	// Account applies the rules of a linked account's profile, privacy
	// and groups, then runs their operations.
	Account *account.Service
	// Messages is the messaging service. A query resolver reaches it as
	// r.Resolver.Messages: its method Messages (Query.messages) shadows
	// the field there.
	Messages *messaging.Service
	// Lookup asks WhatsApp who numbers and LIDs are, and runs the block
	// list.
	Lookup *lookup.Service
	// Chats is the chat store: the stored reads of chats, messages and
	// contacts, and the phones and LIDs a session learned.
	ChatStore *chats.Store
	// Media loads the source of a display picture (and of sandbox images).
	Media *media.Loader
	// Pictures makes display pictures, in the media pools sends use.
	Pictures *media.Preparer
	// Sandbox is the simulated network; nil outside sandbox mode.
	Sandbox SandboxNetwork
	Now     func() time.Time
	NewID   func() string
	// Events is the session event stream: the log the events query pages
	// and testWebhook appends to, and the bus subscriptions follow.
	Events *events.Bus
	// Sessions is the home of the session records: who reaches which,
	// their creation and deletion (sessions.Service).
	Sessions Sessions
	// Settings reads and changes the sessions' settings.
	Settings *sessionsettings.Service
	// Leases tells which process of a cluster runs a session; nil on
	// SQLite (one process).
	Leases Leases
	// NodeID is this process's --node-id (Session.owner on SQLite).
	NodeID string
	// subscriptions counts the open subscriptions of each token
	// (subscriptions.go); its zero value is ready.
	subscriptions subscriptionCounts
}

// SessionNotFound is the answer for a session that does not exist or that
// the caller does not reach: the two are indistinguishable by design.
func SessionNotFound(id string) error { return sessions.NotFound(id) }

// reachSession returns the caller and the session id names, when the caller
// reaches it.
func (r *Resolver) reachSession(ctx context.Context, id string) (*auth.Principal, *ent.Session, error) {
	p, err := auth.Require(ctx)
	if err != nil {
		return nil, nil, err
	}
	s, err := r.Sessions.Get(ctx, p, id)
	if err != nil {
		return nil, nil, err
	}
	return p, s, nil
}

// inArgument names the argument a BAD_USER_INPUT error is about, so
// extensions.field carries its whole path ("input.url").
func inArgument(arg string, err error) error {
	if f := fault.From(err); f != nil && f.Code == fault.Invalid {
		c := *f
		if c.Field == "" {
			c.Field = arg
		} else {
			c.Field = arg + "." + c.Field
		}
		return &c
	}
	return err
}

func isNotFound(err error) bool { return fault.CodeOf(err) == fault.NotFound }

// MaxNameLen bounds user and session names.
const MaxNameLen = 100

// checkName validates a user or session name: the spaces around it are
// trimmed by the caller, so a blank one is empty.
func checkName(field, name string, required bool) error {
	if required && strings.TrimSpace(name) == "" {
		return fault.InvalidField(field, "%s must not be empty", field)
	}
	if n := utf8.RuneCountInString(name); n > MaxNameLen {
		return fault.InvalidField(field, "%s must be at most %d characters (got %d)", field, MaxNameLen, n)
	}
	if !utf8.ValidString(name) || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fault.InvalidField(field, "%s must not contain control characters", field)
	}
	// Nor what could pass for another name (textrule's rule of names).
	return textrule.CheckName(field, strings.TrimSpace(name))
}

// done is the Boolean! answer of a mutation that returns nothing else:
// true, or its error.
func done(err error) (bool, error) { return err == nil, err }
