// Package jsengine is the host side of mcphost's JavaScript plugins: a
// plugin written in plain JavaScript (ES2020) runs on QuickJS compiled to
// WebAssembly, the engine, inside the same sandbox as any other plugin.
//
// The engine (engine.wasm, built by build.sh from the pinned QuickJS source
// and the guest-side glue and prelude in pdk/js/src) is
// embedded here. It is one ordinary mcphost plugin module whose exports hand
// every call to the plugin's JavaScript. The host loads a .js file as the
// engine with two reserved config values: SourceKey, the JavaScript source,
// and FilenameKey, its file name (for error messages). All JavaScript
// plugins therefore share one compiled module. What a plugin needs is
// declared in a leading comment (see Manifest), which the host reads before
// running any code, like the manifest section of a wasm plugin.
//
// pdk/js/README.md documents the JavaScript API; pdk/js/mcphost.d.ts gives
// its types.
package jsengine

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"unicode/utf8"

	"github.com/mcphost/mcphost/abi"
)

//go:embed engine.wasm
var engine []byte

// Ext is the file extension of JavaScript plugins.
const Ext = ".js"

// Reserved config keys through which the host hands a plugin's source to
// the engine. Operator config may not use them.
const (
	SourceKey   = "mcphost.js.source"
	FilenameKey = "mcphost.js.filename"
)

// MaxSourceBytes bounds the size of a plugin's source.
const MaxSourceBytes = 16 << 20

// ManifestTag starts the comment that holds a plugin's manifest.
const ManifestTag = "mcphost.manifest"

// Engine returns the engine module. The slice is shared: do not modify it.
func Engine() []byte { return engine }

// Manifest reads the manifest of a JavaScript plugin: the JSON of an
// abi.Manifest in the file's first block comment, when that comment starts
// with ManifestTag ("/*!" and "/**" are fine too). Only white space, a "#!"
// line and line comments may come before it:
//
//	/* mcphost.manifest
//	{"version": "1.0.0", "description": "Weather tools",
//	 "needs": {"host_functions": ["notify_progress"], "config": ["units"]}}
//	*/
//
// "abi" may be left out: it defaults to abi.Version. Manifest returns nil
// and no error for a plugin without a manifest comment.
func Manifest(src []byte) (*abi.Manifest, error) {
	s := src
	if bytes.HasPrefix(s, []byte("#!")) {
		s = s[lineEnd(s):]
	}
	s = bytes.TrimLeft(s, " \t\r\n\ufeff")
	for bytes.HasPrefix(s, []byte("//")) {
		s = bytes.TrimLeft(s[lineEnd(s):], " \t\r\n")
	}
	if !bytes.HasPrefix(s, []byte("/*")) {
		return nil, nil
	}
	end := bytes.Index(s, []byte("*/"))
	if end < 0 {
		return nil, nil // an unclosed comment: the engine will say so
	}
	body := bytes.TrimLeft(s[2:end], " \t\r\n*!")
	if !bytes.HasPrefix(body, []byte(ManifestTag)) {
		return nil, nil
	}
	body = bytes.TrimSpace(body[len(ManifestTag):])
	m := abi.Manifest{ABI: abi.Version}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s comment: %w", ManifestTag, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s comment: text after the JSON object", ManifestTag)
	}
	return &m, nil
}

func lineEnd(s []byte) int {
	if i := bytes.IndexByte(s, '\n'); i >= 0 {
		return i + 1
	}
	return len(s)
}

// Config returns the Extism config of the plugin in file filename with
// source src: the operator's config plus the reserved keys.
func Config(filename string, src []byte, operator map[string]string) (map[string]string, error) {
	if len(src) > MaxSourceBytes {
		return nil, fmt.Errorf("source of %d bytes exceeds the limit of %d", len(src), MaxSourceBytes)
	}
	if !utf8.Valid(src) {
		return nil, errors.New("source is not UTF-8")
	}
	for k := range operator {
		if k == SourceKey || k == FilenameKey {
			return nil, fmt.Errorf("config key %q is reserved for JavaScript plugins", k)
		}
	}
	cfg := maps.Clone(operator)
	if cfg == nil {
		cfg = map[string]string{}
	}
	cfg[SourceKey] = string(src)
	cfg[FilenameKey] = filename
	return cfg, nil
}

// Caller runs an export of a loaded plugin (*sandbox.Plugin is one).
type Caller interface {
	Call(ctx context.Context, export string, input []byte) ([]byte, error)
}

// Check runs the plugin's source on one instance of a loaded engine, so
// that a source that does not load (a syntax error, an exception at the top
// level) fails at load time with the JavaScript error, not at the first
// request.
func Check(ctx context.Context, p Caller) error {
	_, err := p.Call(ctx, abi.ExportListTools, []byte(`{"context":{}}`))
	if err == nil {
		return nil
	}
	// The engine fails with an abi.Error as JSON, whose message says what
	// went wrong ("loading the plugin failed: SyntaxError: ..."); anything
	// else is a trap or a timeout.
	msg := err.Error()
	if i := strings.Index(msg, `{"code":`); i >= 0 {
		var e abi.Error
		if json.Unmarshal([]byte(msg[i:]), &e) == nil && e.Message != "" {
			return errors.New(e.Message)
		}
	}
	return fmt.Errorf("loading the plugin failed: %w", err)
}
