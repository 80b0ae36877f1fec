# bosun's build, test and demo entry points. `make test` is what CI runs.

SHELL := /usr/bin/env bash
GO ?= go
BIN := $(CURDIR)/bin

GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)

# Time for the whole test run; the first run also builds kube-apiserver and etcd.
TEST_TIMEOUT ?= 30m
FUZZ_TIME ?= 20s
DSL_FUZZ_TIME ?= 30s

.PHONY: all
all: test

## demo: start the embedded control plane (and PostgreSQL) and run every example operator until Ctrl-C.
.PHONY: demo
demo: postgres
	$(GO) run ./cmd/bosun demo

## test: lint, vet, build the control plane and install PostgreSQL if needed, then run every test with -race.
.PHONY: test
test: lint vet controlplane postgres
	$(GO) test -race -timeout $(TEST_TIMEOUT) ./...
	$(MAKE) fuzz

## controlplane: build kube-apiserver and etcd from Go modules into the user cache (once).
.PHONY: controlplane
controlplane:
	$(GO) run ./cmd/bosun controlplane

## postgres: install PostgreSQL from Debian's packages when no server binaries are found
## (the examples' tests start their own server from them; BOSUN_POSTGRES_BIN overrides the search).
.PHONY: postgres
postgres:
	@if [ -n "$${BOSUN_POSTGRES_BIN:-}" ] || ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then \
		echo "PostgreSQL server binaries found"; \
	else \
		echo "installing PostgreSQL from Debian's packages"; \
		SUDO=; if [ "$$(id -u)" != 0 ]; then SUDO=sudo; fi; \
		$$SUDO mkdir -p /etc/postgresql-common/createcluster.d && \
		echo 'create_main_cluster = false' | $$SUDO tee /etc/postgresql-common/createcluster.d/bosun.conf >/dev/null && \
		$$SUDO apt-get update && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql; \
	fi

## fuzz: run each fuzz target for FUZZ_TIME.
.PHONY: fuzz
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzJoinOrder$$' -fuzztime $(FUZZ_TIME) ./flow
	$(GO) test -run '^$$' -fuzz '^FuzzRender$$' -fuzztime $(FUZZ_TIME) ./examples/hello
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(DSL_FUZZ_TIME) ./dsl

## bench: the Go benchmarks recorded in docs/BENCHMARKS.md.
.PHONY: bench
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./flow
	$(GO) test -run '^$$' -bench 'Reconcile|EngineOverhead' -benchtime 10000x -count 3 -benchmem .
	$(GO) test -run '^$$' -bench . -benchmem ./gen
	$(GO) test -run '^$$' -bench ConvergedPass -benchmem -count 3 ./children

.PHONY: vet
vet:
	$(GO) vet ./...

## lint: golangci-lint, pinned, installed into bin/.
.PHONY: lint
lint: $(GOLANGCI_LINT)
	$(GOLANGCI_LINT) run ./...

$(GOLANGCI_LINT):
	@mkdir -p $(BIN)
	GOBIN=$(BIN) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(BIN)/golangci-lint $@

## generate: regenerate every generated file (deepcopy, CRDs, RBAC, bosun gen output, embedded control-plane module).
.PHONY: generate
generate:
	$(GO) generate ./...

## verify: regenerate and fail when a generated file differs from the committed one.
.PHONY: verify
verify: generate
	@if [ -n "$$(git status --porcelain)" ]; then \
		echo "generated files are out of date; run 'make generate' and commit:"; \
		git status --porcelain; git --no-pager diff --stat; exit 1; \
	fi

.PHONY: help
help:
	@grep -E '^## ' $(MAKEFILE_LIST) | sed 's/^## /  /'
