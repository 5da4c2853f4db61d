# wagraph — see README.md. On a fresh Debian or Ubuntu machine with git and
# make, every target installs what it needs first (build/deps.sh: only what
# is missing), and the Go it needs (build/go.sh).

# GO is the go command: by default build/go.sh's answer, the go on PATH when
# it is at least go.mod's version, else Go from the module proxy unpacked
# under .toolchain/. It is worked out once, and only when a recipe uses it,
# after the target's prerequisites (deps-run installs what build/go.sh
# downloads with); make -n shows the path without downloading. `make GO=...`
# chooses another. That Go is not put on PATH (a machine's own go, older or
# none, stays what `go` runs): `make toolchain` prints its path.
ifeq ($(origin GO),undefined)
GO = $(eval GO := $$(shell build/go.sh$(if $(findstring n,$(firstword -$(MAKEFLAGS))), --no-download)))$(if $(GO),$(GO),$(error build/go.sh found no Go: see its message above))
endif
BIN     := bin/wagraph
export CGO_ENABLED := 1

.PHONY: build run sandbox test test-short generate check-generated deps deps-run deps-test deps-test-short bench load clean screenshots toolchain

build: deps-run
	$(GO) build -o $(BIN) ./cmd/wagraph

run: build
	./$(BIN) serve

# The same server against an in-process simulated WhatsApp network (no
# phone, no internet). Its own data directory keeps sandbox sessions apart
# from real ones.
sandbox: build
	./$(BIN) serve --sandbox --data-dir ./data-sandbox

# Every test on SQLite and, when a PostgreSQL server is at hand
# (WAGRAPH_TEST_POSTGRES: `.ci/postgres.sh make test` starts a throwaway
# one), the tests again on PostgreSQL (WAGRAPH_TEST_BACKEND=postgres), one
# pass after the other (build/testpasses.sh says why): each test
# that stores anything opens its database through internal/dbtest, a fresh
# one per test, and a server or child process it starts gets its
# --database-url (internal/dbtest says why a pass, not subtests). The
# PostgreSQL pass runs only the packages whose test binary links
# internal/dbtest (DB_PKGS, read off the build graph by go list, so a
# package that starts storing joins it by importing dbtest); the others
# store nothing and would only run twice. The tests that run wagraph as a
# process (cmd/wagraph, internal/crashtest) run the one binary built here
# with -race (internal/testbin), not a link of their own per package and
# pass; a plain build (bin/wagraph) serves what such a test sets up
# without testing it. A package's tests may take up to 30 minutes; CI's
# own bound is the whole run's 90. Each pass's output is in
# bin/test-logs/<pass>.log, shown when the pass ends; TEST_JSON=prefix
# writes go test -json's record to prefix-<pass>.json instead (the slowest
# packages and tests: docs/development.md).
DB_PKGS = $(shell $(GO) list -test -f '{{if eq .Name "main"}}{{range .Deps}}{{if eq . "github.com/wagraph/wagraph/internal/dbtest"}}{{$$.ImportPath}}{{"\n"}}{{end}}{{end}}{{end}}' ./... | sed -n 's/\.test$$//p')

TEST_BINARY := bin/wagraph-race

# How every test binary (and the race-built wagraph) is built: -race,
# results never cached, and -ldflags=-w, no DWARF tables, which cut a
# link by a third (a hundred race-built test binaries are linked per run;
# stack traces and race reports use the symbol table, which stays).
TEST_FLAGS := -race -count=1 -timeout 30m -ldflags=-w

# The binaries the tests that run wagraph as a process use: under -race,
# and without it for what a test sets up but does not test (internal/testbin);
# and the NATS server with JetStream the tests of the event stream run as a
# child process (internal/natstest), built plain from go.mod's tool directive.
NATS_SERVER := bin/nats-server
# (make load-nats runs the same one as the load program's broker.)
.PHONY: $(NATS_SERVER)
$(NATS_SERVER): deps-run
	$(GO) build -ldflags=-w -o $(NATS_SERVER) github.com/nats-io/nats-server/v2

TEST_ENV = WAGRAPH_TEST_BINARY=$(CURDIR)/$(TEST_BINARY) WAGRAPH_TEST_PLAIN_BINARY=$(CURDIR)/$(BIN) WAGRAPH_TEST_NATS_SERVER=$(CURDIR)/$(NATS_SERVER)

