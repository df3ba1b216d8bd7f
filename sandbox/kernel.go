package sandbox

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"

	extism "github.com/extism/go-sdk"
	"github.com/gobwas/glob"
)

// The Extism kernel functions the sandbox serves itself.
//
// Extism's own http_request sends requests with http.DefaultClient, and its
// log functions drop every message unless a process-wide log level is set.
// Its error_set, config_get, var_get and var_set, and its reading of a
// call's output, copy whatever block the plugin hands over into the host's
// heap, however large: a plugin could make the host allocate gigabytes,
// and its error reached the caller whole. So the sandbox moves a plugin's
// imports of these functions (kernelServed and the log functions) from
// extism:host/env to kernelModule before compiling it
// (redirectKernelImports), and serves them there (kernel.functions):
//   - HTTP requests on the plugin's own client, whose transport and
//     redirect policy check its grants;
//   - log messages straight to the plugin's logger, at debug level and up;
//   - the error and the output's block in the call's state: the error cut
//     to Limits.MaxOutputBytes, the output copied by Plugin.run once its
//     size is checked; error_get returns what error_set recorded;
//   - config values from the grants, and variables in the instance's store,
//     where Extism keeps them.
//
// They behave as Extism's do, but that every block is measured before it is
// copied (block.go). http_status_code and http_headers stay Extism's: they
// read the status the sandbox's http_request records on the extism.Plugin
// (response headers stay off, so http_headers returns 0). So do the memory
// functions (alloc, free, load_*, store_*, input_*, output_offset,
// output_length, length, reset), which copy nothing into the host's heap.

// Module names: the one Extism serves its kernel functions in, and the one
// the sandbox serves its own in.
const (
	extismKernelModule = "extism:host/env"
	kernelModule       = "mcphost:env"
)

// guestLogLevel is the lowest level of guest log messages kept (Options.Logger
// filters further), and what get_log_level reports.
const guestLogLevel = extism.LogLevelDebug

// kernelLogLevels are the log functions of the kernel and their levels.
var kernelLogLevels = map[string]extism.LogLevel{
	"log_trace": extism.LogLevelTrace,
	"log_debug": extism.LogLevelDebug,
	"log_info":  extism.LogLevelInfo,
	"log_warn":  extism.LogLevelWarn,
	"log_error": extism.LogLevelError,
}

// kernelServed are the kernel functions the sandbox serves besides the log
// functions.
var kernelServed = []string{
	"http_request", "get_log_level", "error_set", "error_get", "output_set", "config_get", "var_get", "var_set",
}

// servedByKernelModule reports whether the sandbox serves the kernel
// function name.
func servedByKernelModule(name string) bool {
	_, isLog := kernelLogLevels[name]
	return isLog || slices.Contains(kernelServed, name)
}

// redirectKernelImports returns wasm with its imports of the kernel
// functions the sandbox serves moved from extism:host/env to kernelModule.
// It returns wasm itself when there are none. Every other byte is kept; the
// import section's size is re-encoded.
func redirectKernelImports(wasm []byte) ([]byte, error) {
	name := binary.AppendUvarint(nil, uint64(len(kernelModule)))
	name = append(name, kernelModule...)
	var edit sectionEdit
	err := sections(wasm, func(id byte, start int, body *reader) error {
		if id != sectionImport {
			return nil
		}
		edit = sectionEdit{id: id, start: start, begin: body.off, end: len(body.buf)}
		return body.vec(func() error {
			at := body.off
			imp, kind, nameAt, err := body.importEntry()
			if err == nil && kind == kindFunc && imp.Module == extismKernelModule && servedByKernelModule(imp.Name) {
				edit.splices = append(edit.splices, splice{at: at, end: nameAt, with: name})
			}
			return err
		})
	})
	if err != nil || len(edit.splices) == 0 {
		return wasm, err
	}
	return applyEdits(wasm, []sectionEdit{edit}), nil
}

// kernel is what the kernel functions the sandbox serves know of their
// plugin.
type kernel struct {
	plugin string // its name, for messages
	net    *netPolicy
	config map[string]string // configValues of the grants
	// maxBlock is Limits.MaxOutputBytes: it bounds the error and HTTP
	// requests and their bodies (keys and variables have bounds of their
	// own).
	maxBlock int
}

