package mediakeep

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/wagraph/wagraph/ent"
	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/fairpool"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/mediastore"
	"github.com/wagraph/wagraph/whatsapp"
)

// Store is where kept media lives: mediastore.Local or mediastore.S3.
type Store interface {
	Put(ctx context.Context, r io.Reader) (mediastore.Info, error)
	Open(ctx context.Context, sum string) (mediastore.Object, mediastore.Info, error)
	Delete(ctx context.Context, sum string) error
	Walk(ctx context.Context, fn func(mediastore.Info) error) error
}

// Deps are what a Keeper works with.
type Deps struct {
	DB     *ent.Client
	Store  Store
	Logger *slog.Logger
	// Now is the clock of the due times and the retention (nil: time.Now).
	Now func() time.Time
}

// Setup is what a test changes of a server's keeping: a store of its own
// (nil: --media-store's) and the keeper's timings (Poll, AskWait, …). What
// is kept is the settings' (--media-keep, --media-max-size,
// --media-retention).
type Setup struct {
	Store   Store
	Options Options
}

// Open is the keeper of a server: of setup's store, else of the store
// media (--media-store) names, opened here (a local one in dataDir),
// keeping what media says. With no store (none, PostgreSQL's default) it
// returns nil: a nil Keeper keeps nothing (its methods are safe to call)
// and the media is downloaded on demand.
func Open(media config.MediaStore, dataDir string, setup Setup, db *ent.Client, log *slog.Logger) (*Keeper, error) {
	store := setup.Store
	if store == nil {
		opened, err := mediastore.New(media.Choice(dataDir))
		if err != nil || opened == nil {
			return nil, err
		}
		store = opened
	}
	opts := setup.Options
	opts.Kinds, opts.MaxSize, opts.Retention = media.Keep, media.MaxSize, media.Retention
	return New(Deps{DB: db, Store: store, Logger: log}, opts), nil
}

// Store is the store the keeper keeps in; nil for a nil Keeper.
func (k *Keeper) Store() Store {
	if k == nil {
		return nil
	}
	return k.store
}

// Keeper downloads the media the message store marked due into the
// store, while Run runs.
type Keeper struct {
	db    *ent.Client
	wa    whatsapp.Runner // Run's
	store Store
	held  func() []string // Run's
	log   *slog.Logger
	now   func() time.Time
	opts  Options
	pool  *fairpool.Pool // the downloads at once, a session the tenant

	mu       sync.Mutex
	claimed  map[int]string // the rows whose download is under way here, to their session
	perSess  map[string]int
	rotation int            // where the next claim pass starts among the sessions
	wg       sync.WaitGroup // the downloads and the prune loop
	finished chan struct{}  // a download ended: claim again
}

// New returns a keeper; Run runs it.
func New(deps Deps, opts Options) *Keeper {
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	opts = opts.withDefaults()
	return &Keeper{
		db: deps.DB, store: deps.Store, log: deps.Logger, now: deps.Now, opts: opts,
		pool: fairpool.New(opts.Concurrency), claimed: map[int]string{}, perSess: map[string]int{},
		finished: make(chan struct{}, 1),
	}
}

// Keeps is what the keeper keeps, for the message store to mark the
// downloads it owes (messaging.Store.KeepMedia); nil for a nil Keeper.
func (k *Keeper) Keeps() *Options {
	if k == nil {
		return nil
	}
	return &k.opts
}

// Run downloads the due media of the sessions held (nil: all; in a
// cluster, those this process runs) through wa (the session manager, or a
// cluster's router) until ctx ends, and, with a retention, prunes; it then
// waits for the downloads under way, whose context ends with it: a row
// not kept stays due for the next start. A nil Keeper returns at once.
func (k *Keeper) Run(ctx context.Context, wa whatsapp.Runner, held func() []string) {
	if k == nil {
		return
	}
	k.wa, k.held = wa, held
	if k.opts.Retention > 0 {
		k.wg.Go(func() { k.runPrune(ctx) })
	}
	k.run(ctx)
	k.wg.Wait()
}

