package devtool

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/cmd/mcphost/internal/clienv"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	js "github.com/mcphost/mcphost/internal/jsengine"
	"github.com/mcphost/mcphost/internal/pluginsource"
	"github.com/mcphost/mcphost/pluginhost"
	"github.com/mcphost/mcphost/sandbox"
	"github.com/spf13/cobra"
)

// The developer commands call, get-prompt, read and complete run one
// request against one plugin without an MCP client. They drive the real
// protocol engine in-process: a host.Server holding just that plugin,
// loaded by pluginhost.Loader.LoadFile with the grants and limits of its
// [plugins.NAME] table, as serve loads it, and a host.InProcessClient whose
// session, initialized at 2025-11-25, the request goes through. Argument
// validation, output checks and error codes are therefore those a client of
// serve sees. The plugin's logs and progress go to stderr; requests it
// makes to the client (sampling, elicitation, roots) are refused with a
// message saying that there is no client.

// protocolVersion is the version the developer commands' session
// negotiates.
const protocolVersion = "2025-11-25"

// runFlags are the flags every developer command that runs a plugin takes.
type runFlags struct {
	config   string
	logLevel string
	json     bool

	version string // mcphost's own, given to the server and as the client's
}

func (f *runFlags) register(cmd *cobra.Command, what string) {
	cmd.Flags().StringVar(&f.config, "config", "", "config file whose [plugins.NAME] table grants the plugin what serve would (default: $"+clienv.ConfigEnv+", then "+clienv.ConfigFile+" beside the plugin, then in the user's config directory)")
	cmd.Flags().StringVar(&f.logLevel, "log-level", "warn", "level of mcphost's own logs on stderr: debug, info, warn or error (the plugin's log messages are always shown)")
	cmd.Flags().BoolVar(&f.json, "json", false, "print the "+what+" as JSON, as a client receives it")
	_ = cmd.RegisterFlagCompletionFunc("config", completeFileExt("toml"))
	_ = cmd.RegisterFlagCompletionFunc("log-level", cobra.FixedCompletions([]string{"debug", "info", "warn", "error"}, cobra.ShellCompDirectiveNoFileComp))
}

// noClient says what each client request a plugin can cause is for.
var noClient = map[string]string{
	"sampling/createMessage": "sampling (the client's language model, create_message)",
	"elicitation/create":     "elicitation (asking the user, create_elicitation)",
	"roots/list":             "roots (the client's workspace folders, list_roots)",
}

// clientStandIn stands in for the MCP client there is not: it prints the
// notifications of the server on stderr and refuses its requests to the
// client.
type clientStandIn struct {
	command string // for messages: "mcphost call"

	mu     sync.Mutex
	stderr io.Writer
}

// handlers routes the server's messages to the stand-in.
func (c *clientStandIn) handlers() host.InProcessHandlers {
	return host.InProcessHandlers{Notification: c.notification, Request: c.refuse}
}

// refuse answers a request of the server to the client with a clear
// refusal: it needs a real client.
func (c *clientStandIn) refuse(_ context.Context, method string, _ json.RawMessage) (any, error) {
	what := noClient[method]
	if what == "" {
		what = method
	}
	c.printf("%s: the plugin asked the client for %s: refused, there is no MCP client here\n", c.command, what)
	return nil, &host.RPCError{Code: host.CodeMethodNotFound, Message: fmt.Sprintf(
		"%s runs the plugin without an MCP client, so %s is not available; serve the plugin (mcphost serve) to a client that supports it",
		c.command, what)}
}

// notification prints a notification on stderr.
func (c *clientStandIn) notification(method string, params json.RawMessage) {
	switch method {
	case "notifications/message":
		var p abi.LoggingMessageParams
		_ = json.Unmarshal(params, &p)
		data := ""
		if s, ok := p.Data.(string); ok {
			data = s
		} else {
			b, _ := json.Marshal(p.Data)
			data = string(b)
		}
		logger := ""
		if p.Logger != "" {
			logger = " " + p.Logger + ":"
		}
		c.printf("[%s]%s %s\n", p.Level, logger, data)
	case "notifications/progress":
		var p abi.ProgressParams
		_ = json.Unmarshal(params, &p)
		s := "progress " + strconv.FormatFloat(p.Progress, 'g', -1, 64)
		if p.Total != nil {
			s += "/" + strconv.FormatFloat(*p.Total, 'g', -1, 64)
		}
		if p.Message != "" {
			s += " " + p.Message
		}
		c.printf("[%s]\n", s)
	default:
		c.printf("[%s %s]\n", method, string(params))
	}
}

