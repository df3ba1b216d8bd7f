# mcphost build targets.

GO        ?= go
BUILD_DIR ?= build
PLUGINS   := $(BUILD_DIR)/plugins

# Example plugins: each directory under plugins/examples with a manifest.
EXAMPLES := $(notdir $(patsubst %/manifest.json,%,$(wildcard plugins/examples/*/manifest.json)))

# Test-only plugins (go patterns skip testdata folders, so they are listed).
TESTDATA_PLUGINS := $(patsubst %/,%,$(wildcard plugins/testdata/*/ sandbox/testdata/*/))

# Plugins are reactor modules: -buildmode=c-shared gives them the
# _initialize export that runs package initialisation.
WASM_ENV   := GOOS=wasip1 GOARCH=wasm
WASM_FLAGS := -buildmode=c-shared -trimpath -ldflags=-s

.PHONY: build serve test check examples clean FORCE

## build: build the mcphost binary into build/mcphost
build: $(BUILD_DIR)/mcphost

$(BUILD_DIR)/mcphost: FORCE
	$(GO) build -o $@ ./cmd/mcphost

## serve: build the examples and serve them over stdio with ./mcphost.toml
serve: build examples
	$(BUILD_DIR)/mcphost serve --plugins $(PLUGINS) --config mcphost.toml

## test: install what the tests need, check the code, run every test with the race detector
test: check
	$(GO) test -race -count=1 ./...

## check: gofmt, go vet (native and wasip1)
check:
	scripts/setup.sh
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(WASM_ENV) $(GO) vet ./pdk/go/ ./plugins/examples/... $(TESTDATA_PLUGINS:%=./%)

## examples: build the example plugins into build/plugins/<name>.wasm, manifest embedded
examples: $(BUILD_DIR)/mcphost $(EXAMPLES:%=$(PLUGINS)/%.wasm)

# Always handed to go build (FORCE), which knows what is up to date.
$(PLUGINS)/%.wasm: FORCE
	@mkdir -p $(PLUGINS)
	$(WASM_ENV) $(GO) build $(WASM_FLAGS) -o $@.tmp ./plugins/examples/$*
	$(BUILD_DIR)/mcphost manifest embed $@.tmp plugins/examples/$*/manifest.json
	@mv $@.tmp $@

FORCE:

## clean: remove build outputs
clean:
	rm -rf $(BUILD_DIR)