func (k *Keeper) run(ctx context.Context) {
	tick := time.NewTicker(k.opts.Poll)
	defer tick.Stop()
	for {
		if err := k.claim(ctx); err != nil && ctx.Err() == nil {
			k.log.Warn("media keeper: reading the due downloads failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-k.finished:
		}
	}
}

// claim starts the due downloads not under way here, each in a goroutine
// of its own waiting for a slot of the pool. Fair between sessions twice:
// each session has at most Concurrency downloads claimed (one session's
// thousand due media are not all read into memory ahead of another's
// one), and the pool hands a free slot to the session holding the fewest.
// At most 8×Concurrency are claimed in all; the sessions' order rotates
// from pass to pass so that, past that, none waits on the others' turn
// for ever.
func (k *Keeper) claim(ctx context.Context) error {
	now := k.now()
	q := k.db.Message.Query().Where(entmessage.MediaDueLTE(now))
	if k.held != nil {
		held := k.held()
		if len(held) == 0 {
			return nil
		}
		q = q.Where(entmessage.SessionIDIn(held...))
	}
	sessions, err := q.Unique(true).Select(entmessage.FieldSessionID).Strings(ctx)
	if err != nil {
		return fmt.Errorf("sessions with due media: %w", err)
	}
	slices.Sort(sessions)
	k.mu.Lock()
	start := 0
	if len(sessions) > 0 {
		start = k.rotation % len(sessions)
		k.rotation++
	}
	k.mu.Unlock()
	for i := range sessions {
		sess := sessions[(start+i)%len(sessions)]
		k.mu.Lock()
		free := min(k.opts.Concurrency-k.perSess[sess], 8*k.opts.Concurrency-len(k.claimed))
		busy := make([]int, 0, len(k.claimed))
		for id, s := range k.claimed {
			if s == sess {
				busy = append(busy, id)
			}
		}
		k.mu.Unlock()
		if free <= 0 {
			continue
		}
		rows, err := k.db.Message.Query().
			Where(entmessage.SessionID(sess), entmessage.MediaDueLTE(now), entmessage.IDNotIn(busy...)).
			Order(ent.Asc(entmessage.FieldMediaDue), ent.Asc(entmessage.FieldID)).
			Limit(free).IDs(ctx)
		if err != nil {
			return fmt.Errorf("due media of session %s: %w", sess, err)
		}
		for _, id := range rows {
			k.start(ctx, sess, id)
		}
	}
	return nil
}

func (k *Keeper) start(ctx context.Context, sess string, id int) {
	k.mu.Lock()
	k.claimed[id] = sess
	k.perSess[sess]++
	k.mu.Unlock()
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		defer func() {
			k.mu.Lock()
			delete(k.claimed, id)
			if k.perSess[sess]--; k.perSess[sess] == 0 {
				delete(k.perSess, sess)
			}
			k.mu.Unlock()
			select {
			case k.finished <- struct{}{}:
			default:
			}
		}()
		lease, err := k.pool.Acquire(fairpool.WithTenant(ctx, sess))
		if err != nil {
			return // stopping
		}
		defer lease.Release()
		k.keep(lease.Context(), id)
	}()
}

// keep downloads the media of message row id into the store, once its
// turn came: read again, as a media-update or another process may have
// changed it meanwhile.
func (k *Keeper) keep(ctx context.Context, id int) {
	m, err := k.db.Message.Get(ctx, id)
	if ent.IsNotFound(err) || ctx.Err() != nil {
		return // deleted with its session, or stopping
	}
	if err != nil {
		k.log.Warn("media keeper: read a message", "err", err)
		return
	}
	if m.MediaDue == nil || m.MediaDue.After(k.now()) {
		return // done, or put off, since the claim
	}
	log := k.log.With("session_id", m.SessionID, "message_id", m.MessageID)
	var ref whatsapp.MediaRef
	if err := json.Unmarshal(m.Media, &ref); err != nil || len(m.Media) == 0 || !k.opts.Wants(m.Type, int64(ref.FileLength), m.ViewOnce) {
		k.settle(ctx, log, m, "", nil)
		return
	}
	// The same bytes this session kept already (a media forwarded to it
	// again, sent and received back): the message refers to them. Only
	// this session's: the hash is the sender's claim, unchecked until a
	// download, and naming another tenant's file must not give it.
	if len(ref.FileSHA256) > 0 {
		sum := hex.EncodeToString(ref.FileSHA256)
		mine, err := k.db.Message.Query().Where(entmessage.SessionID(m.SessionID), entmessage.MediaSha256(sum)).Exist(ctx)
		if err == nil && mine {
			if obj, info, err := k.store.Open(ctx, sum); err == nil {
				obj.Close()
				k.settle(ctx, log, m, info.SHA256, nil)
				return
			}
		}
	}
	file, err := whatsapp.DownloadFile(ctx, k.wa, m.SessionID, ref, k.opts.MaxSize)
	if err != nil {
		k.failed(ctx, log, m, err)
		return
	}
	info, err := k.store.Put(ctx, file.Reader())
	file.Close()
	if err != nil {
		k.failed(ctx, log, m, err)
		return
	}
	k.settle(ctx, log, m, info.SHA256, nil)
}

