package plugintest

// A harness that runs a plugin directly with the Extism Go SDK, with a fake
// host that records the plugin's host function calls and answers them.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/linearmem"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
)

// notAvailable is what a host function with an output answers when the
// test gave it no reply.
const notAvailable = `{"error":{"code":-32603,"message":"not available"}}`

var cache = wazero.NewCompilationCache()

// RuntimeConfig returns the wazero configuration plugins are loaded with:
// the compiler, or under the race detector (which slows the compiler down
// tenfold) the interpreter, sharing one compilation cache.
func RuntimeConfig() wazero.RuntimeConfig {
	if raceEnabled {
		return wazero.NewRuntimeConfigInterpreter().WithCompilationCache(cache)
	}
	return wazero.NewRuntimeConfig().WithCompilationCache(cache)
}

// InspectWasm compiles the plugin at wasmPath and returns the functions it
// imports from abi.HostModule and the functions it exports, each sorted.
func InspectWasm(t testing.TB, wasmPath string) (hostImports, exports []string) {
	t.Helper()
	wasm, err := os.ReadFile(wasmPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, RuntimeConfig())
	defer rt.Close(ctx)
	cm, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range cm.ImportedFunctions() {
		if mod, fn, _ := f.Import(); mod == abi.HostModule {
			hostImports = append(hostImports, fn)
		}
	}
	for e := range cm.ExportedFunctions() {
		exports = append(exports, e)
	}
	slices.Sort(hostImports)
	slices.Sort(exports)
	return hostImports, exports
}

// ReadManifest reads and decodes the manifest.json at path.
func ReadManifest(t testing.TB, path string) abi.Manifest {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m abi.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// Host is a fake mcphost host: it records the calls a plugin makes to the
// host functions of abi.HostFunctionNames and answers them with the
// replies the test set.
type Host struct {
	mu      sync.Mutex
	calls   []HostCall
	replies map[string]func(in string) string
}

// HostCall is one call a plugin made to a host function.
type HostCall struct {
	Name  string
	Input string    // the input document, "" for functions without input
	At    time.Time // when the call arrived
}

// NewHost returns a Host that has recorded nothing and answers every host
// function that has an output with a "not available" error.
func NewHost() *Host {
	return &Host{replies: map[string]func(string) string{}}
}

// Calls returns the recorded calls to the host function name, oldest first.
func (h *Host) Calls(name string) []HostCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []HostCall
	for _, c := range h.calls {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

// AllCalls returns every recorded call, oldest first.
func (h *Host) AllCalls() []HostCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]HostCall(nil), h.calls...)
}

// Reset forgets the recorded calls and the replies.
func (h *Host) Reset() {
	h.mu.Lock()
	h.calls = nil
	h.replies = map[string]func(string) string{}
	h.mu.Unlock()
}

// Reply makes the host function name answer with fn(input); a nil fn
// restores the "not available" error.
func (h *Host) Reply(name string, fn func(in string) string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if fn == nil {
		delete(h.replies, name)
	} else {
		h.replies[name] = fn
	}
}

// Answer makes the host function name answer with reply whatever its
// input; an empty reply restores the "not available" error.
func (h *Host) Answer(name, reply string) {
	if reply == "" {
		h.Reply(name, nil)
		return
	}
	h.Reply(name, func(string) string { return reply })
}