test: deps-test $(NATS_SERVER)
	$(GO) build -race -ldflags=-w -o $(TEST_BINARY) ./cmd/wagraph
	$(GO) build -o $(BIN) ./cmd/wagraph
	$(TEST_ENV) GO="$(GO)" TEST_FLAGS="$(TEST_FLAGS)" DB_PKGS="$(DB_PKGS)" LOG_DIR=$(CURDIR)/bin/test-logs TEST_JSON="$(TEST_JSON)" build/testpasses.sh

# The quick pass while developing: every test on SQLite with -short, which
# skips the browser tests (Chromium), the crash and cluster tests (child
# processes), the load tests, the image and toolchain builds and the tests
# of the npm tools (so neither Node.js nor an npm install is needed); under
# 3 minutes on two cores with a warm build cache (about 8 from an empty
# one, which compiles everything first). Without -race: the detector makes the
# whatsmeow-heavy packages three to four times slower, past that bound
# (`make test` runs everything with it, and is what CI runs). Neither
# Chromium nor PostgreSQL is needed.
test-short: deps-test-short
	$(GO) test -short -count=1 -timeout 10m -ldflags=-w ./...

# The README's screenshots of the dashboard, written by its browser test
# (Chromium from deps-test) walking it against a sandbox server.
screenshots: deps-test
	$(GO) test -count=1 -run '^(TestDashboardInABrowser|TestInboxInABrowser|TestGroupsInABrowser)$$' ./internal/webui -args -update-screenshots

# The Go benchmarks of the hot paths (BENCHMARKS.md), only in the packages
# that have them: compiling every package's tests would take longer than
# running the benchmarks. BENCHTIME=3s (or 2000x) for steadier figures.
BENCHTIME ?= 1s
BENCH_PKGS := ./whatsapp ./internal/events ./internal/webhook ./internal/auth ./internal/chats ./restcompat ./graph

# The load program's short run for `make bench`, per goal (`make load` runs
# the issue's full figures): goal 2 (sends) 1 s windows; goal 4 (fanout)
# 5 s windows and no step-up; goal 5 (memory) 200 sessions and 3 restarts
# instead of 1,000 and 5; goal 3 (inbound) 8 s windows and a 10 s drain,
# texts without message secrets only (about 3 minutes with the linking of
# its 100 sessions and 100 raw whatsmeow clients).
BENCH_SHORT ?= -rounds 5 -duration 3s -warmup 1s \
	-send-duration 1s -send-warmup 500ms \
	-inbound-duration 8s -inbound-drain 10s -inbound-secrets off \
	-fanout-window 5s -fanout-step-window 0 \
	-memory-sessions 200 -memory-restarts 3

bench: build bin/wagraph-bench
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -count 1 $(BENCH_PKGS)
	./bin/wagraph-bench -wagraph $(BIN) $(BENCH_SHORT)

# The load program (cmd/wagraph-bench, BENCHMARKS.md): a built wagraph and a
# bare net/http reference as child processes, measured over loopback in
# interleaved rounds. `make bench` runs it short; this is the longer run.
LOAD_ROUNDS   ?= 7
LOAD_DURATION ?= 10s
load: build bin/wagraph-bench
	./bin/wagraph-bench -wagraph $(BIN) -rounds $(LOAD_ROUNDS) -duration $(LOAD_DURATION) -warmup 2s

# The load program on PostgreSQL (BENCHMARKS.md, "PostgreSQL and two
# processes"): .ci/postgres.sh starts a throwaway server (build/deps.sh
# installs it) and each goal's wagraph stores everything in a database of its
# own there. LOAD_SERVERS=2 runs goals sends and fanout on two processes of
# one database (a cluster) and spreads their load over both. LOAD_PG_FLAGS
# are the other flags: by default `make load`'s; for example
#   make load-pg LOAD_SERVERS=2 LOAD_PG_FLAGS='-goals sends,fanout -rounds 3'
# `make bench` does not run it (its time limit is for SQLite's short run).
LOAD_SERVERS  ?= 1
LOAD_PG_FLAGS ?= -rounds $(LOAD_ROUNDS) -duration $(LOAD_DURATION) -warmup 2s
.PHONY: load-pg
load-pg: build bin/wagraph-bench
	@build/deps.sh postgres
	.ci/postgres.sh sh -c './bin/wagraph-bench -wagraph $(BIN) $(LOAD_PG_FLAGS) -postgres "$$WAGRAPH_TEST_POSTGRES" -servers $(LOAD_SERVERS)'