func (c *clientStandIn) printf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.stderr, format, args...)
}

// listAll fetches every page of a list method and returns the items
// under key.
func listAll[T any](ctx context.Context, c *host.InProcessClient, method, key string) ([]T, error) {
	var all []T
	cursor := ""
	for range 10000 {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		raw, err := c.Request(ctx, method, params)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		var page map[string]json.RawMessage
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		var items []T
		if err := json.Unmarshal(page[key], &items); err != nil && page[key] != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		all = append(all, items...)
		cursor = ""
		if next, ok := page["nextCursor"]; ok {
			_ = json.Unmarshal(next, &cursor)
		}
		if cursor == "" {
			if all == nil {
				all = []T{}
			}
			return all, nil
		}
	}
	return nil, fmt.Errorf("%s: too many pages", method)
}

// pluginServer is a server holding one plugin, with an initialized session.
type pluginServer struct {
	srv    *host.Server
	engine *sandbox.Engine
	plugin *host.Plugin
	client *host.InProcessClient
}

// Close ends the session and releases the plugin and the engine.
func (h *pluginServer) Close() {
	if h.client != nil {
		h.client.Close()
	}
	if h.plugin != nil {
		_ = h.plugin.Close(context.Background())
	}
	if h.engine != nil {
		_ = h.engine.Close()
	}
}

// pluginName returns the plugin name of a plugin file, checking that it
// is a .wasm or .js file.
func pluginName(path string) (string, error) {
	ext := filepath.Ext(path)
	if ext != ".wasm" && ext != js.Ext {
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			return "", fmt.Errorf("%s is a folder: give a plugin file (.wasm or .js); build a plugin's source with mcphost build %s", path, path)
		}
		return "", fmt.Errorf("%s: a plugin file is a .wasm module or a .js source (or the NAME of a [plugins.NAME] table with a source in the config)", path)
	}
	if _, err := os.Stat(path); err != nil {
		return "", err
	}
	return strings.TrimSuffix(filepath.Base(path), ext), nil
}

