package sandbox

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"

	extism "github.com/extism/go-sdk"
	"github.com/mcphost/mcphost/sandbox/internal/wasmpass"
	"github.com/tetratelabs/wazero/api"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
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
// (kernelRedirect), and serves them there (kernel.functions):
//   - HTTP requests on the plugin's own client, whose transport and
//     redirect policy check its grants; one that fails stops the call, or
//     is answered with why for a plugin that exports abi.ExportHTTPErrors;
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
// (response headers stay off, so http_headers returns 0). The memory
// functions (alloc, free, load_*, store_*, input_*, output_offset,
// output_length, length, reset), which copy nothing into the host's heap,
// are Extism's kernel module's, called through functions looked up once
// (kernelForwarded).

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

// kernelForwarded are the kernel functions that move bytes within the
// kernel's memory, with their parameters and results: the sandbox forwards
// them to Extism's kernel module (kernelFunctions), with each function
// looked up once per instance. Extism's own wrapper looks each one up at
// every call, and wazero creates a function, with a call stack of its own,
// at every lookup: kilobytes of garbage for every 8 bytes a plugin stores.
// (input_load_u64, load_u64 and store_u64 Extism serves in Go, on the
// kernel's memory without calling the kernel module, and they stay
// Extism's: forwarded, each store_u64 cost a call into the kernel module
// and an extism.CurrentPlugin on the heap, and PDKs write their output
// with it, 8 bytes a call.) An array, so that an instance keeps its
// functions by index rather than in a map looked up at every host call.
var kernelForwarded = [...]forwardedFunction{
	{"alloc", []extism.ValueType{extism.ValueTypeI64}, []extism.ValueType{extism.ValueTypeI64}},
	{"free", []extism.ValueType{extism.ValueTypeI64}, nil},
	{"load_u8", []extism.ValueType{extism.ValueTypeI64}, []extism.ValueType{extism.ValueTypeI32}},
	{"input_load_u8", []extism.ValueType{extism.ValueTypeI64}, []extism.ValueType{extism.ValueTypeI32}},
	{"store_u8", []extism.ValueType{extism.ValueTypeI64, extism.ValueTypeI32}, nil},
	{"input_length", nil, []extism.ValueType{extism.ValueTypeI64}},
	{"input_offset", nil, []extism.ValueType{extism.ValueTypeI64}},
	{"output_length", nil, []extism.ValueType{extism.ValueTypeI64}},
	{"output_offset", nil, []extism.ValueType{extism.ValueTypeI64}},
	{"length", []extism.ValueType{extism.ValueTypeI64}, []extism.ValueType{extism.ValueTypeI64}},
	{"length_unsafe", []extism.ValueType{extism.ValueTypeI64}, []extism.ValueType{extism.ValueTypeI64}},
	{"reset", nil, nil},
	{"memory_bytes", nil, []extism.ValueType{extism.ValueTypeI64}},
}

// forwardedFunction is a kernel function the sandbox forwards to Extism's
// kernel module, with its parameters and results.
type forwardedFunction struct {
	name            string
	params, results []extism.ValueType
}

// forwardedIndex returns the index of the forwarded kernel function name
// in kernelForwarded, -1 when it is not one.
func forwardedIndex(name string) int {
	for i, f := range kernelForwarded {
		if f.name == name {
			return i
		}
	}
	return -1
}

// The indexes of the forwarded functions exportCaller sets a call's input
// with.
var (
	kernelReset = forwardedIndex("reset")
	kernelAlloc = forwardedIndex("alloc")
)

// servedByKernelModule reports whether the sandbox serves the kernel
// function name.
func servedByKernelModule(name string) bool {
	_, isLog := kernelLogLevels[name]
	return isLog || forwardedIndex(name) >= 0 || slices.Contains(kernelServed, name)
}

// kernelFunctions are an instance's functions of Extism's kernel module
// that the sandbox forwards (kernelForwarded), each looked up once, on
// first use; exportCaller sets a call's input with some of them. An
// instance serves one call at a time, so they are never called
// concurrently.
type kernelFunctions struct {
	mod       api.Module // the instance's kernel module
	forwarded [len(kernelForwarded)]api.Function
}

// function returns the forwarded kernel function of index i, looked up
// once; nil when the kernel has none.
func (k *kernelFunctions) function(i int) api.Function {
	f := k.forwarded[i]
	if f == nil {
		f = k.mod.ExportedFunction(kernelForwarded[i].name)
		k.forwarded[i] = f
	}
	return f
}

