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
	"strings"

	extism "github.com/extism/go-sdk"
	"github.com/gobwas/glob"
)

// The Extism kernel functions the sandbox serves itself.
//
// Extism's own http_request sends requests with http.DefaultClient, and its
// log functions drop every message unless a process-wide log level is set.
// Rather than change either global, the sandbox moves a plugin's imports of
// these functions from extism:host/env to kernelModule before compiling it
// (redirectKernelImports) and serves them there (kernelFunctions): HTTP
// requests on the plugin's own client, whose transport and redirect policy
// check its grants, and log messages straight to the plugin's logger. They
// behave as Extism's do, with the log level at debug: same memory handling,
// same checks, same errors. http_status_code and http_headers stay
// Extism's: they read the status the sandbox's http_request records on the
// extism.Plugin (response headers stay off, so http_headers returns 0).

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

// servedByKernelModule reports whether the sandbox serves the kernel
// function name.
func servedByKernelModule(name string) bool {
	_, isLog := kernelLogLevels[name]
	return isLog || name == "http_request" || name == "get_log_level"
}

// redirectKernelImports returns wasm with its imports of the kernel
// functions the sandbox serves moved from extism:host/env to kernelModule.
// It returns wasm itself when there are none. Every other byte is kept; the
// import section's size is re-encoded.
func redirectKernelImports(wasm []byte) ([]byte, error) {
	var (
		moved            [][2]int // offsets of the module names to replace
		sectionAt, begin int      // of the import section's header and body
		end              int
	)
	err := sections(wasm, func(id byte, start int, body *reader) error {
		if id != sectionImport {
			return nil
		}
		sectionAt, begin, end = start, body.off, len(body.buf)
		return body.vec(func() error {
			at := body.off
			imp, kind, nameAt, err := body.importEntry()
			if err == nil && kind == kindFunc && imp.Module == extismKernelModule && servedByKernelModule(imp.Name) {
				moved = append(moved, [2]int{at, nameAt})
			}
			return err
		})
	})
	if err != nil || len(moved) == 0 {
		return wasm, err
	}
	name := binary.AppendUvarint(nil, uint64(len(kernelModule)))
	name = append(name, kernelModule...)
	section := make([]byte, 0, end-begin)
	prev := begin
	for _, m := range moved {
		section = append(append(section, wasm[prev:m[0]]...), name...)
		prev = m[1]
	}
	section = append(section, wasm[prev:end]...)
	out := make([]byte, 0, len(wasm)+len(section)-(end-begin))
	out = append(out, wasm[:sectionAt]...)
	out = append(out, sectionImport)
	out = binary.AppendUvarint(out, uint64(len(section))) // LEB128
	out = append(out, section...)
	return append(out, wasm[end:]...), nil
}

// kernelFunctions returns the kernel functions the sandbox serves, in
// kernelModule, for a plugin with the network policy pol.
func kernelFunctions(pol *netPolicy) []extism.HostFunction {
	fns := []extism.HostFunction{
		extism.NewHostFunctionWithStack("http_request", pol.httpRequest,
			[]extism.ValueType{extism.ValueTypePTR, extism.ValueTypePTR}, []extism.ValueType{extism.ValueTypePTR}),
		extism.NewHostFunctionWithStack("get_log_level", func(_ context.Context, _ *extism.CurrentPlugin, stack []uint64) {
			stack[0] = extism.EncodeI32(guestLogLevel.ExtismCompat())
		}, nil, []extism.ValueType{extism.ValueTypeI32}),
	}
	for name, level := range kernelLogLevels {
		fns = append(fns, extism.NewHostFunctionWithStack(name, func(ctx context.Context, cp *extism.CurrentPlugin, stack []uint64) {
			guestLogCall(ctx, cp, level, stack[0])
		}, []extism.ValueType{extism.ValueTypePTR}, nil))
	}
	for i := range fns {
		fns[i].SetNamespace(kernelModule)
	}
	return fns
}

// guestLogCall serves a log function: it logs the message at offset, unless
// level is below guestLogLevel, and frees it.
func guestLogCall(ctx context.Context, cp *extism.CurrentPlugin, level extism.LogLevel, offset uint64) {
	if level < guestLogLevel {
		_ = cp.Free(offset) // as Extism: a failure to free is not the plugin's error
		return
	}
	msg, err := cp.ReadString(offset)
	if err != nil {
		panic(fmt.Errorf("failed to read log message from memory: %v", err))
	}
	if state := callStateFrom(ctx); state != nil {
		state.log.kernel(level, msg)
	}
	_ = cp.Free(offset)
}

// httpRequest serves http_request(request, body) -> response body: the
// request is JSON (extism.HttpRequest), body 0 for none, and the response
// body 0 when empty. It checks the host as Extism does, against the
// manifest's allowed hosts, then sends the request with the plugin's client,
// under the call's context. Failures stop the call, with Extism's messages
// (two of them corrected: "request body", "response").
func (pol *netPolicy) httpRequest(ctx context.Context, cp *extism.CurrentPlugin, stack []uint64) {
	// Present whenever Extism runs a host function.
	plugin := ctx.Value(extism.PluginCtxKey("plugin")).(*extism.Plugin)
	plugin.LastStatusCode = 0
	requestJSON, err := cp.ReadBytes(stack[0])
	if err != nil {
		panic(fmt.Errorf("failed to read http request from memory: %v", err))
	}
	var request extism.HttpRequest
	err = json.Unmarshal(requestJSON, &request)
	_ = cp.Free(stack[0])
	if err != nil {
		panic(fmt.Errorf("invalid http request: %v", err))
	}
	u, err := url.Parse(request.Url)
	if err != nil {
		panic(fmt.Errorf("invalid url: %v", err))
	}
	if !extismHostAllowed(plugin.AllowedHosts, u.Hostname()) {
		panic(fmt.Errorf("HTTP request to '%v' is not allowed", request.Url))
	}
	var body io.Reader
	if stack[1] != 0 {
		b, err := cp.ReadBytes(stack[1])
		if err != nil {
			panic("failed to read request body from memory")
		}
		_ = cp.Free(stack[1])
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, strings.ToUpper(cmp.Or(request.Method, "GET")), request.Url, body)
	if err != nil {
		panic(err)
	}
	for k, v := range request.Headers {
		req.Header.Set(k, v)
	}
	resp, err := pol.client.Do(req)
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
		if stack[0], err = cp.WriteBytes(out); err != nil {
			panic("failed to write response body to memory")
		}
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