// openDevHost loads the plugin file as serve would, with the grants and
// limits of its table in the config, and initializes a session.
//
// When that table has a source, the plugin is fetched from it as serve
// fetches it (verified, its tag pinned), and path names the plugin only:
// DIR/NAME.wasm, or NAME; a file there is not used, as by serve.
func openDevHost(ctx context.Context, command, path string, f runFlags, stderr io.Writer) (*pluginServer, error) {
	logger, err := clienv.NewLogger(stderr, f.logLevel, "text")
	if err != nil {
		return nil, err
	}
	cfg, err := clienv.LoadConfig(f.config, filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if pc := cfg.Plugin(name); pc.Source != "" && !pc.Disabled {
		tmp, err := os.MkdirTemp("", "mcphost-"+name+"-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp) // the module is in memory once loaded
		if path, _, err = pluginsource.FetchToDir(ctx, cfg, pc, tmp, logger); err != nil {
			return nil, err
		}
	} else if name, err = pluginName(path); err != nil {
		return nil, err
	}
	cacheDir, err := cfg.CacheDir()
	if err != nil {
		return nil, err
	}
	out, err := clienv.Egress(cfg, logger)
	if err != nil {
		return nil, err
	}
	engine, err := sandbox.NewEngine(sandbox.EngineOptions{CacheDir: cacheDir, Egress: out})
	if err != nil {
		return nil, err
	}
	h := &pluginServer{engine: engine}
	// The developer stands in for a client holding the scopes the plugin
	// requires: serve shows it only to such clients.
	scopes := cfg.Plugin(name).RequireScopes
	h.srv = host.NewServer(host.Options{
		Name: cfg.Server.Name, Title: cfg.Server.Title, Version: f.version,
		PageSize: cfg.Server.PageSize, Logger: logger,
		Scopes: func(context.Context) []string { return scopes },
	}, nil)
	p, err := (&pluginhost.Loader{Engine: engine, Server: h.srv, Logger: logger}).LoadFile(ctx, path, cfg)
	if err != nil {
		h.Close()
		if cfg.Path == "" {
			return nil, fmt.Errorf("%s: %w\n(no config file was read: give the one with the plugin's grants with --config)", path, err)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if p == nil {
		h.Close()
		return nil, fmt.Errorf("%s: plugin %s is disabled in %s", path, name, configName(cfg))
	}
	h.plugin = p
	h.srv.SetCatalog(host.BuildCatalog(ctx, []*host.Plugin{p}, logger))
	if err := h.start(ctx, command, f.version, stderr); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

func configName(cfg *config.Config) string {
	if cfg.Path == "" {
		return "the config (built-in defaults: no config file)"
	}
	return cfg.Path
}

// start opens the session and initializes it as a client that declares
// sampling, elicitation and roots, so that a plugin using them is told
// plainly that there is no client rather than that the client lacks a
// capability.
func (h *pluginServer) start(ctx context.Context, command, version string, stderr io.Writer) error {
	standIn := &clientStandIn{command: command, stderr: stderr}
	h.client = host.NewInProcessClient(h.srv, standIn.handlers())
	_, err := h.client.Request(ctx, "initialize", map[string]any{
		"protocolVersion": protocolVersion,
		"capabilities":    map[string]any{"sampling": map[string]any{}, "elicitation": map[string]any{"form": map[string]any{}}, "roots": map[string]any{}},
		"clientInfo":      map[string]any{"name": command, "version": version},
	})
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	h.client.Notify(ctx, "notifications/initialized", nil)
	if _, err := h.client.Request(ctx, "logging/setLevel", map[string]any{"level": "debug"}); err != nil {
		return fmt.Errorf("logging/setLevel: %w", err)
	}
	return nil
}

// commandContext is the context of a developer command: cancelled by SIGINT
// and SIGTERM.
func commandContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// progressToken is the progressToken of every request the developer
// commands send, so that the plugin's progress is shown.
const progressToken = "mcphost-cli"

// errToolError is call's error when the tool answered with isError.
type errToolError struct{ tool string }

func (e errToolError) Error() string {
	return fmt.Sprintf("tool %s returned an error result (isError: true)", e.tool)
}

type callFlags struct {
	runFlags
	args     []string
	jsonArgs string
}

func newCallCommand(version string) *cobra.Command {
	f := callFlags{runFlags: runFlags{version: version}}
	cmd := &cobra.Command{
		Use:   "call PLUGIN TOOL [--arg KEY=VALUE]... [--json-args JSON]",
		Short: "Run one tool of a plugin file, as serve would, without an MCP client",
		Long: `Call runs one tool of a plugin file (.wasm or .js) and prints its result.

The plugin runs under the same sandbox, grants and limits as with serve: those
of its [plugins.NAME] table in the config (NAME is the file name without
extension). The request goes through mcphost's own protocol engine, in
process, at protocol version ` + protocolVersion + `, so argument validation and
result checks are exactly those a client of serve gets.

Arguments: --arg KEY=VALUE, repeated, typed by the tool's input schema (the
value of a number, integer, boolean, array or object property is read as
JSON, anything else is a string); --json-args '{"key": ...}' gives them as a
JSON object, which --arg values override.

Output: the text content, then the structuredContent pretty-printed (a text
block that only repeats it is left out); other content is summarised.
--json prints the CallToolResult instead. The plugin's log messages and
progress go to stderr. A tool that answers isError: true exits with status 1,
as does a protocol error (an unknown tool is -32602).

There is no MCP client: host functions that need one (create_message,
create_elicitation, list_roots) fail with a message saying so.`,
		Example: `  mcphost call build/plugins/tools.wasm hash --arg text=abc
  mcphost call plugins/units.js convert_units --arg value=3 --arg from=km --arg to=mi
  mcphost call hello.wasm greet --json-args '{"name": "World"}' --config mcphost.toml`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: completePluginThen(version, completeTools),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := commandContext(cmd)
			defer stop()
			return callTool(ctx, args[0], args[1], f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f.register(cmd, "CallToolResult")
	cmd.Flags().StringArrayVar(&f.args, "arg", nil, "an argument, KEY=VALUE (repeatable); typed by the tool's input schema")
	cmd.Flags().StringVar(&f.jsonArgs, "json-args", "", "the arguments as a JSON object")
	return cmd
}

func callTool(ctx context.Context, pluginPath, toolName string, f callFlags, stdout, stderr io.Writer) error {
	h, err := openDevHost(ctx, "mcphost call", pluginPath, f.runFlags, stderr)
	if err != nil {
		return err
	}
	defer h.Close()
	tools, err := listAll[abi.Tool](ctx, h.client, "tools/list", "tools")
	if err != nil {
		return err
	}
	tool := findTool(tools, toolName, h.plugin.Prefix)
	name := toolName
	if tool != nil {
		name = tool.Name
	}
	args, err := toolArguments(tool, f.args, f.jsonArgs)
	if err != nil {
		return err
	}
	params := map[string]any{
		"name":      name,
		"arguments": args,
		"_meta":     map[string]any{"progressToken": progressToken},
	}
	if tool != nil && tool.Execution != nil && tool.Execution.TaskSupport == abi.TaskRequired {
		params["task"] = map[string]any{}
	}
	raw, err := h.client.Request(ctx, "tools/call", params)
	if err == nil && params["task"] != nil {
		raw, err = taskResult(ctx, h.client, raw)
	}
	if err != nil {
		var rpcErr *host.RPCError
		if errors.As(err, &rpcErr) && tool == nil {
			names := make([]string, len(tools))
			for i, t := range tools {
				names[i] = t.Name
			}
			return fmt.Errorf("tools/call: %w; the plugin's tools: %s", err, listOrNone(names))
		}
		return fmt.Errorf("tools/call: %w", err)
	}
	var res abi.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("tools/call: undecodable result: %w", err)
	}
	if f.json {
		printJSON(stdout, raw)
	} else {
		var structured struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
		}
		_ = json.Unmarshal(raw, &structured)
		printToolResult(stdout, &res, structured.StructuredContent)
	}
	if res.IsError {
		return errToolError{tool: name}
	}
	return nil
}

// taskResult waits for the task a task-augmented tools/call created and
// returns its result.
func taskResult(ctx context.Context, c *host.InProcessClient, created json.RawMessage) (json.RawMessage, error) {
	var ct struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	if err := json.Unmarshal(created, &ct); err != nil || ct.Task.TaskID == "" {
		return nil, fmt.Errorf("the task-augmented call returned no task: %s", created)
	}
	return c.Request(ctx, "tasks/result", map[string]any{"taskId": ct.Task.TaskID})
}

// findTool finds the tool the user named: by its name as served, or by
// the plugin's own name when the config gives the plugin a prefix.
func findTool(tools []abi.Tool, name, prefix string) *abi.Tool {
	for _, want := range []string{name, prefix + name} {
		for i := range tools {
			if tools[i].Name == want {
				return &tools[i]
			}
		}
	}
	return nil
}

func listOrNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}

// toolArguments builds a tool's arguments from --json-args and --arg
// values, typing each --arg value by the tool's input schema.
func toolArguments(tool *abi.Tool, kvs []string, jsonArgs string) (map[string]any, error) {
	args := map[string]any{}
	if jsonArgs != "" {
		dec := json.NewDecoder(strings.NewReader(jsonArgs))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil || args == nil {
			return nil, fmt.Errorf("--json-args: want a JSON object: %v", err)
		}
	}
	var props map[string]json.RawMessage
	if tool != nil {
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		_ = json.Unmarshal(tool.InputSchema, &schema)
		props = schema.Properties
	}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--arg %q: want KEY=VALUE", kv)
		}
		args[k] = typedValue(props[k], v)
	}
	return args, nil
}

// typedValue types an --arg value by its property's schema: a value that
// parses as JSON of a type the schema allows is that JSON; otherwise a
// string, when strings are allowed or the value is no JSON at all. A value
// of the wrong type is passed on as is, for the server's validation to name.
func typedValue(schema json.RawMessage, v string) any {
	var s struct {
		Type any `json:"type"`
	}
	_ = json.Unmarshal(schema, &s)
	var types []string
	switch t := s.Type.(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			if str, ok := x.(string); ok {
				types = append(types, str)
			}
		}
	}
	if len(types) == 1 && types[0] == "string" {
		return v
	}
	dec := json.NewDecoder(strings.NewReader(v))
	dec.UseNumber()
	var parsed any
	if err := dec.Decode(&parsed); err != nil || dec.More() {
		return v
	}
	if len(types) == 0 {
		if _, isString := parsed.(string); isString {
			return v // a quoted value keeps its quotes for an untyped property
		}
		return parsed
	}
	if slices.Contains(types, jSONType(parsed)) ||
		(jSONType(parsed) == "integer" && slices.Contains(types, "number")) {
		return parsed
	}
	if slices.Contains(types, "string") {
		return v
	}
	return parsed
}

// jSONType names the JSON Schema type of a decoded value.
func jSONType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}

