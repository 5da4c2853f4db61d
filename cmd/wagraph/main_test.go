package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/logtest"
)

func envOf(kv map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := kv[k]
		return v, ok
	}
}

var (
	tokenRE     = regexp.MustCompile(`wgu_[0-9A-Za-z]{40}`)
	listeningRE = regexp.MustCompile(`msg="wagraph listening" addr=(\S+:[0-9]+) `)
)

// server is one `wagraph serve` running in a goroutine.
type server struct {
	addr   string
	stderr *logtest.Buffer
	cancel context.CancelFunc
	done   chan int
	client *http.Client
}

// storeArgs are the flags of a test server's storage on the run's backend
// (internal/dbtest): a data directory and, on the PostgreSQL pass of `make
// test`, the --database-url of a fresh database. Servers started with the
// same flags share their storage, as the runs of one installation do.
func storeArgs(t *testing.T) []string {
	t.Helper()
	args := []string{"--data-dir", t.TempDir()}
	if url := dbtest.DatabaseURL(t); url != "" {
		args = append(args, "--database-url", url)
	}
	return args
}

// startServer runs `run serve` with args and env and waits (up to 10 s) until
// it logs its listening address. The server is stopped when the test ends if
// the test has not stopped it.
func startServer(t *testing.T, env map[string]string, args ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{
		stderr: &logtest.Buffer{},
		cancel: cancel,
		done:   make(chan int, 1),
		client: &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second},
	}
	var stdout logtest.Buffer
	go func() {
		s.done <- run(ctx, append([]string{"serve"}, args...), envOf(env), &stdout, s.stderr)
	}()
	t.Cleanup(func() { s.stop(t) })

	deadline := time.Now().Add(10 * time.Second)
	for {
		if m := listeningRE.FindStringSubmatch(s.stderr.String()); m != nil {
			s.addr = m[1]
			return s
		}
		select {
		case code := <-s.done:
			s.done <- code // let stop see it too
			t.Fatalf("run returned %d before listening; stderr:\n%s", code, s.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q log line within 10 s; stderr:\n%s", "wagraph listening", s.stderr.String())
		}
	}
}

// stop cancels the server's context and returns run's exit code, failing the
// test when run does not return within 35 s. It may be called more than once.
func (s *server) stop(t *testing.T) int {
	t.Helper()
	s.client.CloseIdleConnections()
	s.cancel()
	select {
	case code := <-s.done:
		s.done <- code
		return code
	case <-time.After(35 * time.Second):
		t.Fatalf("run did not return within 35 s of cancellation; stderr:\n%s", s.stderr.String())
		return -1
	}
}

// call sends a request with the token and returns the status and the decoded
// JSON body.
func (s *server) call(t *testing.T, token, method, path, body string) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, "http://"+s.addr+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: status %d, body is not a JSON object: %q", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, out
}

func dataOf(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	d, ok := body["data"].(map[string]any)
	if !ok {
		t.Fatalf("body has no data object: %v", body)
	}
	return d
}

