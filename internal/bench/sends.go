package bench

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wagraph/wagraph/internal/media"
	"github.com/wagraph/wagraph/whatsapp/rawclient"
	"github.com/wagraph/wagraph/whatsapp/sandbox"
)

// Goal 2 of issue 11: wagraph's REST sends reach this share of raw
// whatsmeow's SendMessage calls to the same network in the same run.
const goalSends = 0.70

// sendRecipients is how many network contacts the sends go to: worker w
// writes to contact w % sendRecipients, so that no chat carries all the
// load (a real gateway writes to many people).
const sendRecipients = 16

// Account numbers of the simulated network: the raw clients' accounts, the
// wagraph sessions' and the contacts they write to are apart, so that
// each sender account has the same devices (its phone and one linked
// device) on both sides. (A number ending in 0000 is never on the
// sandbox network.)
const (
	rawAccounts     = 4915100001000
	wagraphAccounts = 4915200001000
	contactAccounts = 4915300001000
)

func accountNumber(base, i int) string { return fmt.Sprint(base + i) }

// sendCase is one of goal 2's cases: a number of sending sessions and a
// kind of message.
type sendCase struct {
	Sessions int
	Kind     string // "text" or "image"
}

func (c sendCase) String() string { return fmt.Sprintf("%d session(s), %s", c.Sessions, c.Kind) }

// sendCasesOf is every case of the session counts, text then image.
func sendCasesOf(sessions []int) []sendCase {
	var out []sendCase
	for _, n := range sessions {
		for _, k := range []string{"text", "image"} {
			out = append(out, sendCase{Sessions: n, Kind: k})
		}
	}
	return out
}

// sendSide is one side of the comparison: raw whatsmeow clients in this
// process, or wagraph's REST.
const (
	sideRaw     = "raw"
	sideWagraph = "wagraph"
)

// sendMeasurement is one side's figures for one case in one round.
type sendMeasurement struct {
	Messages  int // acknowledged sends that ended inside the window
	Errors    int // failed sends that ended inside the window
	Window    time.Duration
	P50, P99  time.Duration
	ServerCPU time.Duration // wagraph's processes together (idle on the raw side)
	// ServerCPUs is each wagraph process's share of ServerCPU, in order.
	ServerCPUs []time.Duration
	// Forwarded is how many of Messages went to a process other than the
	// session's holder, which forwarded them (with -servers above 1).
	Forwarded int
	NetCPU    time.Duration // the network process
	DBCPU     time.Duration // PostgreSQL's processes (0 on SQLite)
	SelfCPU   time.Duration // this process: the raw clients, or the HTTP clients
	FirstErr  string
}

func (m sendMeasurement) perSecond() float64 {
	if m.Window <= 0 {
		return 0
	}
	return float64(m.Messages) / m.Window.Seconds()
}

func (m sendMeasurement) perMessage(d time.Duration) time.Duration {
	if m.Messages == 0 {
		return 0
	}
	return d / time.Duration(m.Messages)
}

// sendRound is every case's two sides in one round, keyed by case then
// side.
type sendRound map[sendCase]map[string]sendMeasurement

// sendCPUs reads the CPU time of the processes: each wagraph server, the
// network and this one.
type sendCPUs struct {
	servers       func() ([]time.Duration, error)
	network, self func() (time.Duration, error)
	db            func() (time.Duration, error) // nil: not measured
}

type cpuReading struct {
	servers           []time.Duration
	network, self, db time.Duration
}

func (c sendCPUs) read() (cpuReading, error) {
	var r cpuReading
	var err error
	if r.servers, err = c.servers(); err != nil {
		return r, err
	}
	if r.network, err = c.network(); err != nil {
		return r, err
	}
	if r.self, err = c.self(); err != nil || c.db == nil {
		return r, err
	}
	r.db, err = c.db()
	return r, err
}

// sendFunc sends the i-th message of worker w, and says whether it went
// to a process that forwarded it to the session's holder.
type sendFunc func(ctx context.Context, w, i int) (forwarded bool, err error)