// printJSON prints raw JSON indented.
func printJSON(w io.Writer, raw []byte) {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		w.Write(raw)
		fmt.Fprintln(w)
		return
	}
	b.WriteByte('\n')
	w.Write(b.Bytes())
}

// printToolResult prints a tool result for a person: text, the
// structured content (structured, as sent) indented, summaries of other
// content.
func printToolResult(w io.Writer, res *abi.CallToolResult, structured json.RawMessage) {
	for _, c := range res.Content {
		if c.Type == abi.ContentText && res.StructuredContent != nil && sameJSON(c.Text, res.StructuredContent) {
			continue // the structured content's JSON, printed below
		}
		printContent(w, c)
	}
	if res.StructuredContent != nil {
		printJSON(w, structured)
	}
}

// sameJSON reports whether text is JSON equal to v.
func sameJSON(text string, v any) bool {
	var a, b any
	if json.Unmarshal([]byte(text), &a) != nil {
		return false
	}
	raw, err := json.Marshal(v)
	if err != nil || json.Unmarshal(raw, &b) != nil {
		return false
	}
	return reflect.DeepEqual(a, b)
}

// printContent prints one content block: text as is, the rest as a
// one-line summary.
func printContent(w io.Writer, c abi.Content) {
	switch c.Type {
	case abi.ContentText:
		fmt.Fprint(w, c.Text)
		if !strings.HasSuffix(c.Text, "\n") {
			fmt.Fprintln(w)
		}
	case abi.ContentImage, abi.ContentAudio:
		fmt.Fprintf(w, "[%s %s, %s]\n", c.Type, c.MimeType, base64Size(c.Data))
	case abi.ContentResourceLink:
		fmt.Fprintf(w, "[resource link %s: %s]\n", c.URI, c.Name)
	case abi.ContentResource:
		if c.Resource != nil {
			printResourceContents(w, *c.Resource, true)
		}
	default:
		fmt.Fprintf(w, "[%s content]\n", c.Type)
	}
}

