# Foundry build, run and test entry points. `make help` lists the targets.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# Pinned tool versions, installed from the Go module proxy into ./bin.
BUF_VERSION                := v1.75.0
PROTOC_GEN_GO_VERSION      := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.2
GRPC_GATEWAY_VERSION       := v2.32.0
GOLANGCI_LINT_VERSION      := v2.15.0

BIN := $(CURDIR)/bin
export PATH := $(BIN):$(PATH)
export GOTOOLCHAIN := local

# Every module of the workspace, as patterns go test and go vet accept.
MODULES := $(shell go list -f '{{.Dir}}/...' -m 2>/dev/null)

TOOLS := $(BIN)/.buf-$(BUF_VERSION) \
	$(BIN)/.protoc-gen-go-$(PROTOC_GEN_GO_VERSION) \
	$(BIN)/.protoc-gen-go-grpc-$(PROTOC_GEN_GO_GRPC_VERSION) \
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

$(BIN)/.grpc-gateway-$(GRPC_GATEWAY_VERSION):
	GOBIN=$(BIN) GOWORK=off go install \
		github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-grpc-gateway@$(GRPC_GATEWAY_VERSION) \
		github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-openapiv2@$(GRPC_GATEWAY_VERSION)
	@touch $@

# --- code generation -----------------------------------------------------------

GENERATED := proto/gen/go gateway/openapi

.PHONY: generate
# Generation writes to a scratch directory and replaces the committed output
# only when it succeeded, so a failed run leaves the tree as it was.
generate: tools ## Format, lint and generate the protobuf code (committed).
	buf format -w proto
	buf lint
	rm -rf .cache/gen && mkdir -p .cache/gen
	buf generate -o .cache/gen
	rm -rf proto/gen/go/foundry gateway/openapi/*.json
	cp -R .cache/gen/proto/gen/go/foundry proto/gen/go/
	cp .cache/gen/gateway/openapi/*.json gateway/openapi/
	rm -rf .cache/gen

.PHONY: check-generated
check-generated: generate ## Fail when the committed generated code differs from `make generate`.
	@if [ -n "$$(git status --porcelain -- proto $(GENERATED))" ]; then \
		git status --porcelain -- proto $(GENERATED); \
		echo "generated code is stale: run 'make generate' and commit the result" >&2; exit 1; \
	fi

.PHONY: breaking
breaking: tools ## Check the protos against main for breaking changes.
	@if git rev-parse --verify -q main >/dev/null && [ -n "$$(git ls-tree -r main --name-only -- proto/foundry)" ]; then \
		buf breaking --against '.git#branch=main'; \
	else echo "breaking: main has no protos yet, nothing to compare"; fi
