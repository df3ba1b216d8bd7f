package config

import (
	"reflect"
	"testing"
)

const jwtAuth = `[auth]
mode = "jwt"
resource = "https://mcp.example.com/mcp"
issuer = "https://issuer.example.com"
jwks_url = "https://issuer.example.com/jwks"
`

// TestRequireScopesAndEndpoints: require_scopes and [[endpoints]] load as
// written.
func TestRequireScopesAndEndpoints(t *testing.T) {
	cfg := load(t, jwtAuth+`
[plugins.notes]
require_scopes = ["notes:read", "team-a"]

[plugins.tools]

[[endpoints]]
path = "/mcp/team-a"
plugins = ["notes", "tools"]

[[endpoints]]
path = "/mcp"
plugins = ["tools"]
`)
	if got := cfg.Plugin("notes").RequireScopes; !reflect.DeepEqual(got, []string{"notes:read", "team-a"}) {
		t.Errorf("plugins.notes.require_scopes = %q", got)
	}
	if got := cfg.Plugin("other").RequireScopes; got != nil {
		t.Errorf("a plugin without a table requires %q", got)
	}
	want := []Endpoint{{Path: "/mcp/team-a", Plugins: []string{"notes", "tools"}}, {Path: "/mcp", Plugins: []string{"tools"}}}
	if !reflect.DeepEqual(cfg.Endpoints, want) {
		t.Errorf("endpoints = %+v, want %+v", cfg.Endpoints, want)
	}
}

// TestRequireScopesAndEndpointsErrors: each mistake is one error at its
// line, naming the fix.
func TestRequireScopesAndEndpointsErrors(t *testing.T) {
	testErrorCases(t, []errorCase{
		{"require_scopes without auth", "[plugins.notes]\nrequire_scopes = [\"read\"]\n", 2,
			`plugins.notes.require_scopes: needs [auth] mode = "jwt", whose access tokens carry scopes: without it no client holds a scope, and the plugin would be served to nobody`},
		{"require_scopes with a static bearer token", "[auth]\nmode = \"bearer\"\ntoken_env = \"T\"\n\n[plugins.notes]\nrequire_scopes = [\"read\"]\n", 6,
			`plugins.notes.require_scopes: needs [auth] mode = "jwt"`},
		{"require_scopes with auth off", "[auth]\nmode = \"none\"\n[plugins.notes]\nrequire_scopes = [\"read\"]\n", 4,
			`plugins.notes.require_scopes: needs [auth] mode = "jwt"`},
		{"bad scope", jwtAuth + "[plugins.notes]\nrequire_scopes = [\"a b\"]\n", 7, `plugins.notes.require_scopes[0]: "a b" is not a scope`},
		{"empty require_scopes", jwtAuth + "[plugins.notes]\nrequire_scopes = []\n", 7, `plugins.notes.require_scopes: must not be empty: leave it out to serve the plugin to every client`},
		{"unknown plugin in an endpoint", "[plugins.notes]\n[plugins.tools]\n\n[[endpoints]]\npath = \"/mcp/team-a\"\nplugins = [\"notes\", \"tols\"]\n", 6,
			`endpoints[0].plugins[1]: no [plugins.tols] table: an endpoint names plugins by their table (did you mean "tools"?)`},
		{"unknown plugin, nothing close", "[plugins.notes]\n\n[[endpoints]]\npath = \"/mcp/a\"\nplugins = [\"zzzzzz\"]\n", 5,
			`endpoints[0].plugins[0]: no [plugins.zzzzzz] table: an endpoint names plugins by their table`},
		{"unknown endpoint key", "[plugins.notes]\n[[endpoints]]\npath = \"/mcp/a\"\nplugins = [\"notes\"]\npluginz = [\"notes\"]\n", 5, `unknown key "endpoints[0].pluginz" (did you mean "plugins"?)`},
		{"missing path", "[plugins.notes]\n[[endpoints]]\nplugins = [\"notes\"]\n", 2, `endpoints[0]: missing "path"`},
		{"missing plugins", "[[endpoints]]\npath = \"/mcp/a\"\n", 1, `endpoints[0]: missing "plugins"`},
		{"relative path", "[plugins.notes]\n[[endpoints]]\npath = \"mcp/a\"\nplugins = [\"notes\"]\n", 3, `endpoints[0].path: "mcp/a" is not a clean absolute path such as "/mcp/team-a"`},
		{"unclean path", "[plugins.notes]\n[[endpoints]]\npath = \"/mcp/a/\"\nplugins = [\"notes\"]\n", 3, `is not a clean absolute path`},
		{"reserved path", "[plugins.notes]\n[[endpoints]]\npath = \"/sse\"\nplugins = [\"notes\"]\n", 3, `endpoints[0].path: "/sse" is taken by the server itself`},
		{"reserved path under .well-known", "[plugins.notes]\n[[endpoints]]\npath = \"/.well-known/x\"\nplugins = [\"notes\"]\n", 3, `is taken by the server itself`},
		{"endpoint's SSE path taken", "[plugins.notes]\n[[endpoints]]\npath = \"/a\"\nplugins = [\"notes\"]\n[[endpoints]]\npath = \"/a/sse\"\nplugins = [\"notes\"]\n", 6,
			`endpoints[1].path: "/a/sse" is taken by endpoints[0], which serves HTTP+SSE there`},
		{"duplicate path", "[plugins.notes]\n[[endpoints]]\npath = \"/a\"\nplugins = [\"notes\"]\n[[endpoints]]\npath = \"/a\"\nplugins = [\"notes\"]\n", 6, `endpoints[1].path: "/a" is also endpoints[0]'s`},
	})
}