// sendSample is one send: when it ended, how long it took, how it went.
type sendSample struct {
	end       time.Time
	lat       time.Duration
	err       error
	forwarded bool
}

// measureSends puts a closed loop of workers on send for the warm-up and
// then the window; only sends that end inside the window count, and the
// processes' CPU is read at the window's two ends.
func measureSends(ctx context.Context, workers int, warmup, duration time.Duration, cpus sendCPUs, send sendFunc) (sendMeasurement, error) {
	from := time.Now().Add(warmup)
	to := from.Add(duration)
	// A send still running at the end may take its time: the window's
	// figures are taken at its end, and the workers only stop sending.
	ctx, cancel := context.WithDeadline(ctx, to.Add(30*time.Second))
	defer cancel()
	samples := make([][]sendSample, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			out := make([]sendSample, 0, 1024)
			for i := 0; ctx.Err() == nil; i++ {
				begin := time.Now()
				if begin.After(to) {
					break
				}
				fwd, err := send(ctx, w, i)
				end := time.Now()
				out = append(out, sendSample{end: end, lat: end.Sub(begin), err: err, forwarded: fwd})
			}
			samples[w] = out
		})
	}
	sleepUntil(ctx, from)
	start, cpuErr := cpus.read()
	sleepUntil(ctx, to)
	var stop cpuReading
	if cpuErr == nil {
		stop, cpuErr = cpus.read()
	}
	wg.Wait()
	if time.Now().Before(to) {
		if err := ctx.Err(); err != nil {
			return sendMeasurement{}, err
		}
	}
	if cpuErr != nil {
		return sendMeasurement{}, cpuErr
	}
	m := sendMeasurement{
		Window: to.Sub(from), NetCPU: stop.network - start.network, SelfCPU: stop.self - start.self, DBCPU: stop.db - start.db,
	}
	for i := range min(len(start.servers), len(stop.servers)) {
		d := stop.servers[i] - start.servers[i]
		m.ServerCPUs = append(m.ServerCPUs, d)
		m.ServerCPU += d
	}
	var lats []time.Duration
	for _, ws := range samples {
		for _, s := range ws {
			if s.end.Before(from) || s.end.After(to) {
				continue
			}
			if s.err != nil {
				if m.Errors == 0 {
					m.FirstErr = s.err.Error()
				}
				m.Errors++
				continue
			}
			m.Messages++
			if s.forwarded {
				m.Forwarded++
			}
			lats = append(lats, s.lat)
		}
	}
	slices.Sort(lats)
	m.P50, m.P99 = percentile(lats, 0.50), percentile(lats, 0.99)
	return m, nil
}

// senderOf is the session worker w sends its i-th message from: the
// workers take the sessions in turn, so that all of them send and the
// concurrency is the same whatever their number.
func senderOf(w, i, workers, sessions int) int { return (w + i*workers) % sessions }

