# Foundry build, run and test entry points. `make help` lists the targets.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# Pinned tool versions, installed from the Go module proxy into ./bin.
BUF_VERSION                   := v1.75.0
PROTOC_GEN_GO_VERSION         := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION    := v1.6.2
GRPC_GATEWAY_VERSION          := v2.32.0
GOLANGCI_LINT_VERSION         := v2.15.0
# vtprotobuf's newest tag (v0.6.0, January 2024) drops a oneof set to a nil
# message, which protobuf-go encodes as an empty one (fixed after the tag):
# this is its main branch of March 2025, a pseudo-version the proxy serves.
PROTOC_GEN_GO_VTPROTO_VERSION := v0.6.1-0.20250313105119-ba97887b0a25

BIN := $(CURDIR)/bin
export PATH := $(BIN):$(PATH)
export GOTOOLCHAIN := local

# Every module of the workspace, as patterns go test and go vet accept.
MODULES := $(shell go list -f '{{.Dir}}/...' -m 2>/dev/null)

TOOLS := $(BIN)/.buf-$(BUF_VERSION) \
	$(BIN)/.protoc-gen-go-$(PROTOC_GEN_GO_VERSION) \
	$(BIN)/.protoc-gen-go-grpc-$(PROTOC_GEN_GO_GRPC_VERSION) \
	$(BIN)/.protoc-gen-go-vtproto-$(PROTOC_GEN_GO_VTPROTO_VERSION) \
	$(BIN)/.grpc-gateway-$(GRPC_GATEWAY_VERSION)

.PHONY: help
help: ## List the targets.
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-16s %s\n", $$1, $$2}'

.PHONY: tools
tools: $(TOOLS) ## Install the pinned code generators into ./bin.

$(BIN)/.buf-$(BUF_VERSION):
	GOBIN=$(BIN) GOWORK=off go install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
	@touch $@

$(BIN)/.protoc-gen-go-$(PROTOC_GEN_GO_VERSION):
	GOBIN=$(BIN) GOWORK=off go install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	@touch $@

$(BIN)/.protoc-gen-go-grpc-$(PROTOC_GEN_GO_GRPC_VERSION):
	GOBIN=$(BIN) GOWORK=off go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	@touch $@

$(BIN)/.protoc-gen-go-vtproto-$(PROTOC_GEN_GO_VTPROTO_VERSION):
	GOBIN=$(BIN) GOWORK=off go install github.com/planetscale/vtprotobuf/cmd/protoc-gen-go-vtproto@$(PROTOC_GEN_GO_VTPROTO_VERSION)
	@touch $@

$(BIN)/.golangci-lint-$(GOLANGCI_LINT_VERSION):
	GOBIN=$(BIN) GOWORK=off go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	@touch $@

$(BIN)/.grpc-gateway-$(GRPC_GATEWAY_VERSION):
	GOBIN=$(BIN) GOWORK=off go install \
		github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-grpc-gateway@$(GRPC_GATEWAY_VERSION) \
		github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-openapiv2@$(GRPC_GATEWAY_VERSION)
	@touch $@

# --- code generation -----------------------------------------------------------

GENERATED := proto/gen/go gateway/openapi

.PHONY: generate
# Generation writes to a scratch directory first: `generate` then replaces the
# committed output (so a failed run leaves the tree as it was), and
# `check-generated` compares the two byte for byte.
GEN_SCRATCH := .cache/gen

.PHONY: gen-scratch
gen-scratch: tools
	buf lint
	rm -rf $(GEN_SCRATCH) && mkdir -p $(GEN_SCRATCH)
	buf generate -o $(GEN_SCRATCH)
	buf generate --template gateway/buf.gen.yaml -o $(GEN_SCRATCH)

