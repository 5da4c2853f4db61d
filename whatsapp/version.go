package whatsapp

// The WhatsApp Web version the sessions announce. WhatsApp refuses clients
// whose version is too old (a 405 at login, "client outdated") months after
// the library that built them was current, so a gateway that only ships a
// version string stops working for every user at once. In auto mode the
// version is read from WhatsApp Web's page at start, every day and right
// after a refusal, and the refused sessions reconnect once a newer one is
// known.
//
// The version is set per client (Client.GetClientPayload) rather than with
// store.SetWAVersion, which writes whatsmeow's package variables unlocked
// while other clients read them to connect.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waWa6"
	"go.mau.fi/whatsmeow/store"
)

// VersionMode says where the announced version comes from.
type VersionMode int

const (
	// VersionAuto reads the current version from WhatsApp Web, keeping the
	// built-in one until a read succeeds.
	VersionAuto VersionMode = iota
	// VersionBuiltin announces whatsmeow's own version.
	VersionBuiltin
	// VersionPinned announces the version given.
	VersionPinned
)

// VersionSetting is --wa-version read once, when the settings are: where
// the announced version comes from and, when pinned, the version. The zero
// value is auto.
type VersionSetting struct {
	Mode   VersionMode
	Pinned store.WAVersionContainer // with VersionPinned
}

// errVersionSetting is what --wa-version wants, said to whoever set it.
var errVersionSetting = errors.New("want auto, builtin or a version such as 2.3000.1045649367")

// ParseVersionSetting reads --wa-version: auto, builtin or a pinned
// version (ParseVersion's rules).
func ParseVersionSetting(s string) (VersionSetting, error) {
	switch s = strings.TrimSpace(s); s {
	case "auto":
		return VersionSetting{Mode: VersionAuto}, nil
	case "builtin":
		return VersionSetting{Mode: VersionBuiltin}, nil
	}
	v, err := ParseVersion(s)
	if err != nil {
		return VersionSetting{}, errVersionSetting
	}
	return VersionSetting{Mode: VersionPinned, Pinned: v}, nil
}

// String is the setting as --wa-version takes it.
func (s VersionSetting) String() string {
	switch s.Mode {
	case VersionBuiltin:
		return "builtin"
	case VersionPinned:
		return s.Pinned.String()
	}
	return "auto"
}

// VersionOptions configure Versions.
type VersionOptions struct {
	Setting VersionSetting
	// HTTPClient reads WhatsApp Web's page (auto); nil is a client of
	// its own. In sandbox mode it reaches the simulated network's page.
	HTTPClient *http.Client
	Logger     *slog.Logger // nil discards
	// Every is how often auto mode reads the page again; 0 is a day.
	Every time.Duration
}

// ReadTimeout bounds one read of WhatsApp Web's page.
const ReadTimeout = 30 * time.Second

// Versions keeps the version the sessions announce.
type Versions struct {
	mode   VersionMode
	client *http.Client
	log    *slog.Logger
	every  time.Duration
	kick   chan struct{} // a refusal asks for a read now

	mu      sync.Mutex
	current store.WAVersionContainer
	newer   []func() // called when a newer version is known
}

// ParseVersion reads a pinned version, 2.3000.N: three numbers, the first
// 2 (WhatsApp Web's), the others above 0.
func ParseVersion(s string) (store.WAVersionContainer, error) {
	parts := strings.Split(s, ".")
	var v store.WAVersionContainer
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 32)
		if len(parts) != 3 || err != nil || n == 0 || (i == 0 && n != 2) {
			return store.WAVersionContainer{}, errors.New("want a version such as 2.3000.1045649367")
		}
		v[i] = uint32(n)
	}
	return v, nil
}

// NewVersions returns the version keeper of opts.
func NewVersions(opts VersionOptions) (*Versions, error) {
	v := &Versions{mode: opts.Setting.Mode, client: opts.HTTPClient, log: opts.Logger, every: opts.Every, kick: make(chan struct{}, 1)}
	if v.log == nil {
		v.log = slog.New(slog.DiscardHandler)
	}
	if v.every == 0 {
		v.every = 24 * time.Hour
	}
	if v.client == nil {
		v.client = &http.Client{}
	}
	v.client = &http.Client{Transport: v.client.Transport, Timeout: ReadTimeout, CheckRedirect: v.client.CheckRedirect}
	v.current = store.GetWAVersion()
	if v.mode == VersionPinned {
		if opts.Setting.Pinned.IsZero() {
			return nil, errors.New("a pinned version is missing")
		}
		v.current = opts.Setting.Pinned
	}
	v.log.Info("WhatsApp Web version", "version", v.current.String(), "source", v.source())
	return v, nil
}

func (v *Versions) source() string {
	return map[VersionMode]string{VersionAuto: "built-in until WhatsApp Web is read", VersionBuiltin: "built-in", VersionPinned: "pinned"}[v.mode]
}

// Current is the version announced now.
func (v *Versions) Current() store.WAVersionContainer {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.current
}

// String is the version announced now, as 2.3000.N.
func (v *Versions) String() string { return v.Current().String() }

