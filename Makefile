# bosun's build, test and demo entry points. `make test` is what CI runs.

SHELL := /usr/bin/env bash
GO ?= go
BIN := $(CURDIR)/bin

GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)

# Time for the whole test run; the first run also builds the control-plane binaries.
TEST_TIMEOUT ?= 30m
FUZZ_TIME ?= 20s
DSL_FUZZ_TIME ?= 30s

# The modules of this repository (go.work; docs/MODULES.md): the library first, then the command, the
# examples, the benches, the repository's own tools, the manifests helper and the browser tests.
MODULES := . ./cmd/bosun ./examples ./bench ./hack ./internal/manifests ./e2e
# Every package of every module: with go.work, one go command builds and tests them all together.
ALL_PKGS := $(addsuffix /...,$(MODULES))
# Modules outside go.work, built with GOWORK=off against their own Kubernetes libraries:
# hack/certmanager runs cert-manager's controllers, hack/trustmanager pins trust-manager. Those with
# code are vetted (hack/controlplane and hack/kwok hold no code and are checked through
# controlplane's generated copy of their go.mod).
STANDALONE := ./hack/certmanager ./hack/trustmanager
STANDALONE_CODE := ./hack/certmanager

.PHONY: all
all: test

## demo: start the embedded control plane (and PostgreSQL) and run every example operator until Ctrl-C.
.PHONY: demo
demo: postgres
	$(GO) run ./cmd/bosun demo

## test: lint, vet, build the control plane and install PostgreSQL and Chromium if needed, then run every test of
##   every module with -race.
.PHONY: test
test: lint vet controlplane postgres chromium
	$(GO) test -race -timeout $(TEST_TIMEOUT) $(ALL_PKGS)
	$(MAKE) fuzz

## test-tuned: the tests of the engine and of the packages that build on it, with bosun's tuning on in their
##   managers (bosuntest.EnvTuning): every promise holds with tuning on as well as off (docs/TUNING.md).
.PHONY: test-tuned
test-tuned: controlplane postgres
	BOSUN_TUNING=on $(GO) test -race -timeout $(TEST_TIMEOUT) . ./tuning/... ./children/... ./managed/... ./ref/... ./watch/... ./shard/...

## controlplane: build kube-apiserver, etcd, kube-controller-manager, kube-scheduler and kwok from Go modules into the
##   user cache (once; 10 to 15 minutes on 2 cores the first time, each build saying how long it usually takes).
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

## chromium: install Chromium from Debian's packages when none is found (the debug page's browser test drives
## it headless; BOSUN_CHROMIUM names another binary).
.PHONY: chromium
chromium:
	@if [ -n "$${BOSUN_CHROMIUM:-}" ] || command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || command -v google-chrome >/dev/null 2>&1; then \
		echo "Chromium found"; \
	else \
		echo "installing Chromium from Debian's packages"; \
		SUDO=; if [ "$$(id -u)" != 0 ]; then SUDO=sudo; fi; \
		$$SUDO apt-get update && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; \
	fi

EXAMPLES := cronjob hello memcached postgres rwexternal simple site

# The org.opencontainers.image.version label of the images `make image` builds.
IMAGE_VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

## image: build each example's container image into bin/images/<example>.tar (no daemon or registry needed;
##   reproducible: set SOURCE_DATE_EPOCH to date them, IMAGE_VERSION to label them).
.PHONY: image
image:
	@for ex in $(EXAMPLES); do \
		$(GO) run ./cmd/bosun image --main ./examples/$$ex/cmd --tag $$ex:dev --output $(BIN)/images/$$ex.tar \
			--source https://github.com/bosunkit/bosun --version $(IMAGE_VERSION) || exit 1; \
	done

## manifests: render each example's config/default into bin/manifests/<example>.yaml (kubectl apply --server-side -f).
.PHONY: manifests
manifests:
	@mkdir -p $(BIN)/manifests
	@for ex in $(EXAMPLES); do \
		$(GO) run ./cmd/bosun manifests --dir examples/$$ex/config/default --output $(BIN)/manifests/$$ex.yaml || exit 1; \
	done

## charts: write each example's Helm chart, made from its config/default, into bin/charts/<example>
##   (helm install NAME bin/charts/<example> -n NAMESPACE --create-namespace; docs/DEPLOY.md).
.PHONY: charts
charts:
	@for ex in $(EXAMPLES); do \
		$(GO) run ./cmd/bosun chart --dir examples/$$ex/config/default --output $(BIN)/charts/$$ex || exit 1; \
	done

## fuzz: run each fuzz target for FUZZ_TIME (hack/fuzz.sh retries once a run that only stopped late).
.PHONY: fuzz
fuzz:
	GO=$(GO) hack/fuzz.sh ./examples/hello FuzzRender $(FUZZ_TIME)
	GO=$(GO) hack/fuzz.sh ./cmd/bosun/dsl FuzzParse $(DSL_FUZZ_TIME)
	GO=$(GO) hack/fuzz.sh ./internal/trim FuzzTrimValue $(FUZZ_TIME)