.PHONY: generate
generate: tools ## Format, lint and generate the protobuf code (committed).
	buf format -w proto
	$(MAKE) --no-print-directory gen-scratch
	rm -rf proto/gen/go/foundry gateway/openapi/foundry.swagger.json
	cp -R $(GEN_SCRATCH)/proto/gen/go/foundry proto/gen/go/
	cp $(GEN_SCRATCH)/gateway/openapi/*.json gateway/openapi/
	@# The served OpenAPI 3.1 document, built by the gateway from the above,
	@# and the gateway's generated renderings of the responses, made anew
	@# (deleted first: one made for the protos before would not compile).
	rm -f gateway/render_gen.go
	FOUNDRY_UPDATE_DOCS=1 go test -count=1 -run '^(TestOpenAPIFileIsTheServedDocument|TestGeneratedRenderIsCurrent)$$' ./gateway

.PHONY: check-generated
check-generated: gen-scratch ## Fail when the protos are unformatted or the committed generated code is stale.
	@buf format --diff --exit-code proto || { echo "protos are not formatted: run 'make generate'" >&2; exit 1; }
	@diff -r $(GEN_SCRATCH)/proto/gen/go/foundry proto/gen/go/foundry && \
		diff $(GEN_SCRATCH)/gateway/openapi/foundry.swagger.json gateway/openapi/foundry.swagger.json || \
		{ echo "generated code is stale: run 'make generate' and commit the result" >&2; exit 1; }
	@echo "generated code is up to date"

.PHONY: breaking
breaking: tools ## Check the protos against main for breaking changes.
	@if git rev-parse --verify -q main >/dev/null && [ -n "$$(git ls-tree -r main --name-only -- proto/foundry)" ]; then \
		buf breaking --against '.git#branch=main' && echo "no breaking changes against main"; \
	else echo "breaking: main has no protos yet, nothing to compare"; fi

# --- build and run -------------------------------------------------------------

# A workspace build records no VCS revision unless asked (foundry version
# shows it); only inside a git checkout, where it can.
BUILDVCS := $(if $(wildcard .git),-buildvcs=true)

# One binary per module of allinone.Services and the gateway, and the
# all-in-one foundry: deploy's tests (services_test.go) fail when a module
# has none here.
BINARIES := foundry:./cmd/foundry \
	portfolio:./services/portfolio/cmd/portfolio \
	ledger:./services/ledger/cmd/ledger \
	agent:./services/agent/cmd/agent \
	ops:./cmd/ops \
	gateway:./cmd/gateway

.PHONY: build
build: ## Build every binary into ./bin.
	@for b in $(BINARIES); do \
		echo "go build -o bin/$${b%%:*} $${b#*:}"; \
		go build -trimpath $(BUILDVCS) -o bin/$${b%%:*} $${b#*:}; \
	done

.PHONY: image
# One container image per binary of BINARIES, built without a Docker daemon
# (deploy/cmd/image) into dist/images/<name>.tar, tagged
# $(REGISTRY)/foundry-<name>:$(VERSION) (the all-in-one: $(REGISTRY)/foundry);
# REGISTRY defaults to ghcr.io/foundryhq, VERSION to git describe. Push with
# crane push or skopeo copy docker-archive: (deploy/README.md, Building the
# images).
image: ## Build an image tarball per binary into dist/images (make image REGISTRY=... VERSION=...).
	go run ./deploy/cmd/image -out dist/images $(if $(REGISTRY),-registry=$(REGISTRY)) $(if $(VERSION),-version=$(VERSION)) $(BINARIES)

.PHONY: run
# A laptop run accepts unsigned GitHub deliveries (no secret to share with a
# hook); FOUNDRY_GITHUB_ALLOW_UNSIGNED=false or a webhook secret turns that off.
# It signs the audit log's checkpoints with FOUNDRY_AUDIT_SIGNING_KEY when that
# is set, else with the key kept in data/audit.key (under FOUNDRY_DATA_DIR when
# set; mode 0600, made by foundry audit keygen on the first run and reused), so
# foundry audit verify keeps verifying the log across runs (docs/cli.md).
AUDIT_KEY_FILE = $${FOUNDRY_DATA_DIR:-data}/audit.key
run: ## Build and run all services and the gateway on SQLite under ./data.
	go build -trimpath $(BUILDVCS) -o bin/foundry ./cmd/foundry
	@if [ "$${FOUNDRY_GITHUB_ALLOW_UNSIGNED:-true}" = true ] && [ -z "$${FOUNDRY_GITHUB_WEBHOOK_SECRET:-}" ]; then \
		echo "make run: unsigned GitHub deliveries are accepted at POST /api/contributions/github (local use only;" \
			"set FOUNDRY_GITHUB_WEBHOOK_SECRET, or FOUNDRY_GITHUB_ALLOW_UNSIGNED=false, to refuse them)"; fi
	@# An empty key here means "none" (FOUNDRY_ADMIN_KEY= make run), not a
	@# key set by mistake to nothing, which the server refuses.
	@for v in FOUNDRY_ADMIN_KEY FOUNDRY_SERVICE_KEY; do if [ -n "$${!v+x}" ] && [ -z "$${!v// /}" ]; then \
		echo "make run: $$v is empty: using none (a laptop run keeps its administrator key in data/admin.key)"; fi; done
	@f="$(AUDIT_KEY_FILE)"; if [ -n "$${FOUNDRY_AUDIT_SIGNING_KEY:-}" ]; then \
		echo "make run: the audit log's checkpoints are signed with FOUNDRY_AUDIT_SIGNING_KEY ($$f is not used)"; \
	else \
		if [ ! -s "$$f" ]; then \
			(umask 077 && mkdir -p "$$(dirname "$$f")" && ./bin/foundry audit keygen > "$$f.tmp") || exit 1; mv "$$f.tmp" "$$f"; \
			echo "make run: made the audit log's signing key and kept it in $$f (foundry audit keygen)"; fi; \
		if [ -z "$$(sed -n 's/^FOUNDRY_AUDIT_SIGNING_KEY=//p; /^PRIVATE+KEY+/p' "$$f")" ]; then \
			echo "make run: $$f holds no audit signing key (a FOUNDRY_AUDIT_SIGNING_KEY=PRIVATE+KEY+... line): remove it to make" \
				"a new one (clients that verified the log will then refuse the new key until given it with --key)" >&2; exit 1; fi; \
		echo "make run: the audit log's checkpoints are signed with the key in $$f;" \
			"verifier key: $$(sed -n 's/^# verifier key: //p' "$$f" | grep . || echo 'see GET /api/audit/verifier-key')"; \
	fi
	env $(if $(strip $(FOUNDRY_ADMIN_KEY)),,-u FOUNDRY_ADMIN_KEY) $(if $(strip $(FOUNDRY_SERVICE_KEY)),,-u FOUNDRY_SERVICE_KEY) \
		FOUNDRY_GITHUB_ALLOW_UNSIGNED=$${FOUNDRY_GITHUB_ALLOW_UNSIGNED:-true} \
		FOUNDRY_AUDIT_SIGNING_KEY="$${FOUNDRY_AUDIT_SIGNING_KEY:-$$(sed -n 's/^FOUNDRY_AUDIT_SIGNING_KEY=//p; /^PRIVATE+KEY+/p' "$(AUDIT_KEY_FILE)" | head -n 1)}" \
		./bin/foundry

.PHONY: run-loop
run-loop: ## make run with the pipeline loop on and a demonstration worker (foundry worker --demo) beside it.
	@# The server in the background, the worker in the foreground: Ctrl-C
	@# reaches both (one process group), the worker hands its task back
	@# and the server stops; when the worker ends otherwise, the trap
	@# stops the server (SIGTERM, as gracefully), and waits for it.
	@FOUNDRY_AGENT_LOOP=true FOUNDRY_AGENT_LOOP_INTERVAL=$${FOUNDRY_AGENT_LOOP_INTERVAL:-2s} $(MAKE) --no-print-directory run & server=$$!; \
	trap 'sleep 2; kill -0 $$server 2>/dev/null && kill -TERM $$server; wait $$server 2>/dev/null' EXIT; \
	until [ -x ./bin/foundry ] && ./bin/foundry status --wait --timeout 5s -q >/dev/null 2>&1; do \
		kill -0 $$server 2>/dev/null || exit 1; sleep 1; done; \
	key=$${FOUNDRY_ADMIN_KEY:-$$(cat data/admin.key)}; \
	token=$$(FOUNDRY_API_KEY=$$key ./bin/foundry tokens create "demo-worker-$$(date +%s)" --role worker --ttl 1d -q) || exit 1; \
	echo "make run-loop: the pipeline loop is on; foundry worker --demo runs its tasks (the demonstration executor: no model is called)"; \
	FOUNDRY_TOKEN=$$token ./bin/foundry worker --demo

.PHONY: load
load: ## Put a running Foundry (FOUNDRY_READS_PER_MIN=0 make run) under load for 20 s and print latencies.
	go run ./bench/cmd/loadgen -addr http://$${FOUNDRY_HTTP_ADDR:-127.0.0.1:8080} -c 8 -d 20s

.PHONY: bench-http
# Needs a Postgres server it may create a scratch database on
# (FOUNDRY_BENCH_DATABASE_URL, default the local one); BENCH_HTTP_FLAGS adds
# flags, e.g. BENCH_HTTP_FLAGS="-routes stake,idea -round 5s".
bench-http: ## Measure the hot REST routes against bare single-hop and two-hop (HTTP front, gRPC back end) servers doing the same SQL (Postgres).
	go build -trimpath $(BUILDVCS) -o bin/foundry ./cmd/foundry
	go build -trimpath -o bin/bench-bare ./bench/bare
	go build -trimpath -o bin/bench-twohop-front ./bench/twohop/front
	go build -trimpath -o bin/bench-twohop-back ./bench/twohop/back
	go run ./bench/cmd/bench-http $(BENCH_HTTP_FLAGS)

.PHONY: bench-scale
# Needs a Postgres server it may create a scratch database on
# (FOUNDRY_BENCH_DATABASE_URL, default the local one). BENCH_SCALE_ROWS (default
# 100000) is read by the command from the environment; BENCH_SCALE_FLAGS adds
# flags, e.g. BENCH_SCALE_FLAGS="-d 2s -idle 10s -routes audit,tasks-cursor".
bench-scale: ## Measure the routes and background jobs fresh and after seeding BENCH_SCALE_ROWS rows per dominant table through the API (Postgres).
	go build -trimpath $(BUILDVCS) -o bin/foundry ./cmd/foundry
	go run ./bench/cmd/bench-scale $(BENCH_SCALE_FLAGS)

.PHONY: bench
bench: ## Run the Go benchmarks (Postgres ones need FOUNDRY_TEST_DATABASE_URL).
	go test -run '^$$' -bench . $(MODULES)

# --- checks --------------------------------------------------------------------

# Postgres for the tests: FOUNDRY_TEST_DATABASE_URL if set, else the local
# server when it accepts a connection (each test gets its own schema or
# database); otherwise the tests run on SQLite alone, and say so.
LOCAL_PG_URL := postgres://postgres@127.0.0.1:5432/test?sslmode=disable
TEST_LOG := .cache/test.log
# FIND_TEST_PG sets the shell variable url to the tests' Postgres, or to
# nothing when none answers.
FIND_TEST_PG = url="$${FOUNDRY_TEST_DATABASE_URL:-}"; \
	if [ -z "$$url" ] && command -v psql >/dev/null && psql '$(LOCAL_PG_URL)' -qtAc 'SELECT 1' >/dev/null 2>&1; then url='$(LOCAL_PG_URL)'; fi;

.PHONY: fmt
fmt: ## Format the Go code.
	gofmt -w $$(git ls-files '*.go' | grep -v '^proto/gen/')

.PHONY: check-format
check-format: ## Fail when Go code is not gofmt-formatted.
	@out=$$(git ls-files '*.go' | grep -v '^proto/gen/' | xargs gofmt -l); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

.PHONY: lint
lint: $(BIN)/.golangci-lint-$(GOLANGCI_LINT_VERSION) ## Run golangci-lint on every module (see .golangci.yml).
	@for m in $$(go list -f '{{.Dir}}' -m); do echo "golangci-lint $$m"; (cd $$m && golangci-lint run ./...) || exit 1; done

.PHONY: vet
vet: ## Run go vet on every module (the chaos test's build tag included).
	go vet -tags chaos $(MODULES)

# The module tests run side by side on two cores under -race; the e2e
# package alone takes about 5 minutes here and past go test's default 10
# minute limit beside the others on CI, so the limit is raised for it.
TEST_TIMEOUT ?= 25m

# The chaos test (e2e/chaos_test.go, build tag chaos) runs
# after the others, without the race detector (it is about processes dying,
# and -race would triple its minutes): CHAOS_SEEDS seeds per engine, at the
# full size (32 clients x 400 operations). make test-chaos runs more.
CHAOS_SEEDS ?= 1
CHAOS_TEST = go test -tags chaos -count=1 -timeout 40m -v -run '^TestChaos$$' ./e2e/

.PHONY: test
test: check-generated breaking check-format vet lint check-web ## Run every check (lint included) and every test, on SQLite and (when reachable) Postgres, then the chaos, API-server and browser tests.
	@mkdir -p .cache
	@$(FIND_TEST_PG) \
	if [ -n "$$url" ]; then echo "engines: sqlite and postgres"; else echo "engines: sqlite only (no Postgres reachable)"; fi; \
	status=0; FOUNDRY_TEST_DATABASE_URL="$$url" go test -race -count=1 -timeout $(TEST_TIMEOUT) -v $(MODULES) > $(TEST_LOG) 2>&1 || status=$$?; \
	echo "chaos: $(CHAOS_SEEDS) seed(s) per engine"; \
	FOUNDRY_TEST_DATABASE_URL="$$url" FOUNDRY_CHAOS_SEEDS=$(CHAOS_SEEDS) $(CHAOS_TEST) >> $(TEST_LOG) 2>&1 || status=$$?; \
	grep -E '^(ok|FAIL|panic:)|^--- FAIL|--- (PASS|FAIL|SKIP): TestConformance/(sqlite|postgres) |chaos_test.go:[0-9]+: (seed|verified)' $(TEST_LOG) || true; \
	if [ $$status -ne 0 ]; then echo; echo "=== failures (full log: $(TEST_LOG)) ==="; grep -E -B 3 -A 25 -- '--- FAIL|^panic:|\[build failed\]|cannot|undefined' $(TEST_LOG) | head -400; fi; \
	passed=$$(grep -cE -- '--- PASS' $(TEST_LOG) || true); failed=$$(grep -cE -- '--- FAIL' $(TEST_LOG) || true); \
	skipped=$$(grep -cE -- '--- SKIP' $(TEST_LOG) || true); \
	echo "$$passed passed, $$failed failed, $$skipped skipped"; \
	exit $$status
	@$(MAKE) --no-print-directory test-apiserver
	@$(MAKE) --no-print-directory test-browser

.PHONY: test-chaos
CHAOS_LONG_SEEDS ?= 5

test-chaos: ## Run the chaos test alone, longer: CHAOS_LONG_SEEDS seeds (5) per engine from FOUNDRY_CHAOS_SEED (1).
	@$(FIND_TEST_PG) \
	FOUNDRY_TEST_DATABASE_URL="$$url" FOUNDRY_CHAOS_SEEDS=$(CHAOS_LONG_SEEDS) $(CHAOS_TEST) 2>&1 | grep -vE '^\s*\{'

.PHONY: test-apiserver
# deploy/apiserver is its own module outside go.work (deploy/README.md, Tests),
# so the workspace's test target does not reach it.
test-apiserver: ## Dry-run apply every overlay to an in-process kube-apiserver under restricted Pod Security.
	@echo "api server: every overlay, server-side dry-run, restricted Pod Security (deploy/apiserver; the first build takes minutes)"
	@cd deploy/apiserver && GOWORK=off go test -count=1 ./...

# Fuzzing: FUZZTIME per target; FUZZ_FLAGS adds go test flags (e.g.
# FUZZ_FLAGS=-parallel=1 on a busy machine). go test -fuzz runs one target of
# one package at a time, so each module's targets are listed first (go test
# -list, which also builds every test binary) and then run in turn. A run
# that fails with "context deadline exceeded" and writes no failing input is
# Go's own race at the end of a timed run (go.dev/issue/75804, fixed in Go
# 1.27), reported and passed over; any other failure stops. A failing input
# lands in the package's testdata/fuzz, to be committed with the fix.
FUZZTIME ?= 30s
FUZZ_OUT := .cache/fuzz.out

.PHONY: fuzz
fuzz: ## Run every Go fuzz target for FUZZTIME each (make fuzz FUZZTIME=30s).
	@mkdir -p .cache; n=0; raced=0; for m in $$(go list -f '{{.Dir}}' -m); do \
		targets=$$(cd $$m && go test -vet=off -list '^Fuzz' ./... | \
			awk '/^Fuzz/ {names = names " " $$1; next} /^ok/ {n = split(names, a, " "); for (i = 1; i <= n; i++) print $$2 ":" a[i]; names = ""}') || exit 1; \
		for t in $$targets; do \
			pkg=$${t%%:*}; name=$${t#*:}; n=$$((n + 1)); \
			echo "go test -run '^$$' -fuzz '^$$name\$$' -fuzztime $(FUZZTIME) $(FUZZ_FLAGS) $$pkg"; \
			if ! (cd $$m && go test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $(FUZZ_FLAGS) $$pkg) 2>&1 | tee $(FUZZ_OUT); then \
				if grep -q 'Failing input written to' $(FUZZ_OUT) || ! grep -qx '    context deadline exceeded' $(FUZZ_OUT); then exit 1; fi; \
				echo "fuzz: $$name: Go's end-of-fuzztime race (go.dev/issue/75804), no failing input; going on"; raced=$$((raced + 1)); \
			fi; \
		done; \
	done; echo "$$n fuzz targets ran for $(FUZZTIME) each ($$raced hit Go's end-of-run race)"

.PHONY: clean
clean: ## Remove build output and the laptop data directory.
	rm -rf .cache data $(foreach b,$(BINARIES),bin/$(firstword $(subst :, ,$(b))))

# --- the dashboard (gateway/web) -------------------------------------------------

# The dashboard's sources are in gateway/web/src and its build, committed, in
# gateway/web/dist, which the gateway embeds (docs/dashboard.md). npm installs
# the packages package-lock.json pins, again only when it changes; nothing is
# downloaded at install time (no install scripts, no browser: the browser
# tests drive the system's Chromium, installed from Debian's packages).
WEB := gateway/web
WEB_STAMP := $(WEB)/node_modules/.installed
WEB_SCRATCH := .cache/web-dist
WEB_TYPES_SCRATCH := .cache/api.gen.ts
CHROMIUM ?= /usr/bin/chromium

$(WEB_STAMP): $(WEB)/package.json $(WEB)/package-lock.json
	cd $(WEB) && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $@

.PHONY: web-build
web-build: $(WEB_STAMP) ## Type-check and build the dashboard into gateway/web/dist (commit the result).
	cd $(WEB) && npm run --silent gen:types && npx tsc --noEmit -p . && npx tsc --noEmit -p e2e && npx vite build --logLevel warn

.PHONY: check-web
check-web: $(WEB_STAMP) ## Fail when the committed dashboard build is not what its sources build.
	@rm -rf $(WEB_SCRATCH)
	@mkdir -p .cache
	cd $(WEB) && npm run --silent gen:types -- $(CURDIR)/$(WEB_TYPES_SCRATCH)
	@diff $(WEB_TYPES_SCRATCH) $(WEB)/src/api.gen.ts || \
		{ echo "the dashboard's API types are stale: run 'make web-build' and commit gateway/web/src/api.gen.ts" >&2; exit 1; }
	cd $(WEB) && npx tsc --noEmit -p . && npx tsc --noEmit -p e2e && \
		npx vite build --logLevel warn --emptyOutDir --outDir $(CURDIR)/$(WEB_SCRATCH)
	@diff -r $(WEB_SCRATCH) $(WEB)/dist || \
		{ echo "the dashboard build is stale: run 'make web-build' and commit gateway/web/dist" >&2; exit 1; }
	@echo "dashboard build is up to date"

.PHONY: test-browser
# Installs Chromium when it is missing (as root, or through sudo), builds
# bin/foundry with the committed dashboard, and runs the Playwright tests,
# which start that Foundry on free ports and a scratch data directory.
# Screenshots, traces and Foundry's log land in .cache/browser.
test-browser: $(WEB_STAMP) ## Run the dashboard's browser tests (Playwright, Chromium) against a real Foundry.
	@if ! [ -x "$(CHROMIUM)" ]; then \
		sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; mkdir -p .cache; \
		echo "test-browser: installing Chromium from Debian's packages (log: .cache/chromium-install.log)"; \
		{ $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq chromium; } \
			> .cache/chromium-install.log 2>&1 || { tail -20 .cache/chromium-install.log >&2; exit 1; }; \
	fi
	go build -trimpath $(BUILDVCS) -o bin/foundry ./cmd/foundry
	cd $(WEB) && FOUNDRY_CHROMIUM=$(CHROMIUM) npx playwright test -c e2e/playwright.config.ts
