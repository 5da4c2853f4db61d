package natsstream

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// SubjectsError is an existing stream whose subjects do not cover
// Subjects: the events would not land in it.
type SubjectsError struct {
	Stream   string
	Subjects []string
}

func (e *SubjectsError) Error() string {
	return fmt.Sprintf("NATS stream %q exists with subjects %v, which do not cover %s: add %s to its subjects, or name another stream with --nats-stream",
		e.Stream, e.Subjects, Subjects, Subjects)
}

// connectOptions are the options of every connection: a name the broker
// shows, the connect timeout, and the credentials file when given.
func connectOptions(creds string, timeout time.Duration) []nats.Option {
	opts := []nats.Option{nats.Name("wagraph"), nats.Timeout(timeout)}
	if creds != "" {
		opts = append(opts, nats.UserCredentials(creds))
	}
	return opts
}

// ensureStream creates the stream with Subjects when it is missing, and
// checks that an existing one covers them (it is used as it is otherwise).
func ensureStream(ctx context.Context, js jetstream.JetStream, name string) error {
	s, err := js.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{Subjects}, Storage: jetstream.FileStorage})
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return ensureStream(ctx, js, name) // another process created it meanwhile
		}
		if err != nil {
			return fmt.Errorf("create NATS stream %q with subjects %s: %w", name, Subjects, explain(err))
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("NATS stream %q: %w", name, explain(err))
	}
	subjects := s.CachedInfo().Config.Subjects
	if !slices.ContainsFunc(subjects, func(f string) bool { return covers(f, Subjects) }) {
		return &SubjectsError{Stream: name, Subjects: subjects}
	}
	return nil
}

// explain adds what to do to the errors a person can act on.
func explain(err error) error {
	switch {
	case errors.Is(err, jetstream.ErrJetStreamNotEnabled), errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount):
		return fmt.Errorf("%w (start nats-server with JetStream: -js, or enable it for the account)", err)
	case errors.Is(err, nats.ErrNoResponders):
		return fmt.Errorf("%w (is JetStream enabled on the broker? nats-server -js)", err)
	}
	return err
}

// covers reports whether every subject that subject (a filter such as
// wagraph.>) matches is matched by filter too.
func covers(filter, subject string) bool {
	ft, st := strings.Split(filter, "."), strings.Split(subject, ".")
	for i, f := range ft {
		if f == ">" {
			return i < len(st) // one or more tokens, whatever they are
		}
		if i >= len(st) {
			return false
		}
		switch s := st[i]; {
		case s == ">":
			return false // more subjects than this filter's rest matches
		case f == "*":
		case f != s: // a literal token, or subject's * under a literal
			return false
		}
	}
	return len(ft) == len(st)
}

// Redact is url (comma-separated URLs) with each password replaced, for
// logs and messages: credentials in the URL are never shown.
func Redact(urls string) string {
	parts := strings.Split(urls, ",")
	for i, raw := range parts {
		raw = strings.TrimSpace(raw)
		u, err := url.Parse(raw)
		switch {
		case err != nil:
			parts[i] = "<unparsable URL>"
		case u.User != nil:
			if _, has := u.User.Password(); has {
				parts[i] = u.Redacted()
			} else {
				// A token alone (nats://TOKEN@host) is a secret too.
				u.User = url.User("xxxxx")
				parts[i] = u.String()
			}
		default:
			parts[i] = raw
		}
	}
	return strings.Join(parts, ",")
}

// Check reaches the broker at urls (with the credentials file creds) and
// looks at the stream, within timeout, changing nothing: it says what it
// found, or the error naming what fails (`wagraph doctor`).
func Check(ctx context.Context, urls, creds, stream string, timeout time.Duration) (string, error) {
	if stream == "" {
		stream = DefaultStream
	}
	nc, err := nats.Connect(urls, connectOptions(creds, timeout)...)
	if err != nil {
		return "", fmt.Errorf("cannot reach the NATS broker at %s: %w (is it running, and are --nats-url and --nats-creds right?)", Redact(urls), err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	at := fmt.Sprintf("NATS at %s", nc.ConnectedUrlRedacted())
	s, err := js.Stream(ctx, stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Sprintf("%s reached, JetStream on; stream %q does not exist yet: serve creates it with subjects %s", at, stream, Subjects), nil
	}
	if err != nil {
		return "", fmt.Errorf("%s reached, but stream %q cannot be read: %w", at, stream, explain(err))
	}
	subjects := s.CachedInfo().Config.Subjects
	if !slices.ContainsFunc(subjects, func(f string) bool { return covers(f, Subjects) }) {
		return "", &SubjectsError{Stream: stream, Subjects: subjects}
	}
	return fmt.Sprintf("%s reached, JetStream on; stream %q has subjects %v", at, stream, subjects), nil
}