// TestServeBootstrapAndRestart starts the real command twice on one data
// directory: the first start creates the admin and prints its token once; the
// second prints nothing and still accepts that token and shows what the first
// run stored.
func TestServeBootstrapAndRestart(t *testing.T) {
	args := append([]string{"--addr", "127.0.0.1:0"}, storeArgs(t)...)

	first := startServer(t, nil, args...)
	out := first.stderr.String()
	tokens := tokenRE.FindAllString(out, -1)
	if len(tokens) != 1 {
		t.Fatalf("first start printed %d admin tokens, want exactly 1; stderr:\n%s", len(tokens), out)
	}
	token := tokens[0]
	if n := strings.Count(out, token); n != 1 {
		t.Errorf("the admin token appears %d times on stderr, want once", n)
	}

	// Without a token, and with a wrong one, nothing is reachable.
	if code, _ := first.call(t, "", "GET", "/api/v1/session", ""); code != http.StatusUnauthorized {
		t.Errorf("GET /api/v1/session without a token: %d, want 401", code)
	}
	if code, _ := first.call(t, "wgu_"+strings.Repeat("x", 40), "GET", "/api/v1/session", ""); code != http.StatusUnauthorized {
		t.Errorf("GET /api/v1/session with a wrong token: %d, want 401", code)
	}

	code, body := first.call(t, token, "POST", "/api/v1/session", `{"name":"kept"}`)
	if code != http.StatusCreated {
		t.Fatalf("POST /api/v1/session: %d %v, want 201", code, body)
	}
	sess := dataOf(t, body)
	id, _ := sess["id"].(string)
	if id == "" || sess["name"] != "kept" {
		t.Fatalf("created session %v, want an id and name kept", sess)
	}

	code, body = first.call(t, token, "POST", "/api/v1/session/"+id+"/webhook", `{"url":"https://example.com/hook"}`)
	if code != http.StatusCreated {
		t.Fatalf("POST webhook: %d %v, want 201", code, body)
	}
	hook := dataOf(t, body)
	hookID, _ := hook["id"].(string)
	if hookID == "" || hook["url"] != "https://example.com/hook" {
		t.Fatalf("created webhook %v", hook)
	}

	if code := first.stop(t); code != 0 {
		t.Fatalf("first run returned %d after cancellation, want 0; stderr:\n%s", code, first.stderr.String())
	}

	second := startServer(t, nil, args...)
	if got := tokenRE.FindAllString(second.stderr.String(), -1); len(got) != 0 {
		t.Errorf("second start printed a token again: %q", got)
	}
	if strings.Contains(second.stderr.String(), "created admin user") {
		t.Errorf("second start created an admin again; stderr:\n%s", second.stderr.String())
	}
	if second.addr == first.addr {
		t.Logf("both runs happened to get port %s", second.addr)
	}

	code, body = second.call(t, token, "GET", "/api/v1/session", "")
	if code != http.StatusOK {
		t.Fatalf("GET /api/v1/session after restart with the old token: %d %v, want 200", code, body)
	}
	list, ok := body["data"].([]any)
	if !ok || len(list) != 1 {
		t.Fatalf("sessions after restart: %v, want exactly the one created", body["data"])
	}
	if s, _ := list[0].(map[string]any); s["id"] != id || s["name"] != "kept" {
		t.Errorf("session after restart %v, want id %s name kept", list[0], id)
	}

	code, body = second.call(t, token, "GET", "/api/v1/session/"+id+"/webhook", "")
	if code != http.StatusOK {
		t.Fatalf("GET webhooks after restart: %d %v, want 200", code, body)
	}
	if total, _ := body["total"].(float64); total != 1 {
		t.Errorf("webhook total after restart = %v, want 1 (body %v)", body["total"], body)
	}
	if hooks, _ := body["data"].([]any); len(hooks) != 1 || hooks[0].(map[string]any)["id"] != hookID {
		t.Errorf("webhooks after restart %v, want the one with id %s", body["data"], hookID)
	}

	if code := second.stop(t); code != 0 {
		t.Fatalf("second run returned %d after cancellation, want 0; stderr:\n%s", code, second.stderr.String())
	}
	if strings.Contains(second.stderr.String(), token) {
		t.Error("the admin token was written to stderr by the second run")
	}
}

func TestServeAdminTokenFromEnv(t *testing.T) {
	const envToken = "env-admin-token-0123456789abcdefghijklmn" // 40 characters
	if len(envToken) != 40 {
		t.Fatalf("test token has %d characters", len(envToken))
	}
	s := startServer(t, map[string]string{"WAGRAPH_ADMIN_TOKEN": envToken},
		append([]string{"--addr", "127.0.0.1:0"}, storeArgs(t)...)...)
	out := s.stderr.String()
	if got := tokenRE.FindAllString(out, -1); len(got) != 0 {
		t.Errorf("a token was printed although WAGRAPH_ADMIN_TOKEN is set: %q", got)
	}
	if strings.Contains(out, envToken) {
		t.Error("the configured admin token was echoed on stderr")
	}

	code, body := s.call(t, envToken, "POST", "/graphql", `{"query":"{ viewer { user { name admin } } }"}`)
	if code != http.StatusOK {
		t.Fatalf("POST /graphql: %d %v, want 200", code, body)
	}
	if body["errors"] != nil {
		t.Fatalf("viewer query failed: %v", body["errors"])
	}
	user, _ := dataOf(t, body)["viewer"].(map[string]any)["user"].(map[string]any)
	if user["name"] != "admin" || user["admin"] != true {
		t.Errorf("viewer.user = %v, want name admin, admin true", user)
	}

	// The environment token is a full admin user token: it creates sessions.
	if code, body := s.call(t, envToken, "POST", "/api/v1/session", `{"name":"x"}`); code != http.StatusCreated {
		t.Errorf("POST /api/v1/session with the env token: %d %v, want 201", code, body)
	}
	if code := s.stop(t); code != 0 {
		t.Errorf("run returned %d, want 0", code)
	}
}

