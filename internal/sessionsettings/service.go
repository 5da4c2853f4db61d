package sessionsettings

import (
	"context"
	"net/url"
	"time"

	"github.com/wagraph/wagraph/ent"
	entsession "github.com/wagraph/wagraph/ent/session"
	"github.com/wagraph/wagraph/internal/fault"
)

// Settings are a session's settings as stored. The proxy's password is in
// it, so it is never shown whole: ShownProxy is what a client reads.
type Settings struct {
	SendRate          *Rate // nil: no rate, every send goes at once
	SendJitter        time.Duration
	SimulateTyping    bool
	AutoMarkRead      bool
	AutoRejectCalls   bool
	CallRejectMessage string
	proxy             *url.URL // nil: none
}

// ShownProxy is the proxy as a client may read it (password as ***); nil
// when there is none.
func (s Settings) ShownProxy() *string {
	if s.proxy == nil {
		return nil
	}
	shown := RedactProxy(s.proxy)
	return &shown
}

// Input changes settings: a nil field keeps its value. An empty SendRate,
// Proxy or CallRejectMessage removes it.
type Input struct {
	SendRate          *string
	SendJitter        *string
	SimulateTyping    *bool
	AutoMarkRead      *bool
	AutoRejectCalls   *bool
	CallRejectMessage *string
	Proxy             *string
}

// Service reads and changes sessions' settings. Who may reach a session is
// the caller's to check (the resolvers', through internal/sessions).
//
// Every read goes to the database (one lookup by primary key): an update
// made through one process of a cluster is seen by the next send or event
// on any other, so a send rate set and used at once paces every send.
type Service struct{ db *ent.Client }

// New returns a service over db.
func New(db *ent.Client) *Service { return &Service{db: db} }

// Get returns the settings of session sessionID, NOT_FOUND when it does
// not exist.
func (s *Service) Get(ctx context.Context, sessionID string) (Settings, error) {
	row, err := s.db.Session.Query().Where(entsession.ID(sessionID)).
		Select(entsession.FieldSendRate, entsession.FieldSendJitterMs, entsession.FieldSimulateTyping, entsession.FieldAutoMarkRead,
			entsession.FieldAutoRejectCalls, entsession.FieldCallRejectMessage, entsession.FieldProxy).Only(ctx)
	if ent.IsNotFound(err) {
		return Settings{}, fault.New(fault.NotFound, "session %s not found", sessionID)
	}
	if err != nil {
		return Settings{}, errorf(sessionID, "read", err)
	}
	set, err := fromRow(row)
	if err != nil {
		return Settings{}, errorf(sessionID, "read", err)
	}
	return set, nil
}

// Update applies in to the settings of session sessionID and returns
// them; nothing changes when a field breaks its rule (the error names it).
func (s *Service) Update(ctx context.Context, sessionID string, in Input) (Settings, error) {
	var set Settings
	err := ent.WithTx(ctx, s.db, func(tx *ent.Tx) error {
		row, err := tx.Session.Get(ctx, sessionID)
		if ent.IsNotFound(err) {
			return fault.New(fault.NotFound, "session %s not found", sessionID)
		}
		if err != nil {
			return errorf(sessionID, "read", err)
		}
		if set, err = fromRow(row); err != nil {
			return errorf(sessionID, "read", err)
		}
		if err := in.apply(&set); err != nil {
			return err
		}
		u := tx.Session.UpdateOneID(sessionID).SetSendJitterMs(set.SendJitter.Milliseconds()).
			SetSimulateTyping(set.SimulateTyping).SetAutoMarkRead(set.AutoMarkRead).
			SetAutoRejectCalls(set.AutoRejectCalls).SetCallRejectMessage(set.CallRejectMessage)
		if set.SendRate != nil {
			u.SetSendRate(set.SendRate.String())
		} else {
			// Without a rate the queue's slot means nothing: a rate set
			// again later starts from now.
			u.ClearSendRate().ClearNextSendAt()
		}
		if set.proxy != nil {
			u.SetProxy(set.proxy.String())
		} else {
			u.ClearProxy()
		}
		if err := u.Exec(ctx); err != nil {
			return errorf(sessionID, "store", err)
		}
		return nil
	})
	if err != nil {
		return Settings{}, err
	}
	return set, nil
}

// Proxy is the whole URL of the session's proxy, its password too, for
// the session's connection to dial through; "" when it has none. Nothing
// else reads the password: it is never shown or logged.
func (s *Service) Proxy(ctx context.Context, sessionID string) (string, error) {
	set, err := s.Get(ctx, sessionID)
	if err != nil || set.proxy == nil {
		return "", err
	}
	return set.proxy.String(), nil
}

// apply checks every field of in and sets it on set; the first one that
// breaks its rule is the error, naming it.
func (in Input) apply(set *Settings) error {
	if in.SendRate != nil {
		set.SendRate = nil
		if *in.SendRate != "" {
			r, err := ParseRate("sendRate", *in.SendRate)
			if err != nil {
				return err
			}
			set.SendRate = &r
		}
	}
	if in.SendJitter != nil {
		d, err := ParseJitter("sendJitter", *in.SendJitter)
		if err != nil {
			return err
		}
		set.SendJitter = d
	}
	if in.CallRejectMessage != nil {
		if err := CheckCallRejectMessage("callRejectMessage", *in.CallRejectMessage); err != nil {
			return err
		}
		set.CallRejectMessage = *in.CallRejectMessage
	}
	if in.Proxy != nil {
		set.proxy = nil
		if *in.Proxy != "" {
			u, err := ParseProxy("proxy", *in.Proxy)
			if err != nil {
				return err
			}
			set.proxy = u
		}
	}
	for _, b := range []struct {
		in  *bool
		out *bool
	}{{in.SimulateTyping, &set.SimulateTyping}, {in.AutoMarkRead, &set.AutoMarkRead}, {in.AutoRejectCalls, &set.AutoRejectCalls}} {
		if b.in != nil {
			*b.out = *b.in
		}
	}
	return nil
}

// fromRow reads the settings stored in a session's row. What is stored
// passed the rules when it was written; a value that no longer reads is an
// error, not a silent default.
func fromRow(row *ent.Session) (Settings, error) {
	set := Settings{
		SendJitter: time.Duration(row.SendJitterMs) * time.Millisecond, SimulateTyping: row.SimulateTyping,
		AutoMarkRead: row.AutoMarkRead, AutoRejectCalls: row.AutoRejectCalls, CallRejectMessage: row.CallRejectMessage,
	}
	if row.SendRate != nil {
		r, err := ParseRate("sendRate", *row.SendRate)
		if err != nil {
			return Settings{}, err
		}
		set.SendRate = &r
	}
	if row.Proxy != nil {
		u, err := ParseProxy("proxy", *row.Proxy)
		if err != nil {
			return Settings{}, err
		}
		set.proxy = u
	}
	return set, nil
}
