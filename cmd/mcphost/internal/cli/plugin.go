package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/clienv"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/internal/ociplugin"
	"github.com/mcphost/mcphost/internal/pluginsource"
	"github.com/mcphost/mcphost/pluginhost"
	"github.com/mcphost/mcphost/sandbox"
)

// pluginFlags are the flags of the plugin subcommands.
type pluginFlags struct {
	config, plugins string
	verify          clienv.VerifyFlags
}

func newPluginCommand() *cobra.Command {
	var f pluginFlags
	cmd := &cobra.Command{
		Use:   "plugin",
		Short: "Pull, list, publish and update plugins from OCI registries",
		Long: `The plugin commands work with plugins whose [plugins.NAME] table has a
source (oci://REGISTRY/REPOSITORY:TAG, ...@sha256:DIGEST, or an https URL):
they are pulled into the plugin cache, their cosign signatures checked, and
the digest each tag resolved to pinned in mcphost.lock beside the config.
Registry credentials come from the Docker configuration and its credential
helpers (docker login, oras login).`,
	}
	cmd.PersistentFlags().StringVar(&f.config, "config", "", configFlagHelp)
	cmd.PersistentFlags().StringVar(&f.plugins, "plugins", defaultPluginsDir, "folder of plugins, where the config may be")
	pull := &cobra.Command{
		Use:   "pull NAME|oci://REF",
		Short: "Pull a plugin into the cache, check its signature, print its digest, size and signer",
		Long: `Pull fetches the plugin a [plugins.NAME] table's source names, checked as
serve checks it (verify or allow_unsigned), and pins its tag in mcphost.lock
if it is not pinned yet; or an oci:// reference, checked with --key, or
keyless with --trusted-root and the --certificate-* flags (as cosign
verify takes them), or accepted unsigned with --allow-unsigned.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return pluginPull(cmd, f, args[0], false)
		},
	}
	f.verify.Register(pull.Flags())
	update := &cobra.Command{
		Use:   "update NAME",
		Short: "Resolve the tag of a plugin's source anew, verify it, and move its pin in mcphost.lock",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return pluginPull(cmd, f, args[0], true)
		},
	}
	ls := &cobra.Command{
		Use:   "ls",
		Short: "List every plugin: source, digest, signature policy, grants",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return pluginList(cmd.OutOrStdout(), f)
		},
	}
	push := &cobra.Command{
		Use:   "push DIR|FILE oci://REGISTRY/REPOSITORY:TAG",
		Short: "Publish a plugin as a Wasm OCI artifact, its manifest in an annotation",
		Long: `Push publishes a plugin module (FILE, or the one .wasm file of DIR) as a CNCF
Wasm OCI artifact: one layer of ` + ociplugin.WasmLayerMediaType + `, with the
plugin's manifest (JSON) in the manifest annotation ` + ociplugin.AnnotationManifest + `.
Sign it afterwards with cosign sign (--key, or keyless) and the digest
printed.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return pluginPush(cmd, args[0], args[1])
		},
	}
	cmd.AddCommand(pull, update, ls, push)
	return cmd
}

// pluginContext is the context of a plugin command: cancelled on interrupt.
func pluginContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(cmd.Context(), os.Interrupt)
}

// pluginPull pulls (or, with update, updates) a configured plugin or a
// reference, and prints what it got.
func pluginPull(cmd *cobra.Command, f pluginFlags, arg string, update bool) error {
	cfg, err := clienv.LoadConfig(f.config, f.plugins)
	if err != nil {
		return err
	}
	ctx, stop := pluginContext(cmd)
	defer stop()
	var pc config.PluginConfig
	source := arg
	if !strings.Contains(arg, "://") {
		if _, ok := cfg.Plugins[arg]; !ok || cfg.Plugin(arg).Source == "" {
			return fmt.Errorf("no [plugins.%s] table with a source in %s", arg, clienv.Source(cfg))
		}
		pc = cfg.Plugin(arg)
		source = pc.Source
	} else if pc, err = f.verify.PluginConfig(cfg, arg, arg); err != nil {
		return err
	}
	p, err := pluginsource.NewPuller(cfg, pc, nil)
	if err != nil {
		return err
	}
	var pulled *ociplugin.Pulled
	switch {
	case update && !strings.HasPrefix(source, config.SchemeOCI):
		return fmt.Errorf("%s: only an oci:// source by tag has a pin to update", source)
	case update:
		old, _ := p.Lock.Get(source)
		if pulled, err = p.Update(ctx, source, pluginsource.PolicyOf(pc)); err == nil && old != pulled.Digest {
			fmt.Fprintf(cmd.OutOrStdout(), "pin moved: %s -> %s\n", old, pulled.Digest)
		}
	case strings.HasPrefix(source, config.SchemeOCI):
		pulled, err = p.Pull(ctx, source, pluginsource.PolicyOf(pc))
	default:
		pulled, err = p.FetchURL(ctx, source, pc.SHA256)
	}
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "source:  %s\ndigest:  %s\nsize:    %d bytes\nlayout:  %s\nsigner:  %s\n", pulled.Source, pulled.Digest, len(pulled.Wasm), pulled.Layout, pulled.Signer)
	if m := pulled.Annotations[ociplugin.AnnotationManifest]; m != "" {
		fmt.Fprintf(w, "manifest: %s\n", m)
	}
	return nil
}