// settle ends the keeping of m: kept as sum, or ("") skipped or given up.
func (k *Keeper) settle(ctx context.Context, log *slog.Logger, m *ent.Message, sum string, cause error) {
	u := k.db.Message.UpdateOneID(m.ID).ClearMediaDue()
	if sum != "" {
		u.SetMediaSha256(sum)
	}
	switch err := u.Exec(ctx); {
	case ent.IsNotFound(err) && sum != "":
		// Deleted (with its session) while it was downloaded: the file
		// goes too, unless another message refers to it.
		k.dropUnreferenced(ctx, []string{sum})
		return
	case err != nil && !ent.IsNotFound(err) && ctx.Err() == nil:
		log.Warn("media keeper: record the kept media", "err", err)
		return
	}
	switch {
	case sum != "":
		log.Debug("media kept", "sha256", sum)
	case cause != nil:
		log.Warn("media keeper: gave up; the media route downloads it on demand", "tries", m.MediaTries+1, "err", cause)
	}
}

// failed puts the download off by the backoff, or gives up after
// MaxTries. Media WhatsApp's host no longer has is asked again from the
// phone: its answer (messages.media-update, the new location) makes the
// download due at once (the message store); AskWait is the fallback when
// no answer comes.
func (k *Keeper) failed(ctx context.Context, log *slog.Logger, m *ent.Message, cause error) {
	if ctx.Err() != nil {
		return // stopping: the row stays due
	}
	switch fault.CodeOf(cause) {
	case fault.TooLarge:
		log.Info("media keeper: larger than the media's size bound; not kept", "max_size", k.opts.MaxSize)
		k.settle(ctx, log, m, "", nil)
		return
	}
	tries := m.MediaTries + 1
	if tries >= k.opts.MaxTries {
		k.settle(ctx, log, m, "", cause)
		return
	}
	wait := Backoff(tries)
	gone := fault.CodeOf(cause) == fault.NotFound
	if gone {
		wait = max(wait, k.opts.AskWait)
	}
	// Put off before asking: the phone's answer may come before this
	// write would, and must not be undone by it.
	err := k.db.Message.UpdateOneID(m.ID).SetMediaTries(tries).SetMediaDue(k.now().Add(wait)).Exec(ctx)
	if err != nil {
		if !ent.IsNotFound(err) {
			log.Warn("media keeper: put a download off", "err", err)
		}
		return
	}
	if !gone {
		log.Info("media keeper: download failed; tried again later", "tries", tries, "retry_in", wait, "err", cause)
		return
	}
	var ref whatsapp.MediaRef
	_ = json.Unmarshal(m.Media, &ref)
	msg := whatsapp.Message{ID: m.MessageID, Chat: m.Chat, Sender: m.Sender, FromMe: m.FromMe, Type: m.Type, Timestamp: m.Timestamp, Media: &ref}
	if _, err := whatsapp.OpRequestMediaRetry().Do(ctx, k.wa, m.SessionID, msg); err != nil {
		log.Info("media keeper: the media is gone from WhatsApp's servers and the phone could not be asked; tried again later", "retry_in", wait, "err", err)
		return
	}
	log.Info("media keeper: the media is gone from WhatsApp's servers; the phone was asked to upload it again", "tries", tries)
}
