package config

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
)

// endpointKeys are the keys of an [[endpoints]] table.
var endpointKeys = []string{"path", "plugins"}

// reservedPaths are the paths the HTTP transport serves itself, besides
// everything under /.well-known/.
var reservedPaths = []string{"/", "/sse", "/messages", "/readyz", "/livez", "/healthz", "/metrics", "/status", "/status.json"}

// checkRequireScopes reports each plugin table with require_scopes when
// [auth] is not mode "jwt": no other mode gives a client scopes, so the
// plugin would be served to nobody.
func (d *decoder) checkRequireScopes(cfg *Config) {
	if cfg.Auth.Mode == AuthJWT {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Plugins)) {
		if cfg.Plugins[name].RequireScopes != nil {
			d.errorf(keyPath{"plugins", name, "require_scopes"},
				`needs [auth] mode = %q, whose access tokens carry scopes: without it no client holds a scope, and the plugin would be served to nobody`, AuthJWT)
		}
	}
}

// endpoints returns the [[endpoints]] tables of root: each a clean path
// that neither the server nor another endpoint takes, and the plugins it
// serves, named by their [plugins.NAME] tables.
func (d *decoder) endpoints(root map[string]any, cfg *Config) []Endpoint {
	items := d.tableArray(root, nil, "endpoints")
	var out []Endpoint
	taken := map[string]string{} // path → what takes it
	for i, item := range items {
		p := keyPath{"endpoints", index(i)}
		t, ok := d.table(item, p, endpointKeys)
		if !ok {
			continue
		}
		var ep Endpoint
		d.required(t, p, "path")
		if s, ok := d.checked(t, p, "path", checkEndpointPath); ok {
			ep.Path = s
			d.claim(taken, p, s)
		}
		d.required(t, p, "plugins")
		known := slices.Sorted(maps.Keys(cfg.Plugins))
		ep.Plugins = d.strs(t, p, "plugins", func(name string) error {
			if slices.Contains(known, name) {
				return nil
			}
			msg := fmt.Sprintf("no [plugins.%s] table: an endpoint names plugins by their table", name)
			if s := closest(name, known); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			return fmt.Errorf("%s", msg)
		})
		out = append(out, ep)
	}
	return out
}

// claim records the paths the endpoint at p serves, at s, reporting one
// another endpoint already serves.
func (d *decoder) claim(taken map[string]string, p keyPath, s string) {
	if by, ok := taken[s]; ok {
		d.errorf(p.add("path"), "%q is %s", s, by)
		return
	}
	owner := p.String()
	taken[s] = "also " + owner + "'s"
	if s != "/mcp" { // the default endpoint keeps /sse and /messages
		taken[s+"/sse"] = "taken by " + owner + ", which serves HTTP+SSE there"
		taken[s+"/messages"] = "taken by " + owner + ", which takes HTTP+SSE messages there"
	}
}

// checkEndpointPath returns why s is not a path an endpoint may take.
func checkEndpointPath(s string) error {
	if !strings.HasPrefix(s, "/") || path.Clean(s) != s ||
		!only(s, func(c byte) bool { return isBare(c) || c == '/' || c == '.' || c == '~' }) {
		return fmt.Errorf("%q is not a clean absolute path such as \"/mcp/team-a\"", s)
	}
	if slices.Contains(reservedPaths, s) || strings.HasPrefix(s, "/.well-known/") || s == "/.well-known" {
		return fmt.Errorf("%q is taken by the server itself", s)
	}
	return nil
}
