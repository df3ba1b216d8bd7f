package devtool

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/cmd/mcphost/internal/clienv"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	js "github.com/mcphost/mcphost/internal/jsengine"
	"github.com/mcphost/mcphost/internal/pluginsource"
	"github.com/mcphost/mcphost/pluginhost"
	"github.com/mcphost/mcphost/sandbox"
	"github.com/spf13/cobra"
	"oras.land/oras-go/v2/registry"
)

// Plugin flavours, as inspect reports them.
const (
	flavourMCPHost    = "mcphost"
	flavourHyperMCP   = "hyper-mcp-v2"
	flavourServlet    = "v1-servlet"
	flavourJavaScript = "javascript"
	flavourUnknown    = "unknown"
)

// inspectReport is what inspect prints.
type inspectReport struct {
	File   string `json:"file"`
	Name   string `json:"name"`
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
	// Flavour is mcphost, hyper-mcp-v2, v1-servlet, javascript or unknown;
	// FlavourDescription says it in words.
	Flavour            string `json:"flavour"`
	FlavourDescription string `json:"flavourDescription"`
	// ABI is the mcphost ABI version the manifest declares, 0 without one.
	ABI      int           `json:"abi,omitempty"`
	Manifest *abi.Manifest `json:"manifest,omitempty"`
	// Exports are the module's function exports; for a JavaScript plugin,
	// those of the embedded engine it runs on.
	Exports []string `json:"exports"`
	// HostFunctionImports are the functions imported from the mcphost host
	// module (extism:host/user); OtherImports the other imported modules.
	HostFunctionImports []string               `json:"hostFunctionImports"`
	OtherImports        []string               `json:"otherImports,omitempty"`
	Tools               []abi.Tool             `json:"tools"`
	Prompts             []abi.Prompt           `json:"prompts"`
	Resources           []abi.Resource         `json:"resources"`
	ResourceTemplates   []abi.ResourceTemplate `json:"resourceTemplates"`
	// Warnings are what mcphost logged while listing: list exports that
	// failed, items left out of the catalog.
	Warnings []string `json:"warnings,omitempty"`
	// Source, Digest and Signer are, for an oci:// reference, the reference,
	// the manifest digest pulled and who signed it (or why nobody had to).
	Source string `json:"source,omitempty"`
	Digest string `json:"digest,omitempty"`
	Signer string `json:"signer,omitempty"`
}

type inspectFlags struct {
	json   bool
	verify clienv.VerifyFlags
}

func newInspectCommand(version string) *cobra.Command {
	var f inspectFlags
	cmd := &cobra.Command{
		Use:   "inspect PLUGIN",
		Short: "Show what a plugin file is, needs and offers",
		Long: `Inspect prints what a plugin file (.wasm or .js) is and offers:

  - its flavour: mcphost ABI (a module with an mcphost manifest), hyper-mcp
    v2 (the hyper-mcp exports, no manifest), v1 servlet (mcp.run's describe
    and call exports) or JavaScript (a .js file run on the embedded engine);
  - its ABI version, exports, the host functions it imports and the other
    modules it imports from;
  - the needs its manifest declares (host functions, hosts, paths, config);
  - its tools (with their input and output schemas), prompts, resources and
    resource templates, as a client would list them.

To list them, inspect RUNS THE PLUGIN'S LIST EXPORTS (list_tools,
list_prompts, list_resources, list_resource_templates, or describe) in the
sandbox WITH NO GRANTS: no host functions, network, files or config, and
the default limits; the mcphost.toml is not read. A plugin that needs a grant
to list something shows less here than when served; what failed is shown
as a warning. --json prints the report as JSON.

PLUGIN may be an oci://REGISTRY/REPOSITORY:TAG (or @sha256:DIGEST)
reference: it is pulled into the plugin cache and its cosign signature
checked first, as plugin pull checks it: --key, or keyless with
--trusted-root and the --certificate-* flags, or --allow-unsigned. Nothing
is pinned in mcphost.lock.`,
		Example:           "  mcphost inspect build/plugins/tools.wasm\n  mcphost inspect --json plugins/units.js\n  mcphost inspect --key cosign.pub oci://ghcr.io/owner/tools:1",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completePluginThen(version, nil),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := commandContext(cmd)
			defer stop()
			inspect := inspectPlugin
			if strings.HasPrefix(args[0], config.SchemeOCI) {
				inspect = func(ctx context.Context, ref, version string) (*inspectReport, error) {
					return inspectReference(ctx, ref, f.verify, version)
				}
			}
			rep, err := inspect(ctx, args[0], version)
			if err != nil {
				return err
			}
			if f.json {
				raw, err := json.Marshal(rep)
				if err != nil {
					return err
				}
				printJSON(cmd.OutOrStdout(), raw)
				return nil
			}
			printInspectReport(cmd.OutOrStdout(), rep)
			return nil
		},
	}
	cmd.Flags().BoolVar(&f.json, "json", false, "print the report as JSON")
	f.verify.Register(cmd.Flags())
	return cmd
}