// sendImage is goal 2's small image: a PNG of a few KB, made here so that
// both sides send the same bytes.
func sendImage() []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 64, 48))
	seed := uint32(2463534242)
	for y := range 48 {
		for x := range 64 {
			seed ^= seed << 13
			seed ^= seed >> 17
			seed ^= seed << 5
			img.Set(x, y, color.NRGBA{uint8(x * 4), uint8(y * 5), uint8(seed), 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err) // an in-memory image always encodes
	}
	return buf.Bytes()
}

// sendSides holds what both sides send with.
type sendSides struct {
	srvs     servers
	client   *http.Client
	sessions []string            // wagraph's session ids
	owners   map[string]string   // each session's holder (node id), with several servers
	raw      []*rawclient.Client // the raw clients, one per session
	image    []byte
	imageB64 string
	prepared rawclient.Image // what wagraph's preparation makes of image
	seq      atomic.Int64    // texts' numbers, so that no two are alike
}

func (s *sendSides) send(side string, c sendCase, workers int) sendFunc {
	return func(ctx context.Context, w, i int) (bool, error) {
		from := senderOf(w, i, workers, c.Sessions)
		to := accountNumber(contactAccounts, w%sendRecipients)
		text := fmt.Sprintf("bench %d", s.seq.Add(1))
		via := serverOf(w, i, len(s.srvs))
		fwd := len(s.srvs) > 1 && s.owners[s.sessions[from]] != nodeID(via)
		switch {
		case side == sideRaw && c.Kind == "text":
			_, err := s.raw[from].SendText(ctx, to, text)
			return false, err
		case side == sideRaw:
			_, err := s.raw[from].SendImage(ctx, to, s.prepared, "")
			return false, err
		case c.Kind == "text":
			return fwd, s.rest(ctx, via, s.sessions[from], "text", map[string]any{"number": to, "text": text})
		default:
			return fwd, s.rest(ctx, via, s.sessions[from], "image", map[string]any{"number": to, "source": s.imageB64})
		}
	}
}

// rest sends one message through the REST of server via; anything but a
// 200 success with a message id is an error.
func (s *sendSides) rest(ctx context.Context, via int, session, kind string, body map[string]any) error {
	srv := s.srvs[via]
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.base+"/api/v1/session/"+session+"/message/"+kind, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", srv.token)
	res, err := s.client.Do(req)
	if err != nil {
		return err
	}
	raw, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	res.Body.Close()
	if err != nil {
		return err
	}
	var out struct {
		Status string
		Data   struct{ MessageID string }
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(raw, &out) != nil || out.Status != "success" || out.Data.MessageID == "" {
		return fmt.Errorf("HTTP %d %.200s", res.StatusCode, raw)
	}
	return nil
}

// runSends measures goal 2: the same sends from raw whatsmeow clients in
// this process and through wagraph's REST, to one network process, in
// interleaved rounds.
func runSends(ctx context.Context, e *env, out io.Writer) error {
	sessionCounts := e.SendSessions
	if len(sessionCounts) == 0 {
		sessionCounts = []int{1, 50}
	}
	workers := e.SendWorkers
	if workers < 1 {
		workers = 16
	}
	most := slices.Max(sessionCounts)
	duration, warmup := e.SendDuration, e.SendWarmup
	if duration <= 0 {
		duration = e.Duration
	}
	if warmup <= 0 {
		warmup = e.Warmup
	}
	net, err := startNetwork(e)
	if err != nil {
		return err
	}
	defer net.stop()
	srvs, err := startServers(e, e.servers(), net.serverArgs()...)
	if err != nil {
		return err
	}
	defer srvs.stop()
	remote, err := sandbox.Dial(ctx, net.control, nil)
	if err != nil {
		return err
	}
	defer remote.Close()
	st, err := rawclient.OpenStore(ctx, filepath.Join(e.dir, "raw.db"), remote)
	if err != nil {
		return err
	}
	defer st.Close()

	sides := &sendSides{srvs: srvs, client: newClient(workers), image: sendImage()}
	defer sides.client.CloseIdleConnections()
	sides.imageB64 = base64.StdEncoding.EncodeToString(sides.image)
	f, err := media.NewPreparer("", nil).Image(ctx, sides.image, "")
	if err != nil {
		return fmt.Errorf("prepare the image: %w", err)
	}
	sides.prepared = rawclient.Image{Data: f.Data, Mimetype: f.Mimetype, Thumbnail: f.Thumbnail, Width: f.Width, Height: f.Height}

	linkStart := time.Now()
	sides.sessions = make([]string, most)
	sides.raw = make([]*rawclient.Client, most)
	defer func() {
		for _, c := range sides.raw {
			if c != nil {
				c.Close()
			}
		}
	}()
	if err := inParallel(ctx, most, 4, func(ctx context.Context, i int) error {
		// Each process links its share: the creating process holds the
		// session first, so the cluster starts near its spread.
		id, err := srvs[i%len(srvs)].linkSession(ctx, fmt.Sprintf("send-%d", i), accountNumber(wagraphAccounts, i))
		if err != nil {
			return fmt.Errorf("wagraph session %d: %w", i, err)
		}
		sides.sessions[i] = id
		c, err := rawclient.Link(ctx, st, accountNumber(rawAccounts, i))
		if err != nil {
			return fmt.Errorf("raw client %d: %w", i, err)
		}
		sides.raw[i] = c
		return nil
	}); err != nil {
		return err
	}
	e.progress("linked %d wagraph sessions and %d raw clients in %s", most, most, time.Since(linkStart).Round(time.Millisecond))
	if len(srvs) > 1 {
		spreadStart := time.Now()
		if sides.owners, err = srvs.waitSpread(ctx, sides.sessions, 2*time.Minute); err != nil {
			return err
		}
		e.progress("sessions spread over %d processes in %s", len(srvs), time.Since(spreadStart).Round(time.Millisecond))
	}
	// Each sender's first message to a contact fetches the contact's
	// prekeys and starts a Signal session: do that for every pair the load
	// uses before measuring.
	primeStart := time.Now()
	if err := inParallel(ctx, most*sendRecipients, workers, func(ctx context.Context, k int) error {
		from, to := k/sendRecipients, accountNumber(contactAccounts, k%sendRecipients)
		if _, err := sides.raw[from].SendText(ctx, to, "hello"); err != nil {
			return fmt.Errorf("prime raw %d → %s: %w", from, to, err)
		}
		return sides.rest(ctx, k%len(srvs), sides.sessions[from], "text", map[string]any{"number": to, "text": "hello"})
	}); err != nil {
		return err
	}
	e.progress("primed %d chats on each side in %s", most*sendRecipients, time.Since(primeStart).Round(time.Millisecond))

	self := os.Getpid()
	cpus := sendCPUs{servers: srvs.cpus, db: e.dbCPU, network: net.cpu, self: func() (time.Duration, error) { return processCPU(self) }}
	cases := sendCasesOf(sessionCounts)
	rounds := make([]sendRound, e.Rounds)
	for r := range rounds {
		rounds[r] = sendRound{}
		for _, c := range cases {
			rounds[r][c] = map[string]sendMeasurement{}
			order := []string{sideRaw, sideWagraph}
			if r%2 == 1 {
				order = []string{sideWagraph, sideRaw}
			}
			for _, side := range order {
				m, err := measureSends(ctx, workers, warmup, duration, cpus, sides.send(side, c, workers))
				if err != nil {
					return fmt.Errorf("round %d, %s, %s: %w", r+1, c, side, err)
				}
				rounds[r][c][side] = m
				e.progress("round %d %-22s %-7s %7.0f msg/s  p50 %-9s p99 %-9s CPU/msg server %6.0f µs%s%s network %6.0f µs self %6.0f µs  %d errors %s  (load %s)",
					r+1, c, side, m.perSecond(), m.P50.Round(time.Microsecond), m.P99.Round(time.Microsecond),
					us(m.perMessage(m.ServerCPU)), m.perProcess(), dbPart(e.dbCPU != nil, us(m.perMessage(m.DBCPU)), "%6.0f µs"), us(m.perMessage(m.NetCPU)), us(m.perMessage(m.SelfCPU)), m.Errors, m.FirstErr, loadAverage())
			}
		}
	}
	return writeSendsReport(out, rounds, cases, sendSetup{workers: workers, warmup: warmup, duration: duration, servers: len(srvs), postgresCPU: e.dbCPU != nil})
}

// perProcess is " (a + b)", each server's CPU per message, with several
// servers; "" with one.
func (m sendMeasurement) perProcess() string {
	if len(m.ServerCPUs) < 2 {
		return ""
	}
	parts := make([]string, len(m.ServerCPUs))
	for i, c := range m.ServerCPUs {
		parts[i] = fmt.Sprintf("%.0f", us(m.perMessage(c)))
	}
	return " (" + strings.Join(parts, " + ") + ")"
}

// dbPart is " PostgreSQL <v>" in a progress line when PostgreSQL's CPU is
// measured, "" otherwise.
func dbPart(measured bool, v float64, format string) string {
	if !measured {
		return ""
	}
	return " PostgreSQL " + fmt.Sprintf(format, v)
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// inParallel runs fn for 0..n-1, at most limit at once, and returns the
// first error (the others are then cancelled).
func inParallel(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := fn(ctx, i); err != nil {
				cancel(err)
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && err != context.Canceled {
		return err
	}
	return ctx.Err()
}