// pluginList prints every plugin of the config and of the folder.
func pluginList(w io.Writer, f pluginFlags) error {
	cfg, err := clienv.LoadConfig(f.config, f.plugins)
	if err != nil {
		return err
	}
	names := map[string]string{} // plugin name -> file in the folder
	if entries, err := os.ReadDir(f.plugins); err == nil {
		for _, e := range entries {
			if !e.IsDir() && pluginhost.IsPluginFile(e.Name()) {
				names[strings.TrimSuffix(e.Name(), filepath.Ext(e.Name()))] = e.Name()
			}
		}
	}
	for name := range cfg.Plugins {
		if _, ok := names[name]; !ok {
			names[name] = ""
		}
	}
	lock := ociplugin.OpenLock(cfg.LockPath())
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSOURCE\tDIGEST\tSIGNATURE\tGRANTS")
	for _, name := range slices.Sorted(maps.Keys(names)) {
		pc := cfg.Plugin(name)
		source, digest, sig := pc.Source, "", "-"
		switch {
		case pc.Disabled:
			source, sig = "disabled", "-"
		case strings.HasPrefix(pc.Source, config.SchemeOCI):
			if i := strings.Index(pc.Source, "@"); i >= 0 {
				digest = pc.Source[i+1:]
			} else if digest, err = lock.Get(pc.Source); err != nil {
				return err
			}
			digest = orDash(digest, "not pinned yet")
			sig = signaturePolicy(pc)
		case pc.Source != "":
			digest, sig = "sha256:"+pc.SHA256, "pinned by sha256"
		case names[name] == "":
			source, digest = "missing from "+f.plugins, "-"
		default:
			source = filepath.Join(f.plugins, names[name])
			digest = orDash(pc.SHA256, "unpinned")
			if pc.SHA256 != "" {
				digest = "sha256:" + pc.SHA256
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name, source, digest, sig, grants(pc))
	}
	return tw.Flush()
}

func orDash(s, dash string) string {
	if s == "" {
		return dash
	}
	return s
}

// signaturePolicy says what signature an OCI plugin must have.
func signaturePolicy(pc config.PluginConfig) string {
	v := pc.Verify
	switch {
	case pc.AllowUnsigned:
		return "UNSIGNED allowed"
	case v.Key != "":
		return "key " + v.Key
	default:
		return fmt.Sprintf("keyless %s/%s", v.Identity+v.IdentityRegexp, v.Issuer+v.IssuerRegexp)
	}
}

// grants summarizes what pc grants.
func grants(pc config.PluginConfig) string {
	var g []string
	if len(pc.HostFunctions) > 0 {
		g = append(g, "host_functions="+strings.Join(pc.HostFunctions, ","))
	}
	if len(pc.AllowedHosts) > 0 {
		g = append(g, "allowed_hosts="+strings.Join(pc.AllowedHosts, ","))
	}
	for _, m := range pc.Mounts {
		mode := "rw"
		if m.ReadOnly {
			mode = "ro"
		}
		g = append(g, fmt.Sprintf("mount=%s:%s:%s", m.Host, m.Guest, mode))
	}
	if n := len(pc.Config) + len(pc.Secrets); n > 0 {
		g = append(g, fmt.Sprintf("config_keys=%d", n))
	}
	return orDash(strings.Join(g, " "), "none")
}

// pluginPush publishes the module of target (a file, or a folder holding
// one .wasm file) at ref.
func pluginPush(cmd *cobra.Command, target, ref string) error {
	file := target
	if st, err := os.Stat(target); err == nil && st.IsDir() {
		wasms, _ := filepath.Glob(filepath.Join(target, "*.wasm"))
		if len(wasms) != 1 {
			return fmt.Errorf("%s: want exactly one .wasm file in the folder, found %d", target, len(wasms))
		}
		file = wasms[0]
	}
	wasm, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	info, err := sandbox.Inspect(wasm)
	if err != nil {
		return fmt.Errorf("%s: not a valid wasm module: %w", file, err)
	}
	annotations := map[string]string{}
	if m, err := info.Manifest(); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	} else if m != nil {
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		annotations[ociplugin.AnnotationManifest] = string(b)
	}
	ctx, stop := pluginContext(cmd)
	defer stop()
	digest, err := (&ociplugin.Puller{}).Push(ctx, ref, wasm, annotations)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "pushed %s\ndigest: %s\nsize:   %d bytes\n", ref, digest, len(wasm))
	return nil
}