// printResourceContents prints a resource's text, or a summary of a
// blob; header adds a line naming the resource.
func printResourceContents(w io.Writer, r abi.ResourceContents, header bool) {
	if r.Blob != "" {
		fmt.Fprintf(w, "[blob %s %s, %s; --json shows it]\n", r.URI, r.MimeType, base64Size(r.Blob))
		return
	}
	if header {
		fmt.Fprintf(w, "[resource %s]\n", r.URI)
	}
	fmt.Fprint(w, r.Text)
	if !strings.HasSuffix(r.Text, "\n") {
		fmt.Fprintln(w)
	}
}

func base64Size(data string) string {
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return fmt.Sprintf("%d base64 characters", len(data))
	}
	return fmt.Sprintf("%d bytes", len(b))
}

type getPromptFlags struct {
	runFlags
	args []string
}

func newGetPromptCommand(version string) *cobra.Command {
	f := getPromptFlags{runFlags: runFlags{version: version}}
	cmd := &cobra.Command{
		Use:   "get-prompt PLUGIN NAME [--arg KEY=VALUE]...",
		Short: "Get one prompt of a plugin file, as serve would, without an MCP client",
		Long: `Get-prompt renders one prompt of a plugin file (.wasm or .js) with the
arguments given as --arg KEY=VALUE and prints its messages, each after a
[role] line (--json: the GetPromptResult). The plugin runs as with call:
under the sandbox and grants of its table in the config, through mcphost's
protocol engine at ` + protocolVersion + `; logs go to stderr.`,
		Example:           `  mcphost get-prompt plugins/units.js explain_conversion --arg from=km --arg to=mi`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: completePluginThen(version, completePrompts),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := commandContext(cmd)
			defer stop()
			return getPrompt(ctx, args[0], args[1], f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f.register(cmd, "GetPromptResult")
	cmd.Flags().StringArrayVar(&f.args, "arg", nil, "an argument, KEY=VALUE (repeatable)")
	return cmd
}

// stringArgs parses KEY=VALUE flags into a map.
func stringArgs(kvs []string) (map[string]string, error) {
	args := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--arg %q: want KEY=VALUE", kv)
		}
		args[k] = v
	}
	return args, nil
}