// Functions returns the host functions to link into a plugin: every one of
// abi.HostFunctionNames with its abi.HostSignatureOf shape, recording each
// call and answering it.
func (h *Host) Functions() []extism.HostFunction {
	var fns []extism.HostFunction
	for _, name := range abi.HostFunctionNames() {
		sig, _ := abi.HostSignatureOf(name)
		var params, results []extism.ValueType
		if sig.Input {
			params = []extism.ValueType{extism.ValueTypeI64}
		}
		if sig.Output {
			results = []extism.ValueType{extism.ValueTypeI64}
		}
		fns = append(fns, extism.NewHostFunctionWithStack(name, func(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
			c := HostCall{Name: name, At: time.Now()}
			if sig.Input {
				b, err := p.ReadBytes(stack[0])
				if err != nil {
					panic(err)
				}
				c.Input = string(b)
			}
			h.mu.Lock()
			h.calls = append(h.calls, c)
			reply := h.replies[name]
			h.mu.Unlock()
			if sig.Output {
				out := notAvailable
				if reply != nil {
					out = reply(c.Input)
				}
				off, err := p.WriteBytes([]byte(out))
				if err != nil {
					panic(err)
				}
				stack[0] = off
			}
		}, params, results))
	}
	return fns
}

// Plugin is a plugin loaded with the Extism Go SDK for a test.
type Plugin struct {
	t      testing.TB
	Extism *extism.Plugin
	Host   *Host
	mems   *meteredMemories // LoadMetered's
}

// LinearMemory returns the size in bytes of the plugin's linear memory
// (not the Extism kernel's) of a plugin loaded with LoadMetered.
func (p *Plugin) LinearMemory() uint64 {
	p.t.Helper()
	if p.mems == nil {
		p.t.Fatal("LinearMemory: load the plugin with LoadMetered")
	}
	p.mems.mu.Lock()
	defer p.mems.mu.Unlock()
	// Extism instantiates its kernel first and the plugin last; WASI and
	// the host modules have no memory.
	if len(p.mems.mems) < 2 {
		p.t.Fatalf("LinearMemory: %d memories allocated, want the kernel's and the plugin's", len(p.mems.mems))
	}
	return uint64(p.mems.mems[len(p.mems.mems)-1].Len())
}

// meteredMemories allocates linear memories on the Go heap, as wazero
// does, and keeps them to be measured.
type meteredMemories struct {
	mu   sync.Mutex
	mems []*meteredMemory
}

func (m *meteredMemories) allocate(_, max uint64) experimental.LinearMemory {
	mem := &meteredMemory{linearmem.NewHeap(max)}
	m.mu.Lock()
	m.mems = append(m.mems, mem)
	m.mu.Unlock()
	return mem
}

// meteredMemory is a linear memory on the Go heap that the harness
// measures.
type meteredMemory struct{ linearmem.Heap }

// Free implements experimental.LinearMemory.
func (m *meteredMemory) Free() { m.Release() }

// Load loads the plugin at wasmPath with manifest (whose Wasm it sets) and
// the host functions of host (a new Host when nil), with WASI and real
// clocks and sleep, as mcphost's sandbox gives plugins. The plugin is
// closed when the test ends.
func Load(t testing.TB, wasmPath string, manifest extism.Manifest, host *Host) *Plugin {
	t.Helper()
	return load(t, context.Background(), wasmPath, manifest, host)
}

// LoadMetered is Load, keeping track of the plugin's linear memory
// (Plugin.LinearMemory).
func LoadMetered(t testing.TB, wasmPath string, manifest extism.Manifest, host *Host) *Plugin {
	t.Helper()
	mems := &meteredMemories{}
	ctx := experimental.WithMemoryAllocator(context.Background(), experimental.MemoryAllocatorFunc(mems.allocate))
	p := load(t, ctx, wasmPath, manifest, host)
	p.mems = mems
	return p
}

func load(t testing.TB, ctx context.Context, wasmPath string, manifest extism.Manifest, host *Host) *Plugin {
	t.Helper()
	if host == nil {
		host = NewHost()
	}
	manifest.Wasm = []extism.Wasm{extism.WasmFile{Path: wasmPath}}
	p, err := extism.NewPlugin(ctx, manifest, extism.PluginConfig{
		EnableWasi:    true,
		RuntimeConfig: RuntimeConfig(),
		ModuleConfig:  wazero.NewModuleConfig().WithSysWalltime().WithSysNanotime().WithSysNanosleep(),
	}, host.Functions())
	if err != nil {
		t.Fatalf("loading %s: %v", filepath.Base(wasmPath), err)
	}
	t.Cleanup(func() { p.Close(ctx) })
	return &Plugin{t: t, Extism: p, Host: host}
}