// inspectReference pulls the plugin at an oci:// reference into the
// plugin cache, verified as vf says, and inspects it as a file. It pins
// nothing: inspecting is looking.
func inspectReference(ctx context.Context, ref string, vf clienv.VerifyFlags, version string) (*inspectReport, error) {
	r, err := registry.ParseReference(strings.TrimPrefix(ref, config.SchemeOCI))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	name := invalidNameChars.ReplaceAllString(path.Base(r.Repository), "_")
	cfg := config.Default()
	pc, err := vf.PluginConfig(cfg, name, ref)
	if err != nil {
		return nil, err
	}
	p, err := pluginsource.NewPuller(cfg, pc, nil)
	if err != nil {
		return nil, err
	}
	p.Lock = nil
	pulled, err := p.Pull(ctx, ref, pluginsource.PolicyOf(pc))
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "mcphost-inspect-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	file := filepath.Join(tmp, name+".wasm")
	if err := os.WriteFile(file, pulled.Wasm, 0o600); err != nil {
		return nil, err
	}
	rep, err := inspectPlugin(ctx, file, version)
	if err != nil {
		return nil, err
	}
	rep.File, rep.Source, rep.Digest, rep.Signer = ref, ref, pulled.Digest, pulled.Signer
	return rep, nil
}

// invalidNameChars are the characters a plugin name may not hold.
var invalidNameChars = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// inspectPlugin reads a plugin file's structure and manifest, then loads it
// with no grants and lists what it offers through a session.
func inspectPlugin(ctx context.Context, path, version string) (*inspectReport, error) {
	name, err := pluginName(path)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	rep := &inspectReport{File: path, Name: name, Bytes: len(data), SHA256: hex.EncodeToString(sum[:])}
	isJS := filepath.Ext(path) == js.Ext
	module := data
	if isJS {
		if rep.Manifest, err = js.Manifest(data); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		module = js.Engine()
	}
	info, err := sandbox.Inspect(module)
	if err != nil {
		return nil, fmt.Errorf("%s: not a valid wasm module: %w", path, err)
	}
	if !isJS {
		if rep.Manifest, err = info.Manifest(); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	rep.Exports = slices.Clone(info.Exports)
	rep.HostFunctionImports = info.HostImports()
	others := map[string]int{}
	for _, imp := range info.Imports {
		if imp.Module != abi.HostModule {
			others[imp.Module]++
		}
	}
	for m, n := range others {
		rep.OtherImports = append(rep.OtherImports, fmt.Sprintf("%s (%d)", m, n))
	}
	slices.Sort(rep.OtherImports)
	if rep.Manifest != nil {
		rep.ABI = rep.Manifest.ABI
	}
	rep.Flavour, rep.FlavourDescription = inspectFlavour(isJS, info, rep.Manifest)
	if rep.Manifest != nil && rep.Manifest.ABI != abi.Version {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("built for mcphost ABI %d; this mcphost speaks ABI %d, so serve refuses it (nothing was run)", rep.Manifest.ABI, abi.Version))
		return rep, nil
	}

	logs := &logBuffer{}
	h, err := openUngrantedHost(ctx, path, data, version, warnLogger(logs))
	if err != nil {
		return nil, err
	}
	defer h.Close()
	if rep.Tools, err = listAll[abi.Tool](ctx, h.client, "tools/list", "tools"); err != nil {
		return nil, err
	}
	if rep.Prompts, err = listAll[abi.Prompt](ctx, h.client, "prompts/list", "prompts"); err != nil {
		return nil, err
	}
	if rep.Resources, err = listAll[abi.Resource](ctx, h.client, "resources/list", "resources"); err != nil {
		return nil, err
	}
	if rep.ResourceTemplates, err = listAll[abi.ResourceTemplate](ctx, h.client, "resources/templates/list", "resourceTemplates"); err != nil {
		return nil, err
	}
	rep.Warnings = append(rep.Warnings, logs.Lines()...)
	return rep, nil
}