# `make reliability` keeps the figures file and the fuzzing outputs of its last run here.
RELIABILITY_DIR := $(BIN)/reliability
RELIABILITY_FIGURES := $(RELIABILITY_DIR)/figures.jsonl
# The row of docs/RELIABILITY.md's figures table for the DSL fuzzing: FuzzParse and FuzzGenerate,
# 5 minutes each.
DSL_FUZZ_ROW := DSL fuzz, 10 min (parser and generator)|dsl

# The packages whose battery `make reliability` runs, how many crash trials run at once, and whether
# to add to the figures of an earlier run (RELIABILITY_APPEND=1) instead of starting afresh: its
# figures file if there is one, and the rows of docs/RELIABILITY.md this run did not measure.
BATTERY_PKGS ?= $(ALL_PKGS)
# The tests `make reliability` runs (go test -run): every battery test, or some of them.
BATTERY_RUN ?= Battery
BATTERY_PARALLEL ?= 4
RELIABILITY_APPEND ?=
# How long each DSL fuzz target runs in `make reliability`; empty skips the fuzz row.
RELIABILITY_FUZZ_TIME ?= 5m

## reliability: the whole reliability battery, which takes hours: every test named *Battery* at its full size
##   (BOSUN_BATTERY=full), then FuzzParse and FuzzGenerate for 5 minutes each; writes the figures, the machine
##   and the date into docs/RELIABILITY.md, and fails if any test or fuzz target failed. It runs without
##   -race, to measure time as a user would see it; `make test` runs every row with -race at short size.
.PHONY: reliability
reliability: controlplane postgres
	@if [ -z "$(RELIABILITY_APPEND)" ]; then rm -rf $(RELIABILITY_DIR); fi; \
	mkdir -p $(RELIABILITY_DIR) && touch $(RELIABILITY_FIGURES)
	@failed=; \
	BOSUN_BATTERY=full BOSUN_FIGURES=$(RELIABILITY_FIGURES) \
		$(GO) test -run '$(BATTERY_RUN)' -timeout 0 -p 1 -parallel $(BATTERY_PARALLEL) $(BATTERY_PKGS) || failed="battery tests"; \
	if [ -n "$(RELIABILITY_FUZZ_TIME)" ]; then \
		for target in cmd/bosun/dsl/FuzzParse cmd/bosun/gen/FuzzGenerate; do \
			fuzz=$${target##*/}; log=$(RELIABILITY_DIR)/$$fuzz.log; \
			$(GO) test -run '^$$' -fuzz "^$$fuzz\$$" -fuzztime $(RELIABILITY_FUZZ_TIME) ./$${target%/*} 2>&1 | tee $$log; \
			[ "$${PIPESTATUS[0]}" = 0 ] || failed="$${failed:+$$failed, }$$fuzz"; \
		done; \
		$(GO) run ./hack/figures -in $(RELIABILITY_FIGURES) -fuzz '$(DSL_FUZZ_ROW)' \
			$(RELIABILITY_DIR)/FuzzParse.log $(RELIABILITY_DIR)/FuzzGenerate.log || exit 1; \
	fi; \
	$(GO) run ./hack/figures -in $(RELIABILITY_FIGURES) -doc docs/RELIABILITY.md $(if $(RELIABILITY_APPEND),-keep) \
		-command "make reliability" -failed "$$failed" || exit 1; \
	echo "figures written to docs/RELIABILITY.md (recorded in $(RELIABILITY_FIGURES))"; \
	if [ -n "$$failed" ]; then echo "reliability: failed: $$failed"; exit 1; fi

## bench-e2e: bosun against a hand-written controller and the bare minimum on a real API server, every row of
##   docs/BENCHMARKS.md "End to end" and "Fairness and sharding" (about 30 minutes; BENCH_E2E_FLAGS adds flags, such as -n 500 -rounds 1 or -rows shard).
.PHONY: bench-e2e
bench-e2e: controlplane
	$(GO) run ./bench/e2e $(BENCH_E2E_FLAGS)

## bench-postgres: the managed step at scale, 1,000 Roles of the postgres example on a real API server and
##   PostgreSQL, with and without a call limit: docs/BENCHMARKS.md "Managed step at scale" (about 5 minutes;
##   BENCH_POSTGRES_FLAGS adds flags, such as -n 200 -poll 5s).
.PHONY: bench-postgres
bench-postgres: controlplane postgres
	$(GO) run ./bench/postgres $(BENCH_POSTGRES_FLAGS)

## bench-polling: the managed step's polls of 1,000 Ready Roles of the postgres example, started again one by one,
##   spread, with batches and with notifications: docs/BENCHMARKS.md "Managed polling at scale" (about 5 minutes;
##   BENCH_POLLING_FLAGS adds flags, such as -n 200 -poll 5s).
.PHONY: bench-polling
bench-polling: controlplane postgres
	$(GO) run ./bench/polling $(BENCH_POLLING_FLAGS)

## bench-dev: what the workload controllers and simulated nodes add to bosun dev and to the control plane's
##   start: docs/BENCHMARKS.md "bosun dev" (about 2 minutes; BENCH_DEV_FLAGS adds flags, such as -rounds 9).
.PHONY: bench-dev
bench-dev: controlplane
	$(GO) run ./bench/dev $(BENCH_DEV_FLAGS)

## bench-binsize: what a production binary links: the memcached operator on operator.Main against the same
##   controller on a bare manager: docs/BENCHMARKS.md "A production binary" (about a minute).
.PHONY: bench-binsize
bench-binsize:
	$(GO) run ./bench/binsize

## bench-trust: the trust example beside trust-manager (built from its module, pinned by hack/trustmanager), each
##   on a control plane of its own, through the rows of docs/BENCHMARKS.md "trust-manager's Bundle" (about
##   4 hours a round at the default sizes, as trust-manager's client makes 5 requests a second; BENCH_TRUST_FLAGS
##   adds flags, such as -namespaces 200 -bundles 10 -rounds 1, or -arms bosun for the port alone).
.PHONY: bench-trust
bench-trust: controlplane
	$(GO) run ./bench/trust $(BENCH_TRUST_FLAGS)

## bench: the Go benchmarks recorded in docs/BENCHMARKS.md.
.PHONY: bench
bench:
	$(GO) test -run '^$$' -bench 'Reconcile|EngineOverhead' -benchtime 10000x -count 3 -benchmem .
	$(GO) test -run '^$$' -bench . -benchmem ./cmd/bosun/gen
	$(GO) test -run '^$$' -bench ConvergedPass -benchmem -count 3 ./children

## loc: the lines of code of every example, as docs/EXAMPLES.md reports them (LOC_REV=<rev> counts an older tree).
.PHONY: loc
loc:
	$(GO) run ./hack/loc $(if $(LOC_REV),-rev $(LOC_REV))

.PHONY: vet
vet:
	$(GO) vet $(ALL_PKGS)
	@for m in $(STANDALONE_CODE); do (cd $$m && GOWORK=off $(GO) vet ./...) || exit 1; done

## lint: golangci-lint, pinned, installed into bin/.
.PHONY: lint
lint: $(GOLANGCI_LINT)
	$(GOLANGCI_LINT) run $(ALL_PKGS)

$(GOLANGCI_LINT):
	@mkdir -p $(BIN)
	GOBIN=$(BIN) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(BIN)/golangci-lint $@

## generate: regenerate every generated file (deepcopy, CRDs, RBAC, bosun gen output, embedded control-plane module).
.PHONY: generate
generate:
	$(GO) generate $(ALL_PKGS)

## apisize: report the size of the library API against its goals (docs/API.md), and fail when one is missed; `make verify` runs it.
.PHONY: apisize
apisize:
	$(GO) run ./hack/apisize -strict -doc docs/API.md

## api: record the library's exported API in docs/API.txt; an incompatible change is recorded only once
##   CHANGELOG.md names it (hack/apicheck).
.PHONY: api
api:
	$(GO) run ./hack/apicheck -write

## verify: regenerate and fail when a generated file differs from the committed one or a module is not tidy on its
##   own (go.mod, go.sum, go.work.sum); report the API's size;
##   fail when the exported API differs from docs/API.txt (hack/apicheck) or when docs/*.md cite a test
##   that does not exist, and the same of README.md (hack/promises).
.PHONY: verify
verify: generate apisize
	$(GO) run ./hack/apicheck
	$(GO) run ./hack/promises
	@unformatted=$$($(GO) run ./cmd/bosun fmt -l .) || exit 1; \
	if [ -n "$$unformatted" ]; then \
		echo ".bosun documents are not in canonical form; run '$(GO) run ./cmd/bosun fmt -w .' and commit:"; \
		echo "$$unformatted"; exit 1; \
	fi
	@for m in $(MODULES) $(STANDALONE); do \
		(cd $$m && GOWORK=off $(GO) mod tidy -diff >/dev/null) || { \
			echo "module $$m is not tidy on its own: run 'cd $$m && GOWORK=off go mod tidy' and commit"; exit 1; }; \
	done
	@# Loading every package of the workspace fills go.work.sum: a line it adds shows below as a change.
	$(GO) list -deps -test $(ALL_PKGS) >/dev/null
	@if [ -n "$$(git status --porcelain)" ]; then \
		echo "generated files are out of date; run 'make generate' and commit:"; \
		git status --porcelain; git --no-pager diff --stat; exit 1; \
	fi

.PHONY: help
help:
	@grep -E '^## ' $(MAKEFILE_LIST) | sed 's/^## /  /'