func TestRunCommands(t *testing.T) {
	tests := []struct {
		name           string
		args           []string
		code           int
		stdout, stderr string // substrings; "" means that stream must be empty
	}{
		{"version", []string{"version"}, 0, "wagraph", ""},
		{"--version", []string{"--version"}, 0, "wagraph", ""},
		{"-version", []string{"-version"}, 0, "wagraph", ""},
		{"help", []string{"help"}, 0, "usage: wagraph", ""},
		{"--help", []string{"--help"}, 0, "serve", ""},
		{"no command", nil, 2, "", "usage: wagraph"},
		{"unknown command", []string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{"misspelt command", []string{"serv"}, 2, "", `unknown command "serv"; did you mean serve?`},
		{"misspelt doctor", []string{"docter"}, 2, "", "did you mean doctor?"},
		{"serve -h", []string{"serve", "-h"}, 0, "WAGRAPH_ADDR", ""},
		{"help serve", []string{"help", "serve"}, 0, "WAGRAPH_ADDR", ""},
		{"doctor --help", []string{"doctor", "--help"}, 0, "WAGRAPH_DATA_DIR", ""},
		{"sandbox-network -help", []string{"sandbox-network", "-help"}, 0, "--control-addr host:port", ""},
		{"serve unknown flag", []string{"serve", "--nope"}, 2, "", "unknown flag: --nope (wagraph serve --help lists every flag)"},
		{"serve --port", []string{"serve", "--port", "9000"}, 2, "", "unknown flag: --port; did you mean --addr? (the listen address is host:port)"},
		{"serve -port", []string{"serve", "-port=9000"}, 2, "", "unknown flag: --port; did you mean --addr?"},
		{"serve --db", []string{"serve", "--db", "x"}, 2, "", "did you mean --database-url?"},
		{"serve --token", []string{"serve", "--token", "x"}, 2, "", "did you mean --admin-token?"},
		{"serve --data", []string{"serve", "--data", "x"}, 2, "", "did you mean --data-dir?"},
		{"serve misspelt flag", []string{"serve", "--sandbx"}, 2, "", "unknown flag: --sandbx; did you mean --sandbox?"},
		{"serve part of a flag", []string{"serve", "--retention", "1h"}, 2, "", "did you mean --event-retention?"},
		{"sandbox-network --port", []string{"sandbox-network", "--port", "1"}, 2, "", "wagraph sandbox-network: unknown flag: --port; did you mean --addr?"},
		{"doctor --dir", []string{"doctor", "--dir", "x"}, 2, "", "wagraph doctor: unknown flag: --dir; did you mean --data-dir?"},
		{"serve missing value", []string{"serve", "--addr"}, 2, "", "flag needs an argument: --addr"},
		{"serve extra word", []string{"serve", "extra"}, 2, "", `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr logtest.Buffer
			code := run(context.Background(), tt.args, envOf(nil), &stdout, &stderr)
			if code != tt.code {
				t.Errorf("run(%q) = %d, want %d; stderr:\n%s", tt.args, code, tt.code, stderr.String())
			}
			for _, c := range []struct {
				name, got, want string
			}{{"stdout", stdout.String(), tt.stdout}, {"stderr", stderr.String(), tt.stderr}} {
				if c.want == "" && c.got != "" {
					t.Errorf("%s = %q, want nothing", c.name, c.got)
				}
				if !strings.Contains(c.got, c.want) {
					t.Errorf("%s = %q, want it to contain %q", c.name, c.got, c.want)
				}
			}
		})
	}
	var stdout logtest.Buffer
	run(context.Background(), []string{"version"}, envOf(nil), &stdout, io.Discard)
	if !strings.HasPrefix(stdout.String(), "wagraph ") || strings.Count(stdout.String(), "\n") != 1 {
		t.Errorf("version output %q, want one line starting with \"wagraph \"", stdout.String())
	}
}

// A bad setting stops serve before anything starts, with exit code 2 and one
// line naming the setting as the user gave it: the flag typed, or the
// environment variable when the value came from there (a flag's error
// naming the variable sends the user looking for a variable never set).
func TestServeBadSetting(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		names    []string
		notNamed string // "": no check
		noReveal string
	}{
		{"rate flag", []string{"serve", "--rate", "fast"}, nil, []string{"--rate", `"fast"`, "RATE/s,BURST"}, "WAGRAPH_RATE", ""},
		{"rate env", []string{"serve"}, map[string]string{"WAGRAPH_RATE": "fast"}, []string{`WAGRAPH_RATE="fast"`, "--rate"}, "", ""},
		{"rate flag beside a good env", []string{"serve", "--rate", "fast"}, map[string]string{"WAGRAPH_RATE": "5/s,10"}, []string{"--rate"}, "WAGRAPH_RATE", ""},
		{"log level env", []string{"serve"}, map[string]string{"WAGRAPH_LOG_LEVEL": "loud"}, []string{"--log-level", "WAGRAPH_LOG_LEVEL"}, "", ""},
		{"short admin token env", []string{"serve"}, map[string]string{"WAGRAPH_ADMIN_TOKEN": "tooshort99"}, []string{"--admin-token", "WAGRAPH_ADMIN_TOKEN"}, "", "tooshort99"},
		// A cluster's processes each keeping media of their own would each
		// serve only theirs: refused before the database is reached.
		{"local media store in a cluster", []string{"serve", "--database-url", "postgres://u:pgsecret99@db.invalid:5432/wg", "--media-store", "local"}, nil,
			[]string{`--media-store "local"`, "a store every one of them reaches", "s3://bucket/prefix"}, "WAGRAPH_MEDIA_STORE", "pgsecret99"},
		{"unknown kind of media env", []string{"serve"}, map[string]string{"WAGRAPH_MEDIA_KEEP": "image,gif"}, []string{`WAGRAPH_MEDIA_KEEP="image,gif"`, `"gif" is not a kind of media`}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var stdout, stderr logtest.Buffer
			code := run(context.Background(), append(tt.args, "--data-dir", dir+"/never"), envOf(tt.env), &stdout, &stderr)
			if code != 2 {
				t.Errorf("run = %d, want 2", code)
			}
			out := stderr.String()
			if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
				t.Errorf("stderr is not a single line: %q", out)
			}
			if !strings.HasPrefix(out, "wagraph: ") {
				t.Errorf("stderr %q does not start with wagraph: as the other errors do", out)
			}
			for _, want := range tt.names {
				if !strings.Contains(out, want) {
					t.Errorf("stderr %q does not name %q", out, want)
				}
			}
			if tt.notNamed != "" && strings.Contains(out, tt.notNamed) {
				t.Errorf("stderr %q names %s, which the user did not give", out, tt.notNamed)
			}
			if tt.noReveal != "" && strings.Contains(out, tt.noReveal) {
				t.Errorf("stderr %q reveals the secret", out)
			}
			if stdout.String() != "" {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
			if _, err := os.Stat(dir + "/never"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the data directory was touched before the settings were valid (stat: %v)", err)
			}
		})
	}
}

// TestSandboxAllowsLocalReceivers: in sandbox mode webhooks may reach
// loopback (a receiver on the developer's machine), and the first log line
// says so; told --allow-private-urls=false, it refuses them and says
// nothing of it.
func TestSandboxAllowsLocalReceivers(t *testing.T) {
	const token = "sandbox-private-urls-token-0123456789"
	env := map[string]string{"WAGRAPH_ADMIN_TOKEN": token}
	for _, tt := range []struct {
		name  string
		args  []string
		allow bool
	}{
		{"sandbox", []string{"--sandbox"}, true},
		{"sandbox, private URLs refused", []string{"--sandbox", "--allow-private-urls=false"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, env, append(append(tt.args, "--addr", "127.0.0.1:0"), storeArgs(t)...)...)
			first := firstLine(s.stderr.String())
			const says = "webhooks and media may reach loopback and private addresses"
			if !strings.Contains(first, "sandbox: simulated WhatsApp network") || strings.Contains(first, says) != tt.allow {
				t.Errorf("first log line %q; want the sandbox named, and %q said: %v", first, says, tt.allow)
			}
			code, body := s.call(t, token, "POST", "/api/v1/session", `{"name":"local"}`)
			if code != http.StatusCreated {
				t.Fatalf("POST /api/v1/session: %d %v", code, body)
			}
			id, _ := dataOf(t, body)["id"].(string)
			code, body = s.call(t, token, "POST", "/api/v1/session/"+id+"/webhook", `{"url":"http://127.0.0.1:9/hook"}`)
			if want := map[bool]int{true: http.StatusCreated, false: http.StatusBadRequest}[tt.allow]; code != want {
				t.Errorf("a webhook to 127.0.0.1: %d %v, want %d", code, body, want)
			}
		})
	}
}
