# zqagent sidecar — build, test, lint, bench, run.
#
#   make run    build the sidecar and chat with it in this terminal
#   make test   install what the tests need, lint, and run every test with -race
#
GO          ?= go
BIN         ?= bin
# The version stamped into the binaries (ready line, initialize, --version).
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS      = -X main.version=$(VERSION)
# make run: a data dir inside the checkout (git-ignored), never the user's real one.
DATA_DIR    ?= $(CURDIR)/.zqagent-dev
PROJECT     ?= $(CURDIR)
# make dist: the release targets and the size budget of one binary (25 MiB).
DIST        ?= dist
PLATFORMS   ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
MAX_BYTES   ?= 26214400
GOFILES      = $(shell git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './vendor/*')

.PHONY: all build run test test-go test-third-party test-ts test-ui lint vet staticcheck fmt-check cross deps bench bench-sidecar fuzz dist clean

all: build

build:
	@echo "build: compiling bin/sidecar and bin/zqchat $(VERSION) (the first build downloads modules and compiles SQLite: a few minutes on a small machine)"
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/sidecar ./cmd/sidecar
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/zqchat ./cmd/zqchat

## run: start the sidecar with a terminal chat client.
##   make run DATA_DIR=... PROJECT=...   (defaults: ./.zqagent-dev and this checkout)
run: build
	@echo "run: data dir $(DATA_DIR), project $(PROJECT)"
	$(BIN)/zqchat --sidecar $(BIN)/sidecar --data-dir "$(DATA_DIR)" --project "$(PROJECT)"

## deps: install the system packages and npm packages the tests use.
deps:
	scripts/deps.sh

## test: everything CI runs.
test: deps lint test-go test-third-party test-ts test-ui

test-go:
	@# The permission bypass corpus, with its rows per family (issue 14).
	@$(GO) test -count=1 -run '^TestBypassCorpus$$' -v ./engine/permission/ | grep 'bypass corpus'
	scripts/with-keyring.sh $(GO) test -race -count=1 -timeout 20m ./...

## test-third-party: third_party/jsonschema is upstream + its patch, and its
## own tests (upstream's and the patch's) pass (scripts/third-party.sh).
test-third-party:
	GO='$(GO)' scripts/third-party.sh check
	GO='$(GO)' scripts/third-party.sh test

## test-ts: the TypeScript client (clients/ts): its generated types current
## against protocol/schema.json, type-check, then its Node
## tests against a sidecar built into a temp dir (make deps installs npm packages).
test-ts:
	@bin="$$(mktemp -d)"; trap 'rm -rf "$$bin"' EXIT; \
	$(GO) build -o "$$bin/sidecar" ./cmd/sidecar && \
	cd clients/ts && npm run --silent gen:check && npm run --silent typecheck && SIDECAR_BIN="$$bin/sidecar" npm test --silent

## test-ui: the reference shell (examples/shell-web) in Debian's Chromium,
## driven by playwright-core; screenshots of each step go to $(UI_ARTIFACTS).
UI_ARTIFACTS ?= $(CURDIR)/artifacts/ui
test-ui:
	@bin="$$(mktemp -d)"; trap 'rm -rf "$$bin"' EXIT; \
	$(GO) build -o "$$bin/sidecar" ./cmd/sidecar && \
	(cd clients/ts && npm run --silent build) && \
	cd examples/shell-web && npm run --silent typecheck && \
	SIDECAR_BIN="$$bin/sidecar" UI_ARTIFACTS='$(UI_ARTIFACTS)' npm test --silent && \
	echo "test-ui: screenshots in $(UI_ARTIFACTS)"

lint: vet staticcheck fmt-check cross

vet:
	$(GO) vet ./...
	$(GO) vet -tags zqprofile ./cmd/sidecar

## staticcheck is pinned in go.mod as a tool dependency (go get -tool).
staticcheck:
	$(GO) tool staticcheck ./...
	$(GO) tool staticcheck -tags zqprofile ./cmd/sidecar

fmt-check:
	@out="$$(gofmt -l $(GOFILES))"; if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@$(GO) mod tidy -diff >/dev/null || { echo "go mod tidy would change go.mod/go.sum"; exit 1; }

## cross: the desktop shells ship on macOS and Windows too.
cross:
	GOOS=darwin  GOARCH=arm64 $(GO) build ./...
	GOOS=darwin  GOARCH=amd64 $(GO) vet ./...
	GOOS=windows GOARCH=amd64 $(GO) build ./...
	GOOS=windows GOARCH=amd64 $(GO) vet ./...

## bench: the figures in the README. First the sidecar as a shell sees it
## (cmd/zqbench: the real binary over its WebSocket with a local fake model;
## one extra run of the turns, tools, streaming and long-session figures, of
## a build with -tags zqprofile, writes CPU and heap profiles to $(PROFILES),
## their top entries to bench.out), then the packages' Go benchmarks (store,
## grep vs rg, terminals, compaction ...).
## make bench BENCH_RUNS=3 for fewer runs; make bench-sidecar for the first part only.
PROFILES    ?= bench-profiles
BENCH_RUNS  ?= 5
bench: bench-sidecar
	$(GO) test -run '^$$' -bench . -benchmem -count 1 -timeout 30m ./... | tee -a bench.out
	tools/search/bench_rg.sh 3 | tee -a bench.out

## The binary measured is built like a release one (scripts/dist.sh: static,
## stripped; no profiler linked); profiles carry their own symbols.
bench-sidecar:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w $(LDFLAGS)' -o $(BIN)/sidecar-release ./cmd/sidecar
	CGO_ENABLED=0 $(GO) build -trimpath -tags zqprofile -ldflags '-s -w $(LDFLAGS)' -o $(BIN)/sidecar-profile ./cmd/sidecar
	$(GO) build -o $(BIN)/zqbench ./cmd/zqbench
	$(BIN)/zqbench --sidecar $(BIN)/sidecar-release --profile-sidecar $(BIN)/sidecar-profile --runs $(BENCH_RUNS) --profile-dir $(PROFILES) | tee bench.out
	@for p in $(PROFILES)/*.pprof; do echo "== $$p"; $(GO) tool pprof -top -nodecount 20 $$p 2>/dev/null | sed -n '/flat%/,$$p'; done | tee -a bench.out

## fuzz: run each fuzz target briefly.
fuzz:
	scripts/fuzz-all.sh 10s

## dist: release binaries sidecar-<version>-<os>-<arch>[.exe] and SHA256SUMS;
## fails when one is over $(MAX_BYTES) bytes.
dist:
	VERSION='$(VERSION)' DIST='$(DIST)' PLATFORMS='$(PLATFORMS)' MAX_BYTES='$(MAX_BYTES)' GO='$(GO)' scripts/dist.sh

clean:
	rm -rf $(BIN) $(DIST) bench.out $(PROFILES)
