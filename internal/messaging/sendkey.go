package messaging

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/wagraph/wagraph/ent"
	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/ent/sendkey"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp"
)

// Idempotency keys: a send retried with its key (a client's HTTP retry, a
// retry after the server was killed) sends nothing again and answers the
// first one's result. The key is stored with a fingerprint of the request
// and a message id reserved before anything is sent; a retry that finds
// the key still pending after the process making it died makes the send
// again with that same id: if the first attempt reached WhatsApp, the
// message store has it and the send is not made again; if WhatsApp took
// it but the store did not (a crash between the two), the recipient's
// phone keeps one message of that id.
const (
	// KeyTTL is how long a key is kept.
	KeyTTL = 24 * time.Hour
	// keyLease is how long another process's pending send is waited out
	// before it is taken for dead: longer than a send takes.
	keyLease = 90 * time.Second
	// maxKeyLen bounds a key, as common APIs do.
	maxKeyLen = 255
)

// newInstance names this run of node in the keys it holds: node/random.
func newInstance(node string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return node + "/" + hex.EncodeToString(b)
}

// sameNode reports whether two instances are runs of one node: a key held
// by an earlier run of this node was left by a process that is gone.
func sameNode(a, b string) bool {
	na, _, _ := strings.Cut(a, "/")
	nb, _, _ := strings.Cut(b, "/")
	return na == nb
}

// ownerLive reports whether the process that holds a key (its instance,
// node/run) may still be making its send: yes unless the cluster says its
// node is gone. A process killed leaves the cluster when its row expires
// (the lease TTL, 15 s by default): a client retrying after a failover is
// answered once the session runs again, not 409 for keyLease. A process
// frozen past that and woken mid-send reuses the reserved message id, of
// which the recipient's phone keeps one. When the cluster cannot be read
// the owner is taken for live: waited out, never sent twice.
func (s *Service) ownerLive(ctx context.Context, owner string) bool {
	if s.nodes == nil {
		return true
	}
	node, _, _ := strings.Cut(owner, "/")
	live, err := s.nodes.Live(ctx, node)
	if err != nil {
		s.log.Warn("idempotency key: whether its process is live is unknown: waited out", "node", node, "err", err)
		return true
	}
	return live
}

// checkKey admits 1-255 printable ASCII characters.
func checkKey(key string) error {
	if len(key) > maxKeyLen {
		return fault.InvalidField("idempotencyKey", "idempotencyKey must be at most %d characters (got %d)", maxKeyLen, len(key))
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return fault.InvalidField("idempotencyKey", "idempotencyKey must be printable ASCII (a UUID, say); byte %d is not", i)
		}
	}
	return nil
}

// sendOnce is Send with an idempotency key.
func (s *Service) sendOnce(ctx context.Context, sessionID string, req Request) (Result, error) {
	key := req.IdempotencyKey
	req.IdempotencyKey = ""
	fp, err := fingerprint(req)
	if err != nil {
		return Result{}, err
	}
	return s.once(ctx, sessionID, key, fp, func(ctx context.Context, id string) (Result, error) {
		return s.send(ctx, sessionID, req, id)
	})
}

// keyed is a send made apart from a Request (a reaction, an edit, an
// invitation): once per key when it has one (asked, a struct naming the
// operation and its arguments, is what the key's fingerprint is taken of),
// else as it is with a new message id.
func (s *Service) keyed(ctx context.Context, sessionID, key string, asked any, send func(ctx context.Context, messageID string) (Result, error)) (Result, error) {
	if key == "" {
		return send(ctx, "")
	}
	fp, err := fingerprintJSON(asked)
	if err != nil {
		return Result{}, err
	}
	return s.once(ctx, sessionID, key, fp, send)
}