// openUngrantedHost loads the plugin file whose content is data with no
// grants at all (every host function denied, no network, files or config)
// and the default limits, into a server of its own, and initializes a
// session: what inspect and shell completion list a plugin with.
func openUngrantedHost(ctx context.Context, path string, data []byte, version string, logger *slog.Logger) (*pluginServer, error) {
	name, err := pluginName(path)
	if err != nil {
		return nil, err
	}
	isJS := filepath.Ext(path) == js.Ext
	module := data
	grants := sandbox.Grants{}
	if isJS {
		module = js.Engine()
		if grants.Config, err = js.Config(filepath.Base(path), data, nil); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	engine, err := sandbox.NewEngine(sandbox.EngineOptions{CacheDir: inspectCacheDir()})
	if err != nil {
		return nil, err
	}
	h := &pluginServer{engine: engine}
	h.srv = host.NewServer(host.Options{Name: "mcphost-inspect", Version: version, PageSize: 1000, Logger: logger}, nil)
	limits := config.Default().Plugin(name).Limits.Sandbox()
	limits.MaxInstances = 1
	rt, err := engine.Load(ctx, name, module, sandbox.Options{
		Limits:        limits,
		Grants:        grants,
		HostFunctions: pluginhost.DeniedHostFunctions(name),
		Logger:        logger,
	})
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if isJS {
		if err := js.Check(ctx, rt); err != nil {
			_ = rt.Close(ctx)
			h.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	h.plugin = host.NewPlugin(name, "", pluginhost.EngineErrors(name)(rt))
	h.srv.SetCatalog(host.BuildCatalog(ctx, []*host.Plugin{h.plugin}, logger))
	if err := h.start(ctx, "mcphost inspect", version, io.Discard); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// inspectCacheDir is the compilation cache of the default config, so that
// inspecting a plugin serve already compiled is quick; "" (in memory) when
// there is none.
func inspectCacheDir() string {
	dir, err := config.Default().CacheDir()
	if err != nil {
		return ""
	}
	return dir
}

// inspectFlavour says which interface a plugin speaks, as host.NewPlugin
// and the loader decide it.
func inspectFlavour(isJS bool, info *sandbox.Info, m *abi.Manifest) (id, text string) {
	v2 := slices.ContainsFunc([]string{
		abi.ExportListTools, abi.ExportCallTool, abi.ExportListPrompts, abi.ExportGetPrompt,
		abi.ExportListResources, abi.ExportListResourceTemplates, abi.ExportReadResource, abi.ExportComplete,
	}, info.HasExport)
	v1 := info.HasExport(abi.ExportV1Describe) && info.HasExport(abi.ExportV1Call)
	switch {
	case isJS:
		abiVersion := abi.Version
		if m != nil {
			abiVersion = m.ABI
		}
		return flavourJavaScript, fmt.Sprintf("JavaScript (mcphost ABI %d, run on the QuickJS engine embedded in mcphost)", abiVersion)
	case v1 && !v2:
		return flavourServlet, "v1 servlet (mcp.run: describe and call exports, tools only)"
	case m != nil:
		return flavourMCPHost, fmt.Sprintf("mcphost ABI %d (embedded mcphost.manifest)", m.ABI)
	case v2:
		return flavourHyperMCP, "hyper-mcp v2 (hyper-mcp exports, no mcphost manifest)"
	}
	return flavourUnknown, "unknown: no MCP exports (neither the mcphost/hyper-mcp exports nor describe and call)"
}

// printInspectReport prints the report for a person.
func printInspectReport(w io.Writer, rep *inspectReport) {
	fmt.Fprintf(w, "plugin:    %s (%s, %d bytes, sha256 %s)\n", rep.Name, rep.File, rep.Bytes, rep.SHA256[:16])
	if rep.Source != "" {
		fmt.Fprintf(w, "digest:    %s\nsigner:    %s\n", rep.Digest, rep.Signer)
	}
	fmt.Fprintf(w, "flavour:   %s\n", rep.FlavourDescription)
	if rep.ABI != 0 {
		fmt.Fprintf(w, "abi:       %d\n", rep.ABI)
	} else {
		fmt.Fprintf(w, "abi:       none (no mcphost manifest)\n")
	}
	if m := rep.Manifest; m != nil {
		id := strings.TrimSpace(m.Name + " " + m.Version)
		if id == "" {
			id = "(no name or version)"
		}
		fmt.Fprintf(w, "manifest:  %s", id)
		if m.Description != "" {
			fmt.Fprintf(w, ": %s", m.Description)
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "needs:")
		fmt.Fprintf(w, "  host_functions: %s\n", listOrNone(m.Needs.HostFunctions))
		fmt.Fprintf(w, "  hosts:          %s\n", listOrNone(m.Needs.Hosts))
		fmt.Fprintf(w, "  paths:          %s\n", listOrNone(m.Needs.Paths))
		fmt.Fprintf(w, "  config:         %s\n", listOrNone(m.Needs.Config))
	} else {
		fmt.Fprintln(w, "manifest:  none (the plugin declares no needs; it gets what the config grants)")
	}
	engine := ""
	if rep.Flavour == flavourJavaScript {
		engine = " (of the engine)"
	}
	fmt.Fprintf(w, "exports%s: %s\n", engine, listOrNone(rep.Exports))
	fmt.Fprintf(w, "host functions imported%s: %s\n", engine, listOrNone(rep.HostFunctionImports))
	if len(rep.OtherImports) > 0 {
		fmt.Fprintf(w, "other imports%s: %s\n", engine, strings.Join(rep.OtherImports, ", "))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Listed by running the plugin's list exports in the sandbox with no grants:")
	fmt.Fprintf(w, "\ntools (%d):\n", len(rep.Tools))
	for _, t := range rep.Tools {
		fmt.Fprintf(w, "  %s%s\n", t.Name, inspectTitle(t.Title))
		inspectDescription(w, t.Description)
		if hints := inspectHints(t.Annotations); hints != "" {
			fmt.Fprintf(w, "    hints: %s\n", hints)
		}
		if t.Execution != nil && t.Execution.TaskSupport != "" {
			fmt.Fprintf(w, "    task support: %s\n", t.Execution.TaskSupport)
		}
		inspectSchema(w, "input", t.InputSchema)
		inspectSchema(w, "output", t.OutputSchema)
	}
	fmt.Fprintf(w, "\nprompts (%d):\n", len(rep.Prompts))
	for _, p := range rep.Prompts {
		fmt.Fprintf(w, "  %s%s\n", p.Name, inspectTitle(p.Title))
		inspectDescription(w, p.Description)
		for _, a := range p.Arguments {
			req := ""
			if a.Required {
				req = " (required)"
			}
			desc := ""
			if a.Description != "" {
				desc = ": " + a.Description
			}
			fmt.Fprintf(w, "    arg %s%s%s\n", a.Name, req, desc)
		}
	}
	fmt.Fprintf(w, "\nresources (%d):\n", len(rep.Resources))
	for _, r := range rep.Resources {
		fmt.Fprintf(w, "  %s  %s%s\n", r.URI, r.Name, inspectMime(r.MimeType))
		inspectDescription(w, r.Description)
	}
	fmt.Fprintf(w, "\nresource templates (%d):\n", len(rep.ResourceTemplates))
	for _, t := range rep.ResourceTemplates {
		fmt.Fprintf(w, "  %s  %s%s\n", t.URITemplate, t.Name, inspectMime(t.MimeType))
		inspectDescription(w, t.Description)
	}
	if len(rep.Warnings) > 0 {
		fmt.Fprintf(w, "\nwarnings (%d):\n", len(rep.Warnings))
		for _, l := range rep.Warnings {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
}

func inspectTitle(title string) string {
	if title == "" {
		return ""
	}
	return " (" + title + ")"
}

func inspectMime(mime string) string {
	if mime == "" {
		return ""
	}
	return " [" + mime + "]"
}

func inspectDescription(w io.Writer, d string) {
	if d = strings.TrimSpace(d); d != "" {
		fmt.Fprintf(w, "    %s\n", strings.ReplaceAll(d, "\n", "\n    "))
	}
}

func inspectHints(a *abi.ToolAnnotations) string {
	if a == nil {
		return ""
	}
	var hints []string
	for _, h := range []struct {
		name string
		v    *bool
	}{{"readOnly", a.ReadOnlyHint}, {"destructive", a.DestructiveHint}, {"idempotent", a.IdempotentHint}, {"openWorld", a.OpenWorldHint}} {
		if h.v != nil {
			hints = append(hints, fmt.Sprintf("%s=%t", h.name, *h.v))
		}
	}
	return strings.Join(hints, " ")
}

// inspectSchema prints a schema indented, compact when short.
func inspectSchema(w io.Writer, label string, schema json.RawMessage) {
	if len(schema) == 0 || string(schema) == "null" {
		return
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, schema); err == nil && compact.Len() <= 100 {
		fmt.Fprintf(w, "    %s schema: %s\n", label, compact.String())
		return
	}
	raw, err := json.MarshalIndent(json.RawMessage(schema), "      ", "  ")
	if err != nil {
		raw = schema
	}
	fmt.Fprintf(w, "    %s schema:\n      %s\n", label, raw)
}
