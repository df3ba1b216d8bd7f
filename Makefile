# mcphost build targets.

GO        ?= go
BUILD_DIR ?= build
PLUGINS   := $(BUILD_DIR)/plugins

# Example plugins: one folder each under plugins/examples, in any language,
# told apart by what the folder holds, and built into build/plugins:
#   Go          main.go, with manifest.json embedded after the build;
#   Rust        Cargo.toml; the crate embeds its manifest itself
#               (mcphost_pdk::manifest!), and pdk/rust/build-plugin.sh picks
#               the toolchain (scripts/setup-rust.sh installs Debian's) or,
#               when there is none, skips with a warning, unless CI is set;
#   JavaScript  NAME.js, copied as is: mcphost runs it on its embedded engine
#               (internal/jsengine).
GO_EXAMPLES   := $(notdir $(patsubst %/main.go,%,$(wildcard plugins/examples/*/main.go)))
RUST_EXAMPLES := $(notdir $(patsubst %/Cargo.toml,%,$(wildcard plugins/examples/*/Cargo.toml)))
JS_EXAMPLES   := $(notdir $(wildcard plugins/examples/*/*.js))
vpath %.js $(sort $(dir $(wildcard plugins/examples/*/*.js)))

# Test-only plugins in testdata folders (go patterns skip those, so they are listed).
TESTDATA_PLUGINS := $(patsubst %/,%,$(wildcard sandbox/testdata/*/))

# The fuzz targets of the sandbox's module reader and passes
# (sandbox/internal/wasmpass), each run for a bounded number of inputs
# beyond its seeds.
SANDBOX_FUZZ := FuzzModulePasses FuzzCheckCompileCost FuzzInspect

# Nested modules: the ABI types and the Go PDK, which plugins require without
# the server. The root module's ./... skips them, so they are vetted and
# tested from inside (gofmt covers every file of the repository already).
MODULES := abi pdk/go

# newline ends a recipe line inside $(foreach): one command per module.
define newline


endef

# The TinyGo builds of the Go plugins (scripts/setup-tinygo.sh installs
# TinyGo; internal/tinygo holds the target): the default scheduler, none,
# and asyncify, for plugins that start goroutines. make test runs the
# examples' and the conformance plugin's tests on each
# (MCPHOST_PLUGIN_TOOLCHAIN, internal/testrig/plugintest).
TINYGO_VARIANTS := tinygo-none tinygo

# Plugins are reactor modules: -buildmode=c-shared gives them the
# _initialize export that runs package initialisation.
WASM_ENV   := GOOS=wasip1 GOARCH=wasm
WASM_FLAGS := -buildmode=c-shared -trimpath -ldflags=-s

.PHONY: build serve test check examples clean FORCE

## build: build the mcphost binary into build/mcphost
build: $(BUILD_DIR)/mcphost

# VERSION is what `mcphost version` prints: the nearest tag, commits since
# and the commit (git describe), or dev outside a git checkout.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

$(BUILD_DIR)/mcphost: FORCE
	$(GO) build -buildvcs=auto -ldflags "-X main.version=$(VERSION)" -o $@ ./cmd/mcphost

## serve: build the examples and serve them over stdio with ./mcphost.toml (stdout carries only MCP; the set-up and the build log to stderr); the Rust example's toolchain is installed first (scripts/setup-rust.sh), since serve stops when a plugin that mcphost.toml names is missing
serve:
	@scripts/setup-rust.sh >&2
	@$(MAKE) --no-print-directory build examples >&2
	@$(BUILD_DIR)/mcphost serve --plugins $(PLUGINS) --config mcphost.toml

## test: install what the tests need, check the code, run every test with the race detector, the README's walk-through, the allocation ceilings and wazero's specification tests through the module passes (without it), the fuzz targets for 2,000 inputs each, the examples' tests on their TinyGo builds, then the official MCP conformance suite (on the standard Go and TinyGo builds), and last, alone, the CPU-per-call ceilings (bench-check)
test: check
	$(GO) test -race -count=1 -timeout 30m ./...
	scripts/walkthrough.sh
	$(foreach m,$(MODULES),$(GO) -C $(m) test -race -count=1 ./...$(newline))
	$(GO) test -count=1 -run 'AllocationCeiling|LittleGarbage|SpecCorpus' ./host ./sandbox ./sandbox/internal/wasmpass
	$(GO) -C pdk/go test -count=1 -run AllocationCeiling .
	$(GO) test -count=1 -run 'LinearMemoryStaysFlat|Goroutines' ./internal/tinygo
	$(GO) test -race -run FuzzSession -fuzz FuzzSession -fuzztime 2000x ./host
	$(GO) test -run '^$$' -fuzz '^FuzzIDCheckAgreesWithDecoding$$' -fuzztime 2000x ./internal/jsonrpc
	$(GO) test -run '^$$' -fuzz '^FuzzSpanEncoding$$' -fuzztime 2000x ./tracing
	$(foreach f,$(SANDBOX_FUZZ),$(GO) test -run '^$$' -fuzz '^$(f)$$' -fuzztime 2000x ./sandbox/internal/wasmpass$(newline))
	$(foreach v,$(TINYGO_VARIANTS),MCPHOST_PLUGIN_TOOLCHAIN=$(v) $(GO) test -count=1 -timeout 30m ./plugins/examples/ ./plugins/conformance/$(newline))
	scripts/conformance.sh
	CONFORMANCE_TOOLCHAIN=tinygo scripts/conformance.sh
	$(MAKE) --no-print-directory bench-check

## check: gofmt, go vet (native and wasip1), of the root module and of each nested module
check:
	scripts/setup.sh
	scripts/setup-rust.sh
	scripts/setup-js.sh
	scripts/setup-haproxy.sh
	scripts/setup-redis.sh
	scripts/setup-chromium.sh
	scripts/setup-registry.sh
	scripts/setup-keyring.sh
	scripts/setup-tinygo.sh
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(WASM_ENV) $(GO) vet ./plugins/... ./internal/testrig/testplugins/... ./internal/testrig/bench/extism $(TESTDATA_PLUGINS:%=./%)
	$(foreach m,$(MODULES),$(GO) -C $(m) vet ./...$(newline)$(WASM_ENV) $(GO) -C $(m) vet ./...$(newline))

## examples: build every example plugin, whatever its language, into build/plugins (<name>.wasm, or <name>.js); create build/notes, the notes example's store
examples: $(BUILD_DIR)/mcphost $(GO_EXAMPLES:%=$(PLUGINS)/%.wasm) $(RUST_EXAMPLES:%=$(PLUGINS)/%.wasm) $(JS_EXAMPLES:%=$(PLUGINS)/%)
	@mkdir -p $(BUILD_DIR)/notes

# build_plugin builds the plugin whose source (and manifest.json) is in
# directory $(1) into $@, manifest embedded. Its rules are always handed to
# go build (FORCE), which knows what is up to date.
define build_plugin
	@mkdir -p $(@D)
	$(WASM_ENV) $(GO) build $(WASM_FLAGS) -o $@.tmp ./$(1)
	$(BUILD_DIR)/mcphost manifest embed $@.tmp $(1)/manifest.json
	@mv $@.tmp $@
endef

$(GO_EXAMPLES:%=$(PLUGINS)/%.wasm): $(PLUGINS)/%.wasm: FORCE
	$(call build_plugin,plugins/examples/$*)

$(RUST_EXAMPLES:%=$(PLUGINS)/%.wasm): $(PLUGINS)/%.wasm: FORCE
	pdk/rust/build-plugin.sh --skip-missing plugins/examples/$* $@

$(PLUGINS)/%.js: %.js
	@mkdir -p $(@D)
	cp $< $@

## rust-examples: build only the Rust example plugins
rust-examples: $(RUST_EXAMPLES:%=$(PLUGINS)/%.wasm)

.PHONY: rust-examples

## js-engine: rebuild internal/jsengine/engine.wasm, the JavaScript engine, from its pinned source (installs clang, lld and wasi-libc with scripts/setup-js.sh)
js-engine:
	scripts/setup-js.sh
	internal/jsengine/build.sh

## check-js-engine: check that the committed internal/jsengine/engine.wasm is what its pinned source builds to
check-js-engine:
	scripts/setup-js.sh
	internal/jsengine/build.sh --check

.PHONY: js-engine check-js-engine


FORCE:

## clean: remove build outputs
clean:
	rm -rf $(BUILD_DIR)

## conformance-plugin: build the conformance suite's fixtures into build/conformance/conformance.wasm
conformance-plugin: $(BUILD_DIR)/conformance/conformance.wasm

$(BUILD_DIR)/conformance/conformance.wasm: $(BUILD_DIR)/mcphost FORCE
	$(call build_plugin,plugins/conformance)

## conformance: run the official MCP conformance suite against mcphost (needs Node; see scripts/conformance.sh)
conformance:
	scripts/conformance.sh

.PHONY: conformance-plugin conformance

## bench: measure mcphost against a native go-sdk server (start-up with 1 and 50 distinct plugins per template language, cold and warm cache, idle and peak RSS; per-call wall time and CPU over stdio), interleaved rounds; writes build/bench/bench.json and docs/performance.md with its charts (BENCH_FLAGS adds options, e.g. -note "a quiet machine"; see -help)
bench: $(BUILD_DIR)/mcphost
	$(GO) run ./internal/testrig/bench -mcphost $(BUILD_DIR)/mcphost $(BENCH_FLAGS)

## bench-short: the quick version of bench (1 and 10 plugins, fewer calls; a few minutes on 2 cores)
bench-short: $(BUILD_DIR)/mcphost
	$(GO) run ./internal/testrig/bench -short -mcphost $(BUILD_DIR)/mcphost $(BENCH_FLAGS)

## bench-check: measure only the calls of every plugin over stdio (3 rounds of 4,000) and fail when one's server CPU per call over the native server's is over its ceiling, issue 25's stretch target plus 25% (internal/testrig/bench/ceilings.go), pinned to one CPU; the last step of make test, run alone so that no other test disturbs it
bench-check: $(BUILD_DIR)/mcphost
	$(GO) run ./internal/testrig/bench -check -mcphost $(BUILD_DIR)/mcphost -out $(BUILD_DIR)/bench/check.json $(BENCH_FLAGS)

## bench-telemetry: the overhead of /metrics, and of /metrics with every span exported to a loopback OTLP receiver, on the Go template's stdio calls: server CPU per call against all telemetry off, interleaved in the same rounds, pinned to one CPU (issue 26's targets: 2% and 5%)
bench-telemetry: $(BUILD_DIR)/mcphost
	$(GO) run ./internal/testrig/bench -parts telemetry -langs go -plugins 1 -rounds 9 -calls 4000 -doc "" -out $(BUILD_DIR)/bench/telemetry.json $(BENCH_FLAGS)

.PHONY: bench bench-short bench-check bench-telemetry

## walkthrough: run the README's walk-through as written (its sh blocks, in a temporary folder, against a fresh build/mcphost; see scripts/walkthrough.sh)
walkthrough:
	scripts/walkthrough.sh

.PHONY: walkthrough

## docker-check: build the Dockerfile with buildah, without a daemon, and check that the image serves the examples as a user that is not root (optional, minutes; not part of make test; see scripts/docker-check.sh)
docker-check:
	scripts/docker-check.sh

.PHONY: docker-check

# RELEASE_PLATFORMS are the GOOS/GOARCH pairs make release builds.
RELEASE_PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64

## release: cross-compile mcphost for RELEASE_PLATFORMS into build/release/mcphost_VERSION_OS_ARCH.tar.gz (.zip for windows), each with README.md, LICENSE, CHANGELOG.md and mcphost.toml, and write build/release/SHA256SUMS
release:
	@rm -rf $(BUILD_DIR)/release && mkdir -p $(BUILD_DIR)/release
	@set -e; for p in $(RELEASE_PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; name=mcphost_$(VERSION)_$${os}_$${arch}; dir=$(BUILD_DIR)/release/$$name; \
		exe=mcphost; [ $$os = windows ] && exe=mcphost.exe; \
		echo "release: $$name"; mkdir -p $$dir; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -buildvcs=auto -ldflags "-s -X main.version=$(VERSION)" -o $$dir/$$exe ./cmd/mcphost; \
		cp README.md LICENSE CHANGELOG.md mcphost.toml $$dir/; \
		if [ $$os = windows ]; then (cd $(BUILD_DIR)/release && zip -qr $$name.zip $$name); \
		else tar -C $(BUILD_DIR)/release -czf $(BUILD_DIR)/release/$$name.tar.gz $$name; fi; \
		rm -rf $$dir; \
	done
	@cd $(BUILD_DIR)/release && sha256sum mcphost_* > SHA256SUMS && cat SHA256SUMS

.PHONY: release