// encode returns input as the bytes to pass to an export: a string or
// []byte as is, anything else marshalled to JSON.
func (p *Plugin) encode(input any) []byte {
	p.t.Helper()
	switch v := input.(type) {
	case string:
		return []byte(v)
	case []byte:
		return v
	}
	b, err := json.Marshal(input)
	if err != nil {
		p.t.Fatal(err)
	}
	return b
}

// Call runs export fn with input (a string or []byte as is, anything else
// marshalled to JSON) and returns its status, output and Extism error text.
func (p *Plugin) Call(fn string, input any) (rc uint32, out []byte, errText string) {
	p.t.Helper()
	rc, out, err := p.Extism.Call(fn, p.encode(input))
	if err != nil {
		errText = err.Error()
	}
	return rc, out, errText
}

// OK runs export fn with input, fails the test unless it succeeds, and
// decodes its output into out.
func (p *Plugin) OK(fn string, input any, out any) {
	p.t.Helper()
	rc, b, errText := p.Call(fn, input)
	if rc != 0 || errText != "" {
		p.t.Fatalf("%s(%s) failed (%d): %s", fn, p.encode(input), rc, errText)
	}
	if err := json.Unmarshal(b, out); err != nil {
		p.t.Fatalf("%s output %s: %v", fn, b, err)
	}
}

// Fail runs export fn with input, fails the test unless it fails by the ABI
// error convention, and returns the abi.Error.
func (p *Plugin) Fail(fn string, input any) abi.Error {
	p.t.Helper()
	rc, b, errText := p.Call(fn, input)
	if rc == 0 || errText == "" {
		p.t.Fatalf("%s(%s) succeeded: %s", fn, p.encode(input), b)
	}
	var e abi.Error
	if err := json.Unmarshal([]byte(errText), &e); err != nil {
		p.t.Fatalf("%s error %q is not an abi.Error: %v", fn, errText, err)
	}
	return e
}

// CallTool runs call_tool for the tool name with arguments args (JSON; ""
// for none) and request _meta, and returns its result.
func (p *Plugin) CallTool(name, args string, meta map[string]any) abi.CallToolResult {
	p.t.Helper()
	params := abi.CallToolParams{Name: name}
	if args != "" {
		params.Arguments = json.RawMessage(args)
	}
	var r abi.CallToolResult
	p.OK(abi.ExportCallTool, Input(params, meta), &r)
	return r
}

// ReadResource runs read_resource for uri and returns its content, failing
// the test unless there is exactly one.
func (p *Plugin) ReadResource(uri string) abi.ResourceContents {
	p.t.Helper()
	var r abi.ReadResourceResult
	p.OK(abi.ExportReadResource, Input(abi.ReadResourceParams{URI: uri}, nil), &r)
	if len(r.Contents) != 1 {
		p.t.Fatalf("%s: %d contents", uri, len(r.Contents))
	}
	return r.Contents[0]
}

// Input returns the input of a request export: params (marshalled) and a
// context with request id 1 and _meta meta.
func Input(params any, meta map[string]any) abi.Input {
	b, err := json.Marshal(params)
	if err != nil {
		panic(err)
	}
	return abi.Input{Request: b, Context: abi.Context{ID: json.RawMessage(`1`), Meta: meta}}
}

// CompileSchema compiles a JSON Schema (2020-12 unless it says otherwise),
// as the host does, failing the test if it is not one.
func CompileSchema(t testing.TB, raw []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem:///schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem:///schema.json")
	if err != nil {
		t.Fatalf("schema %s: %v", raw, err)
	}
	return s
}