// functions returns the kernel functions the sandbox serves, in
// kernelModule.
func (k *kernel) functions() []extism.HostFunction {
	ptr := []extism.ValueType{extism.ValueTypePTR}
	fns := []extism.HostFunction{
		extism.NewHostFunctionWithStack("http_request", k.httpRequest, []extism.ValueType{extism.ValueTypePTR, extism.ValueTypePTR}, ptr),
		extism.NewHostFunctionWithStack("get_log_level", func(_ context.Context, _ *extism.CurrentPlugin, stack []uint64) {
			stack[0] = extism.EncodeI32(guestLogLevel.ExtismCompat())
		}, nil, []extism.ValueType{extism.ValueTypeI32}),
		extism.NewHostFunctionWithStack("error_set", k.errorSet, ptr, nil),
		extism.NewHostFunctionWithStack("error_get", errorGet, nil, ptr),
		extism.NewHostFunctionWithStack("output_set", outputSet, []extism.ValueType{extism.ValueTypePTR, extism.ValueTypeI64}, nil),
		extism.NewHostFunctionWithStack("config_get", k.configGet, ptr, ptr),
		extism.NewHostFunctionWithStack("var_get", varGet, ptr, ptr),
		extism.NewHostFunctionWithStack("var_set", varSet, []extism.ValueType{extism.ValueTypePTR, extism.ValueTypePTR}, nil),
	}
	for name, level := range kernelLogLevels {
		fns = append(fns, extism.NewHostFunctionWithStack(name, func(ctx context.Context, cp *extism.CurrentPlugin, stack []uint64) {
			guestLogCall(ctx, cp, level, stack[0])
		}, ptr, nil))
	}
	for i := range fns {
		fns[i].SetNamespace(kernelModule)
	}
	return fns
}

// guestLogCall serves a log function: it logs the message at offset, unless
// level is below guestLogLevel, and frees it. Only as much of the message
// is read as guestLog keeps.
func guestLogCall(ctx context.Context, cp *extism.CurrentPlugin, level extism.LogLevel, offset uint64) {
	if level >= guestLogLevel {
		n, err := cp.Length(offset)
		if err != nil {
			panic(fmt.Errorf("failed to read log message from memory: %v", err))
		}
		// One byte more than is kept, for guestLog to mark the cut.
		msg := string(blockView(cp, offset, min(n, maxLogMessage+1), "log message"))
		if state := callStateFrom(ctx); state != nil {
			state.log.kernel(level, msg)
		}
	}
	_ = cp.Free(offset) // as Extism: a failure to free is not the plugin's error
}

// errorSet serves error_set(message): it records the message at offset as
// the call's error, cut to maxBlock bytes with a note of how much was cut;
// offset 0, or an empty block, clears it. The block stays the plugin's, as
// with Extism.
func (k *kernel) errorSet(ctx context.Context, cp *extism.CurrentPlugin, stack []uint64) {
	state := callStateFrom(ctx)
	if state == nil {
		return
	}
	var n uint64
	if stack[0] != 0 {
		n = blockLen(cp, stack[0], "error_set")
	}
	if n <= uint64(k.maxBlock) {
		state.err = string(blockView(cp, stack[0], n, "error_set"))
		return
	}
	// One byte more, to cut before a character rather than inside one.
	view := blockView(cp, stack[0], uint64(k.maxBlock)+1, "error_set")
	cut := k.maxBlock
	for cut > k.maxBlock-utf8.UTFMax && cut > 0 && !utf8.RuneStart(view[cut]) {
		cut--
	}
	marker := fmt.Sprintf("… [error truncated: %d bytes over the limit of %d (%s)]", n-uint64(k.maxBlock), k.maxBlock, outputLimit)
	var msg strings.Builder // the only copy
	msg.Grow(cut + len(marker))
	msg.Write(view[:cut])
	msg.WriteString(marker)
	state.err = msg.String()
}

// errorGet serves error_get() -> message: a new block holding the error
// error_set recorded, or 0 when there is none.
func errorGet(ctx context.Context, cp *extism.CurrentPlugin, stack []uint64) {
	stack[0] = 0
	if state := callStateFrom(ctx); state != nil && state.err != "" {
		stack[0] = writeBlock(cp, []byte(state.err), "error")
	}
}

// outputSet serves output_set(offset, length): it records the call's
// output, which Plugin.run checks against Limits.MaxOutputBytes before
// copying it out of the kernel memory.
func outputSet(ctx context.Context, _ *extism.CurrentPlugin, stack []uint64) {
	if state := callStateFrom(ctx); state != nil {
		state.output.offset, state.output.length = stack[0], stack[1]
	}
}

// configGet serves config_get(key) -> value, 0 when the key is not set.
// As with Extism, the key's block is not freed.
func (k *kernel) configGet(_ context.Context, cp *extism.CurrentPlugin, stack []uint64) {
	key := readBlock(cp, stack[0], "config_get: key", maxKernelKeyBytes, "")
	stack[0] = 0
	if value, ok := k.config[string(key)]; ok {
		stack[0] = writeBlock(cp, []byte(value), "config value")
	}
}

// varEntryOverhead is what Extism counts for each variable besides its
// name and value.
const varEntryOverhead = int(unsafe.Sizeof([]byte(nil)) + unsafe.Sizeof(""))