func getPrompt(ctx context.Context, pluginPath, name string, f getPromptFlags, stdout, stderr io.Writer) error {
	args, err := stringArgs(f.args)
	if err != nil {
		return err
	}
	h, err := openDevHost(ctx, "mcphost get-prompt", pluginPath, f.runFlags, stderr)
	if err != nil {
		return err
	}
	defer h.Close()
	raw, err := h.client.Request(ctx, "prompts/get", map[string]any{
		"name": name, "arguments": args, "_meta": map[string]any{"progressToken": progressToken},
	})
	if err != nil {
		return fmt.Errorf("prompts/get: %w", err)
	}
	if f.json {
		printJSON(stdout, raw)
		return nil
	}
	var res abi.GetPromptResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("prompts/get: undecodable result: %w", err)
	}
	for i, m := range res.Messages {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		fmt.Fprintf(stdout, "[%s]\n", m.Role)
		printContent(stdout, m.Content)
	}
	return nil
}

func newReadCommand(version string) *cobra.Command {
	f := runFlags{version: version}
	cmd := &cobra.Command{
		Use:   "read PLUGIN URI",
		Short: "Read one resource of a plugin file, as serve would, without an MCP client",
		Long: `Read reads one resource (a listed resource, or a URI one of the plugin's
templates matches) of a plugin file (.wasm or .js) and prints its text
contents; blobs are summarised (--json: the ReadResourceResult). The plugin
runs as with call: under the sandbox and grants of its table in the config,
through mcphost's protocol engine at ` + protocolVersion + `; logs go to stderr.`,
		Example:           `  mcphost read plugins/units.js units://unit/km`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: completePluginThen(version, completeResources),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := commandContext(cmd)
			defer stop()
			return readResource(ctx, args[0], args[1], f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f.register(cmd, "ReadResourceResult")
	return cmd
}

func readResource(ctx context.Context, pluginPath, uri string, f runFlags, stdout, stderr io.Writer) error {
	h, err := openDevHost(ctx, "mcphost read", pluginPath, f, stderr)
	if err != nil {
		return err
	}
	defer h.Close()
	raw, err := h.client.Request(ctx, "resources/read", map[string]any{
		"uri": uri, "_meta": map[string]any{"progressToken": progressToken},
	})
	if err != nil {
		return fmt.Errorf("resources/read: %w", err)
	}
	if f.json {
		printJSON(stdout, raw)
		return nil
	}
	var res abi.ReadResourceResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("resources/read: undecodable result: %w", err)
	}
	for _, c := range res.Contents {
		printResourceContents(stdout, c, len(res.Contents) > 1)
	}
	return nil
}

type completeFlags struct {
	runFlags
	prompt   string
	template string
	args     []string
}

func newCompleteCommand(version string) *cobra.Command {
	f := completeFlags{runFlags: runFlags{version: version}}
	cmd := &cobra.Command{
		Use:   "complete PLUGIN (--prompt NAME | --template URI_TEMPLATE) ARG VALUE [--arg KEY=VALUE]...",
		Short: "Complete an argument of a prompt or resource template of a plugin file, without an MCP client",
		Long: `Complete asks a plugin file (.wasm or .js) for the completions of argument
ARG of a prompt (--prompt NAME) or of a resource template (--template, its
URI template) when the user has typed VALUE so far, and prints one value per
line (--json: the CompleteResult). --arg KEY=VALUE gives the other
arguments already filled in (the request's context). The plugin runs as
with call: under the sandbox and grants of its table in the config, through
mcphost's protocol engine at ` + protocolVersion + `; logs go to stderr.`,
		Example: `  mcphost complete plugins/units.js --prompt explain_conversion to k --arg from=m
  mcphost complete plugins/units.js --template 'units://unit/{unit}' unit m`,
		Args:              cobra.ExactArgs(3),
		ValidArgsFunction: completePluginThen(version, nil),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := commandContext(cmd)
			defer stop()
			return completeArgument(ctx, args[0], args[1], args[2], f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f.register(cmd, "CompleteResult")
	cmd.Flags().StringVar(&f.prompt, "prompt", "", "the prompt whose argument to complete")
	cmd.Flags().StringVar(&f.template, "template", "", "the resource template (its URI template) whose variable to complete")
	cmd.Flags().StringArrayVar(&f.args, "arg", nil, "an argument already filled in, KEY=VALUE (repeatable)")
	cmd.MarkFlagsMutuallyExclusive("prompt", "template")
	cmd.MarkFlagsOneRequired("prompt", "template")
	return cmd
}

func completeArgument(ctx context.Context, pluginPath, arg, value string, f completeFlags, stdout, stderr io.Writer) error {
	filled, err := stringArgs(f.args)
	if err != nil {
		return err
	}
	ref := map[string]any{"type": "ref/prompt", "name": f.prompt}
	if f.template != "" {
		ref = map[string]any{"type": "ref/resource", "uri": f.template}
	}
	params := map[string]any{"ref": ref, "argument": map[string]any{"name": arg, "value": value}}
	if len(filled) > 0 {
		params["context"] = map[string]any{"arguments": filled}
	}
	h, err := openDevHost(ctx, "mcphost complete", pluginPath, f.runFlags, stderr)
	if err != nil {
		return err
	}
	defer h.Close()
	raw, err := h.client.Request(ctx, "completion/complete", params)
	if err != nil {
		return fmt.Errorf("completion/complete: %w", err)
	}
	if f.json {
		printJSON(stdout, raw)
		return nil
	}
	var res abi.CompleteResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("completion/complete: undecodable result: %w", err)
	}
	for _, v := range res.Completion.Values {
		fmt.Fprintln(stdout, v)
	}
	if res.Completion.HasMore || (res.Completion.Total != nil && *res.Completion.Total > len(res.Completion.Values)) {
		total := "more"
		if res.Completion.Total != nil {
			total = strconv.Itoa(*res.Completion.Total)
		}
		fmt.Fprintf(stderr, "(%d of %s values shown)\n", len(res.Completion.Values), total)
	}
	return nil
}

// Shell completion of the developer commands.

// completeFileExt completes file names with the given extensions.
func completeFileExt(exts ...string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return exts, cobra.ShellCompDirectiveFilterFileExt
	}
}

// completePluginThen completes a plugin file as the first argument, and
// with next (when not nil) the second, from the plugin's lists, listed as
// inspect lists them: with no grants.
func completePluginThen(version string, next func(ctx context.Context, h *pluginServer, toComplete string) []cobra.Completion) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		switch {
		case len(args) == 0:
			return []string{"wasm", "js"}, cobra.ShellCompDirectiveFilterFileExt
		case len(args) == 1 && next != nil:
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			data, err := os.ReadFile(args[0])
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			h, err := openUngrantedHost(ctx, args[0], data, version, slog.New(slog.DiscardHandler))
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			defer h.Close()
			return next(ctx, h, toComplete), cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

func completeTools(ctx context.Context, h *pluginServer, _ string) []cobra.Completion {
	tools, _ := listAll[abi.Tool](ctx, h.client, "tools/list", "tools")
	var out []cobra.Completion
	for _, t := range tools {
		out = append(out, cobra.CompletionWithDesc(t.Name, firstLine(t.Description)))
	}
	return out
}

func completePrompts(ctx context.Context, h *pluginServer, _ string) []cobra.Completion {
	prompts, _ := listAll[abi.Prompt](ctx, h.client, "prompts/list", "prompts")
	var out []cobra.Completion
	for _, p := range prompts {
		out = append(out, cobra.CompletionWithDesc(p.Name, firstLine(p.Description)))
	}
	return out
}

func completeResources(ctx context.Context, h *pluginServer, _ string) []cobra.Completion {
	resources, _ := listAll[abi.Resource](ctx, h.client, "resources/list", "resources")
	var out []cobra.Completion
	for _, r := range resources {
		out = append(out, cobra.CompletionWithDesc(r.URI, r.Name))
	}
	return out
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// logBuffer collects mcphost's own log lines.
type logBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if l != "" {
			b.lines = append(b.lines, l)
		}
	}
	return len(p), nil
}

func (b *logBuffer) Lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.lines)
}

// warnLogger returns a logger of warnings and errors into b, without
// times.
func warnLogger(b *logBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{
		Level: slog.LevelWarn,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
}