// OnNewer registers fn, called (on the keeper's goroutine) each time a
// newer version becomes known.
func (v *Versions) OnNewer(fn func()) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.newer = append(v.newer, fn)
}

// Refused tells the keeper WhatsApp refused a session as outdated: in auto
// mode it reads the page at once.
func (v *Versions) Refused() {
	select {
	case v.kick <- struct{}{}:
	default:
	}
}

// Refresh reads the current version from WhatsApp Web (auto mode only) and
// adopts it when it is newer than the one announced. It reports whether it
// did.
func (v *Versions) Refresh(ctx context.Context) (bool, error) {
	if v.mode != VersionAuto {
		return false, nil
	}
	latest, err := whatsmeow.GetLatestVersion(ctx, v.client)
	if err != nil {
		return false, fmt.Errorf("read the current WhatsApp Web version: %w", err)
	}
	v.mu.Lock()
	old := v.current
	adopt := old.LessThan(*latest)
	if adopt {
		v.current = *latest
	}
	listeners := append([]func(){}, v.newer...)
	v.mu.Unlock()
	if !adopt {
		return false, nil
	}
	v.log.Info("WhatsApp Web version", "version", latest.String(), "previous", old.String(), "source", "WhatsApp Web")
	for _, fn := range listeners {
		fn()
	}
	return true, nil
}

// Prime reads the current version once, before the sessions start (auto
// mode): they start announcing it, not one WhatsApp would refuse first. A
// failed read keeps the version in use, with a warning.
func (v *Versions) Prime(ctx context.Context) {
	if _, err := v.Refresh(ctx); err != nil && ctx.Err() == nil {
		v.log.Warn("could not read the current WhatsApp Web version; the sessions announce the one in use", "version", v.Current().String(), "err", err)
	}
}

// Run keeps the version current until ctx ends: in auto mode it reads the
// page every Every, and at once after a refusal; the first read is the
// caller's (Prime), before the sessions start. Its caller owns it.
func (v *Versions) Run(ctx context.Context) {
	if v.mode != VersionAuto {
		return
	}
	t := time.NewTimer(v.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-v.kick:
			if !t.Stop() {
				select {
				case <-t.C:
				default:
				}
			}
		}
		if _, err := v.Refresh(ctx); err != nil && ctx.Err() == nil {
			// Keep announcing the version in use: a failed read says
			// nothing about whether it is still accepted.
			v.log.Warn("could not read the current WhatsApp Web version; keeping the one in use", "version", v.Current().String(), "err", err)
		}
		t.Reset(v.every)
	}
}

// payload is the client payload of dev announcing the current version.
func (v *Versions) payload(dev *store.Device) *waWa6.ClientPayload {
	p := dev.GetClientPayload()
	cur := v.Current()
	if p.UserAgent != nil {
		p.UserAgent.AppVersion = cur.ProtoAppVersion()
	}
	if p.DevicePairingData != nil {
		h := cur.Hash()
		p.DevicePairingData.BuildHash = h[:]
	}
	return p
}

// outdatedPrefix starts the reason of a session WhatsApp refused as
// outdated (operations.md).
const outdatedPrefix = "client outdated: "

// announced is the version the manager's clients announce.
func (m *Manager) announced() store.WAVersionContainer {
	if m.versions == nil {
		return store.GetWAVersion()
	}
	return m.versions.Current()
}

// announce makes cli announce the keeper's current version at each
// (re)connect.
func (m *Manager) announce(cli *whatsmeow.Client) {
	if m.versions == nil {
		return
	}
	cli.GetClientPayload = func() *waWa6.ClientPayload { return m.versions.payload(cli.Store) }
}

// refusedAsOutdated is the reason of a session refused with version v, and
// asks the keeper for a newer one.
func (m *Manager) refusedAsOutdated() string {
	v := m.announced()
	m.log.Warn("WhatsApp refused the client version as outdated", "version", v.String())
	if m.versions != nil {
		m.versions.Refused()
	}
	return outdatedPrefix + "WhatsApp refused version " + v.String()
}

// reconnectOutdated connects again the sessions WhatsApp refused as
// outdated: a newer version is known.
func (m *Manager) reconnectOutdated() {
	m.mu.Lock()
	all := make([]*session, 0, len(m.sessions))
	for _, s := range m.sessions {
		all = append(all, s)
	}
	m.mu.Unlock()
	var ids []string
	for _, s := range all {
		s.mu.Lock()
		if s.cli == nil && s.st.status == StatusDisconnected && strings.HasPrefix(s.st.reason, outdatedPrefix) {
			ids = append(ids, s.id)
		}
		s.mu.Unlock()
	}
	if len(ids) == 0 {
		return
	}
	m.log.Info("reconnecting the sessions refused as outdated", "sessions", len(ids), "version", m.announced().String())
	if err := m.Restore(m.ctx, ids); err != nil {
		m.log.Warn("reconnecting sessions refused as outdated", "err", err)
	}
}

// BuiltinVersion is the version whatsmeow itself announces.
func BuiltinVersion() string { return store.GetWAVersion().String() }