// varGet serves var_get(name) -> value, 0 when the variable is not set.
// The variables are the instance's, kept where Extism keeps them.
func varGet(ctx context.Context, cp *extism.CurrentPlugin, stack []uint64) {
	name := readBlock(cp, stack[0], "var_get: name", maxKernelKeyBytes, "")
	_ = cp.Free(stack[0])
	stack[0] = 0
	if value, ok := extismPlugin(ctx).Var[string(name)]; ok {
		stack[0] = writeBlock(cp, value, "var value")
	}
}

// varSet serves var_set(name, value): it sets the variable, or deletes it
// when value is 0. As with Extism, the store holds at most MaxVarBytes,
// counting every variable (the one replaced too) with varEntryOverhead;
// the value's length is checked before it is copied.
func varSet(ctx context.Context, cp *extism.CurrentPlugin, stack []uint64) {
	plugin := extismPlugin(ctx)
	name := string(readBlock(cp, stack[0], "var_set: name", maxKernelKeyBytes, ""))
	_ = cp.Free(stack[0])
	if stack[1] == 0 {
		delete(plugin.Var, name)
		return
	}
	n := blockLen(cp, stack[1], "var_set")
	size := uint64(varEntryOverhead+len(name)) + n
	for k, v := range plugin.Var {
		size += uint64(varEntryOverhead + len(k) + len(v))
	}
	if size >= uint64(plugin.MaxVarBytes) {
		panic(fmt.Errorf("var_set: variable store is full: a value of %d bytes takes it past its limit of %d bytes", n, plugin.MaxVarBytes))
	}
	plugin.Var[name] = bytes.Clone(blockView(cp, stack[1], n, "var_set: value"))
	_ = cp.Free(stack[1])
}

// extismPlugin returns the instance a kernel function serves, present in
// ctx whenever Extism runs a host function.
func extismPlugin(ctx context.Context) *extism.Plugin {
	return ctx.Value(extism.PluginCtxKey("plugin")).(*extism.Plugin)
}

// writeBlock copies b into a new block of kernel memory and returns its
// offset.
func writeBlock(cp *extism.CurrentPlugin, b []byte, what string) uint64 {
	offset, err := cp.WriteBytes(b)
	if err != nil {
		panic(fmt.Errorf("failed to write %s to memory: %v", what, err))
	}
	return offset
}

// httpRequest serves http_request(request, body) -> response body: the
// request is JSON (extism.HttpRequest), body 0 for none, and the response
// body 0 when empty. It checks the host as Extism does, against the
// manifest's allowed hosts, then sends the request with the plugin's client,
// under the call's context. Failures stop the call, with Extism's messages
// (that of writing the response corrected), but for the reading of the
// request and its body, which block.go bounds.
func (k *kernel) httpRequest(ctx context.Context, cp *extism.CurrentPlugin, stack []uint64) {
	plugin := extismPlugin(ctx)
	plugin.LastStatusCode = 0
	requestJSON := readBlock(cp, stack[0], "http_request: request", k.maxBlock, outputLimit)
	var request extism.HttpRequest
	err := json.Unmarshal(requestJSON, &request)
	_ = cp.Free(stack[0])
	if err != nil {
		panic(fmt.Errorf("invalid http request: %v", err))
	}
	u, err := url.Parse(request.Url)
	if err != nil {
		panic(fmt.Errorf("invalid url: %v", err))
	}
	if !extismHostAllowed(plugin.AllowedHosts, u.Hostname()) {
		panic(fmt.Errorf("HTTP request to '%v' is not allowed: host %s is not in the allowed_hosts of plugin %s (add %q to allowed_hosts)",
			request.Url, u.Hostname(), k.plugin, u.Hostname()))
	}
	var body io.Reader
	if stack[1] != 0 {
		b := readBlock(cp, stack[1], "http_request: request body", k.maxBlock, outputLimit)
		_ = cp.Free(stack[1])
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, strings.ToUpper(cmp.Or(request.Method, "GET")), request.Url, body)
	if err != nil {
		panic(err)
	}
	for name, value := range request.Headers {
		req.Header.Set(name, value)
	}
	resp, err := k.net.client.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	plugin.LastStatusCode = resp.StatusCode
	out, err := io.ReadAll(http.MaxBytesReader(nil, resp.Body, plugin.MaxHttpResponseBytes))
	if err != nil {
		panic(err)
	}
	stack[0] = 0
	if len(out) > 0 {
		stack[0] = writeBlock(cp, out, "response body")
	}
}

// extismHostAllowed is Extism's check of a request's host name against the
// manifest's allowed hosts, each a name or a glob pattern.
func extismHostAllowed(allowed []string, host string) bool {
	for _, pattern := range allowed {
		if pattern == host || glob.MustCompile(pattern).Match(host) {
			return true
		}
	}
	return false
}