// once makes send once per key: send is given the message id reserved
// with the key and must send under it. fp is the fingerprint of what is
// asked (fingerprint of a Request; for the sends made apart from one,
// fingerprintJSON of a struct naming the operation and its arguments). Every
// operation that sends a message goes through here when given a key
// (KeyedSends).
func (s *Service) once(ctx context.Context, sessionID, key, fp string, send func(ctx context.Context, messageID string) (Result, error)) (Result, error) {
	if err := checkKey(key); err != nil {
		return Result{}, err
	}
	row, done, err := s.claimKey(ctx, sessionID, key, fp)
	if err != nil || done != nil {
		if done != nil {
			return *done, nil
		}
		return Result{}, err
	}
	flight := sessionID + "\x00" + key
	defer s.inflight.Delete(flight)
	res, err := send(ctx, row.MessageID)
	// Recorded whether or not the request is still waited for: a retry
	// must find it.
	bg := context.WithoutCancel(ctx)
	if err != nil {
		if sentNothing(err) {
			// Refused before anything reached WhatsApp: the key is free
			// for another request.
			if derr := s.db.SendKey.DeleteOneID(row.ID).Exec(bg); derr != nil && !ent.IsNotFound(derr) {
				s.log.Warn("freeing an idempotency key after a failed send failed", "session_id", sessionID, "err", derr)
			}
		}
		// Otherwise (a timeout, the request cancelled, WhatsApp's error)
		// the message may have gone out: the key stays pending with its
		// message id, and a retry makes the send again under that id,
		// which the recipient keeps once.
		return Result{}, err
	}
	up := s.db.SendKey.UpdateOneID(row.ID).SetState(sendkey.StateDone).SetNillableTimestamp(res.Timestamp).SetNillableScheduledAt(res.ScheduledAt)
	if res.Recipient != nil {
		if raw, err := json.Marshal(res.Recipient); err == nil {
			up.SetRecipient(raw)
		}
	}
	if uerr := up.Exec(bg); uerr != nil {
		// The message went out: the answer says so. A retry then finds
		// the key pending and the message in the store, and answers the
		// same.
		s.log.Warn("recording a send's idempotency key failed", "session_id", sessionID, "message_id", res.MessageID, "err", uerr)
	}
	return res, nil
}

// sentNothing reports whether a send failed before anything reached
// WhatsApp: refused input, a session not connected, a limit.
func sentNothing(err error) bool {
	switch fault.CodeOf(err) {
	case fault.Invalid, fault.NotFound, fault.NotConnected, fault.TooLarge, fault.Unsupported, fault.RateLimited, fault.Conflict:
		return true
	}
	return false
}

// fingerprint is the SHA-256 of a request without its key (hex).
func fingerprint(req Request) (string, error) {
	req.IdempotencyKey = ""
	return fingerprintJSON(req)
}

// fingerprintJSON is the SHA-256 of request's JSON (hex).
func fingerprintJSON(request any) (string, error) {
	body, err := json.Marshal(request)
	if err != nil {
		return "", fmt.Errorf("fingerprint the request: %w", err)
	}
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:]), nil
}