# Goal 3 with the NATS JetStream sink off and on in one run (BENCHMARKS.md,
# "Goal 3 with the NATS sink"): two servers, each with its network and
# sessions, the second publishing every event to a nats-server the load
# program starts ($(NATS_SERVER)); their windows alternate, and the report
# gives both side by side with each round's on / off ratio. LOAD_NATS_FLAGS
# are the other flags (default: goal 3's figures, LOAD_ROUNDS rounds); on a
# busy machine, for example
#   make load-nats LOAD_NATS_FLAGS='-rounds 4 -inbound-rate 300 -inbound-duration 30s'
LOAD_NATS_FLAGS ?= -rounds $(LOAD_ROUNDS)
.PHONY: load-nats
load-nats: build bin/wagraph-bench $(NATS_SERVER)
	./bin/wagraph-bench -wagraph $(BIN) -nats-server $(NATS_SERVER) -goals inbound -inbound-nats both $(LOAD_NATS_FLAGS)

# Goal 6, the soak, runs apart from the other goals: half of INBOUND_RATE
# (goal 3's 2,000/s unless set; BENCHMARKS.md says which rate a run used)
# over 100 sessions for SOAK_DURATION, growth measured from SOAK_MARK;
# SOAK_SECRETS=on gives every text a message secret, as phones do now.
SOAK_DURATION ?= 30m
SOAK_MARK     ?= 5m
INBOUND_RATE  ?= 2000
SOAK_SECRETS  ?= off
.PHONY: soak
soak: build bin/wagraph-bench
	./bin/wagraph-bench -wagraph $(BIN) -goals soak -inbound-rate $(INBOUND_RATE) -inbound-secrets $(SOAK_SECRETS) \
		-soak-duration $(SOAK_DURATION) -soak-mark $(SOAK_MARK)

.PHONY: bin/wagraph-bench
bin/wagraph-bench: deps-run
	$(GO) build -o bin/wagraph-bench ./cmd/wagraph-bench

# gqlgen runs `go` itself (to load packages): the same go, first on PATH.
generate: deps-run
	$(GO) generate ./ent
	$(if $(findstring /,$(GO)),PATH="$(dir $(GO)):$$PATH") $(GO) tool gqlgen generate
	$(GO) run ./restcompat/internal/openapigen -o restcompat/openapi.json

# Regenerates and fails when that changed anything: generated code is never
# edited by hand, and never stale.
check-generated: generate
	@if [ -n "$$(git status --porcelain -- ent graph gqlgen.yml go.mod go.sum restcompat/openapi.json)" ]; then \
		echo "generated code is stale; run 'make generate' and commit the result:"; \
		git status --porcelain -- ent graph gqlgen.yml go.mod go.sum restcompat/openapi.json; \
		exit 1; \
	fi

# What building and running need (deps-run), what the tests need besides
# (deps-test; deps-test-short, the same without Chromium and PostgreSQL),
# and everything with the Go modules (deps, for CI): each
# installs only what is missing; build/deps.sh says what and why.
deps-run:
	@build/deps.sh run

deps-test:
	@build/deps.sh test

deps-test-short:
	@build/deps.sh test-short

deps: deps-test
	$(GO) mod download

# The go the other targets run, fetched when needed, as a path: to run it
# yourself, export PATH="$$(dirname "$$(make -s toolchain)"):$$PATH".
toolchain: deps-run
	@echo $(GO)

clean:
	rm -rf bin

# Each fuzz target in turn, FUZZTIME each (docs/fuzzing.md); what they find
# is replayed by `make test` once kept under testdata/fuzz.
FUZZTIME ?= 2m
FUZZ_TARGETS := restcompat:FuzzDecodeBody graph:FuzzDocumentGuard whatsapp:FuzzParseRecipient \
	internal/webhook:FuzzValidateHeaders whatsapp:FuzzMessageEvent \
	restcompat:FuzzAppendJSONString
.PHONY: fuzz
fuzz: deps-run
	@for t in $(FUZZ_TARGETS); do \
		echo "== $$t"; \
		$(GO) test -run '^$$' -fuzz "^$${t#*:}\$$" -fuzztime $(FUZZTIME) ./$${t%%:*}/ || exit 1; \
	done