// call calls the forwarded kernel function of index i with stack, as
// Extism's wrapper does; a failure panics, which ends the call. k is nil
// where there is no call state (a start function): the kernel module is
// then the one Extism puts in ctx, and nothing is kept.
func (k *kernelFunctions) call(ctx context.Context, i int, stack []uint64) {
	var f api.Function
	if k != nil {
		f = k.function(i)
	} else if mod, ok := ctx.Value(extism.PluginCtxKey("extism")).(api.Module); ok {
		f = mod.ExportedFunction(kernelForwarded[i].name)
	} else {
		panic("Invalid context, `extism` key not found")
	}
	if f == nil {
		panic(fmt.Errorf("function %q not found in extism:host", kernelForwarded[i].name))
	}
	if err := f.CallWithStack(ctx, stack); err != nil {
		panic(err)
	}
}

// kernelRedirect moves a module's imports of the kernel functions the
// sandbox serves from extism:host/env to kernelModule.
var kernelRedirect = wasmpass.Redirect{From: extismKernelModule, To: kernelModule, Names: servedByKernelModule}

// kernel is what the kernel functions the sandbox serves know of their
// plugin.
type kernel struct {
	net *netPolicy
	// httpErrors: the plugin exports abi.ExportHTTPErrors, so a failed
	// HTTP request is answered rather than stopping the call.
	httpErrors bool
	config     map[string]string // configValues of the grants
	// maxBlock is Limits.MaxOutputBytes: it bounds the error and HTTP
	// requests and their bodies (keys and variables have bounds of their
	// own).
	maxBlock int
	// observer is Options.Observer, told of each request; nil for none.
	observer Observer
	// redact removes the plugin's secret values from what its spans say;
	// nil when it has none.
	redact *redactor
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
	for i, f := range kernelForwarded {
		fns = append(fns, extism.NewHostFunctionWithStack(f.name, func(ctx context.Context, _ *extism.CurrentPlugin, stack []uint64) {
			var k *kernelFunctions
			if state := callStateFrom(ctx); state != nil {
				k = state.kernel
			}
			k.call(ctx, i, stack)
		}, f.params, f.results))
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
// body 0 when empty. The request is sent with the plugin's client, whose
// policy checks it against the plugin's grants, under the call's context.
// A request that is refused or fails stops the call, as with Extism, with
// a message that says why (and which grant would allow it); but a plugin
// that exports abi.ExportHTTPErrors is answered with status 0
// (http_status_code) and that message as the response body instead, for
// it to handle, and the failure is logged.
func (k *kernel) httpRequest(ctx context.Context, cp *extism.CurrentPlugin, stack []uint64) {
	plugin := extismPlugin(ctx)
	plugin.LastStatusCode = 0
	status, body, err := k.send(ctx, cp, stack[0], stack[1], plugin.MaxHttpResponseBytes)
	if err != nil {
		if !k.httpErrors {
			if state := callStateFrom(ctx); state != nil && err.denied {
				state.denied = true
			}
			panic(err)
		}
		logRequestError(ctx, err)
		body = []byte(err.msg)
	}
	plugin.LastStatusCode = status
	stack[0] = 0
	if len(body) > 0 {
		stack[0] = writeBlock(cp, body, "response body")
	}
}

// send sends the request of an http_request call and returns the
// response's status and body, at most maxResponse bytes of it.
//
// Under a recording span (the plugin call's), the request is a client
// span of its own, named after the grant rule that allowed it (never the
// host a plugin chose under a wildcard), whose trace context the request
// carries in its traceparent header.
func (k *kernel) send(ctx context.Context, cp *extism.CurrentPlugin, reqOffset, bodyOffset uint64, maxResponse int64) (status int, out []byte, rerr *requestError) {
	var span trace.Span
	if parent := trace.SpanFromContext(ctx); parent.IsRecording() {
		ctx, span = parent.TracerProvider().Tracer(scopeName).Start(ctx, "http_request", trace.WithSpanKind(trace.SpanKindClient))
		defer func() { k.endRequestSpan(span, status, rerr) }()
	}
	req, rerr := k.newRequest(ctx, cp, reqOffset, bodyOffset, span)
	if rerr != nil {
		return 0, nil, rerr
	}
	if span != nil {
		propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	}
	status, out, rerr = k.do(req, maxResponse)
	k.requested(ctx, req.URL, rerr != nil && rerr.denied, span)
	return status, out, rerr
}

// scopeName is the instrumentation scope of the sandbox's spans.
const scopeName = "github.com/mcphost/mcphost/sandbox"

// endRequestSpan ends the span of an http_request that answered status
// or failed with rerr, whose message may quote a secret of the plugin's in
// its URL: the span says it redacted.
func (k *kernel) endRequestSpan(span trace.Span, status int, rerr *requestError) {
	switch {
	case rerr != nil && k.redact != nil:
		span.SetStatus(codes.Error, k.redact.Replace(rerr.msg))
	case rerr != nil:
		span.SetStatus(codes.Error, rerr.msg)
	case status > 0:
		span.SetAttributes(attribute.Int("http.response.status_code", status))
	}
	span.End()
}

// requested tells the observer, if any, of a request to u, and whether the
// grants refused it, and puts the rule that granted it and the outcome on
// span (nil for none).
func (k *kernel) requested(ctx context.Context, u *url.URL, denied bool, span trace.Span) {
	if k.observer == nil && span == nil {
		return
	}
	rule := k.net.rule(u)
	if k.observer != nil {
		k.observer.Requested(ctx, rule, denied)
	}
	if span != nil {
		outcome := "allowed"
		if denied {
			outcome = "denied"
		}
		span.SetAttributes(attribute.String("mcphost.grant.rule", rule), attribute.String("mcphost.grant.outcome", outcome))
	}
}

// do sends req with the plugin's client and reads at most maxResponse
// bytes of the response's body.
func (k *kernel) do(req *http.Request, maxResponse int64) (int, []byte, *requestError) {
	resp, err := k.net.client.Do(req)
	if err != nil {
		return 0, nil, describeFailure(req.URL.Redacted(), err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(http.MaxBytesReader(nil, resp.Body, maxResponse))
	if err != nil {
		return 0, nil, describeFailure(req.URL.Redacted(), err)
	}
	return resp.StatusCode, out, nil
}

// newRequest reads the request and body blocks of an http_request call,
// frees them, and returns the request once the plugin's grants allow its
// URL.
func (k *kernel) newRequest(ctx context.Context, cp *extism.CurrentPlugin, reqOffset, bodyOffset uint64, span trace.Span) (*http.Request, *requestError) {
	defer func() {
		_ = cp.Free(reqOffset) // as Extism: a failure to free is not the plugin's error
		if bodyOffset != 0 {
			_ = cp.Free(bodyOffset)
		}
	}()
	requestJSON, rerr := k.requestBlock(cp, reqOffset, "HTTP request")
	if rerr != nil {
		return nil, rerr
	}
	var request extism.HttpRequest
	if err := json.Unmarshal(requestJSON, &request); err != nil {
		return nil, &requestError{msg: "invalid HTTP request: " + err.Error()}
	}
	u, err := url.Parse(request.Url)
	if err != nil {
		return nil, &requestError{msg: fmt.Sprintf("HTTP request to '%s' failed: invalid URL: %v", request.Url, urlCause(err))}
	}
	if err := k.net.checkURL(u); err != nil {
		k.requested(ctx, u, true, span)
		return nil, describeFailure(u.Redacted(), err)
	}
	var body io.Reader
	if bodyOffset != 0 {
		b, rerr := k.requestBlock(cp, bodyOffset, "HTTP request body")
		if rerr != nil {
			return nil, rerr
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, strings.ToUpper(cmp.Or(request.Method, "GET")), request.Url, body)
	if err != nil {
		return nil, &requestError{msg: fmt.Sprintf("HTTP request to '%s' failed: %v", u.Redacted(), err)}
	}
	for name, value := range request.Headers {
		req.Header.Set(name, value)
	}
	return req, nil
}

// requestBlock copies the block at offset, part of an HTTP request, out of
// the kernel memory, unless it is longer than maxBlock; 0 is no block.
func (k *kernel) requestBlock(cp *extism.CurrentPlugin, offset uint64, what string) ([]byte, *requestError) {
	if offset == 0 {
		return nil, nil
	}
	n := blockLen(cp, offset, what)
	if err := lengthError(n, what, k.maxBlock, outputLimit); err != nil {
		return nil, &requestError{msg: err.Error()}
	}
	return bytes.Clone(blockView(cp, offset, n, what)), nil
}

// logRequestError logs a failed request the plugin is told of, within the
// call's log budget: a refusal as a warning, for the operator to see which
// grant the plugin lacks; a failure of the network or the server at debug
// level.
func logRequestError(ctx context.Context, err *requestError) {
	state := callStateFrom(ctx)
	if state == nil || state.log == nil {
		return
	}
	level, msg := slog.LevelDebug, "HTTP request failed"
	if err.denied {
		level, msg = slog.LevelWarn, "HTTP request refused"
	}
	state.log.emit(level, msg, slog.String("error", err.msg))
}