// claimKey takes key for this request: a new key is reserved with a new
// message id; a key done already answers its result (done); a key pending
// in another live send is a conflict; one whose send died is taken over.
func (s *Service) claimKey(ctx context.Context, sessionID, key, fingerprint string) (*ent.SendKey, *Result, error) {
	flight := sessionID + "\x00" + key
	for range 3 {
		now := s.now().UTC()
		row, err := s.db.SendKey.Create().SetSessionID(sessionID).SetKey(key).SetFingerprint(fingerprint).
			SetMessageID(whatsapp.NewMessageID()).SetOwner(s.instance).SetClaimedAt(now).SetCreatedAt(now).Save(ctx)
		if err == nil {
			s.inflight.Store(flight, true)
			return row, nil, nil
		}
		if !ent.IsConstraintError(err) {
			return nil, nil, fmt.Errorf("reserve the idempotency key: %w", err)
		}
		old, err := s.db.SendKey.Query().Where(sendkey.SessionID(sessionID), sendkey.Key(key)).Only(ctx)
		switch {
		case ent.IsNotFound(err):
			continue // freed meanwhile
		case err != nil:
			return nil, nil, fmt.Errorf("read the idempotency key: %w", err)
		case old.CreatedAt.Before(now.Add(-KeyTTL)):
			if _, err := s.db.SendKey.Delete().Where(sendkey.ID(old.ID), sendkey.CreatedAt(old.CreatedAt)).Exec(ctx); err != nil {
				return nil, nil, fmt.Errorf("drop an expired idempotency key: %w", err)
			}
			continue
		case old.Fingerprint != fingerprint:
			return nil, nil, keyConflict("idempotencyKey %q was used for another request within %s: a new request needs a new key", fault.Clip(key, fault.QuoteLen), KeyTTL)
		case old.State == sendkey.StateDone:
			return nil, keyResult(old), nil
		}
		if _, busy := s.inflight.Load(flight); busy || (s.sharedKeys && !sameNode(old.Owner, s.instance) && now.Sub(old.ClaimedAt) < keyLease && s.ownerLive(ctx, old.Owner)) {
			return nil, nil, keyConflict("a send with idempotencyKey %q is still being made: retry in a moment", fault.Clip(key, fault.QuoteLen))
		}
		// Its process died (one process on SQLite: an owner that is not
		// this one is gone; in a cluster an earlier run of this node is,
		// and so is a process that left the cluster), or it gave no sign
		// for longer than a send takes: take it over, once.
		n, err := s.db.SendKey.Update().
			Where(sendkey.ID(old.ID), sendkey.StateEQ(sendkey.StatePending), sendkey.Owner(old.Owner), sendkey.ClaimedAt(old.ClaimedAt)).
			SetOwner(s.instance).SetClaimedAt(now).Save(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("take over the idempotency key: %w", err)
		}
		if n == 0 {
			continue
		}
		if res, err := s.sentBefore(ctx, sessionID, old); err != nil || res != nil {
			return nil, res, err
		}
		s.inflight.Store(flight, true)
		return old, nil, nil
	}
	return nil, nil, keyConflict("a send with idempotencyKey %q is being made by another request: retry in a moment", fault.Clip(key, fault.QuoteLen))
}

// sentBefore looks for the message a dead attempt of key reserved: when
// WhatsApp took it (or it was scheduled), the key is done with it.
func (s *Service) sentBefore(ctx context.Context, sessionID string, k *ent.SendKey) (*Result, error) {
	m, err := s.db.Message.Query().Where(entmessage.SessionID(sessionID), entmessage.MessageID(k.MessageID), entmessage.FromMe(true)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look up message %s: %w", k.MessageID, err)
	}
	res := &Result{MessageID: m.MessageID}
	ts := m.Timestamp.UTC()
	switch m.Status {
	case entmessage.StatusSent, entmessage.StatusRevoked:
		res.Timestamp = &ts
	case entmessage.StatusScheduled:
		res.ScheduledAt = &ts
	default:
		return nil, nil // failed: make it again
	}
	err = s.db.SendKey.UpdateOneID(k.ID).SetState(sendkey.StateDone).SetNillableTimestamp(res.Timestamp).SetNillableScheduledAt(res.ScheduledAt).Exec(ctx)
	if err != nil {
		return nil, fmt.Errorf("record the idempotency key: %w", err)
	}
	return res, nil
}

// keyResult is the result a done key answers.
func keyResult(k *ent.SendKey) *Result {
	res := &Result{MessageID: k.MessageID, Timestamp: k.Timestamp, ScheduledAt: k.ScheduledAt}
	if len(k.Recipient) > 0 {
		var who whatsapp.Identity
		if json.Unmarshal(k.Recipient, &who) == nil {
			res.Recipient = &who
		}
	}
	return res
}

// pruneKeys drops the keys older than KeyTTL.
func (s *Service) pruneKeys(ctx context.Context) error {
	_, err := s.db.SendKey.Delete().Where(sendkey.CreatedAtLT(s.now().UTC().Add(-KeyTTL))).Exec(ctx)
	if err != nil {
		return fmt.Errorf("drop expired idempotency keys: %w", err)
	}
	return nil
}

// keyConflict is a CONFLICT about the idempotency key.
func keyConflict(format string, args ...any) error {
	return &fault.Error{Code: fault.Conflict, Field: "idempotencyKey", Message: fmt.Sprintf(format, args...)}
}
