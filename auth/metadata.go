package auth

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"github.com/mcphost/mcphost/config"
)

// wellKnown is the path of the protected resource metadata (RFC 9728
// section 3).
const wellKnown = "/.well-known/oauth-protected-resource"

// setMetadata derives the metadata document, its paths and its URL from
// cfg. The metadata of a resource with a path is served both at the root
// well-known path and at the path with the resource's path appended
// (RFC 9728 section 3.1); challenges name the latter.
func (a *Authenticator) setMetadata(cfg config.AuthConfig) error {
	u, err := url.Parse(cfg.Resource)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return fmt.Errorf("auth: resource %q is not an absolute URL", cfg.Resource)
	}
	a.paths = []string{wellKnown}
	if u.Path != "" && u.Path != "/" {
		a.paths = append(a.paths, wellKnown+u.Path)
	}
	a.metadataURL = (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: a.paths[len(a.paths)-1]}).String()

	doc := struct {
		Resource               string   `json:"resource"`
		AuthorizationServers   []string `json:"authorization_servers,omitempty"`
		ScopesSupported        []string `json:"scopes_supported,omitempty"`
		BearerMethodsSupported []string `json:"bearer_methods_supported"`
	}{Resource: cfg.Resource, BearerMethodsSupported: []string{"header"}}
	if cfg.Mode == config.AuthJWT {
		doc.AuthorizationServers = []string{cfg.Issuer}
		doc.ScopesSupported = cfg.ScopesSupported
	}
	a.metadata, err = json.Marshal(doc)
	return err
}

// MetadataPaths returns the URL paths to route to MetadataHandler: the
// well-known path and, when the resource has a path, the well-known path
// followed by it (/.well-known/oauth-protected-resource/mcp). It returns
// none in mode "none".
func (a *Authenticator) MetadataPaths() []string {
	return slices.Clone(a.paths)
}

// MetadataHandler returns a handler serving the protected resource metadata
// document (RFC 9728) at MetadataPaths, with {"resource",
// "authorization_servers", "scopes_supported",
// "bearer_methods_supported"}. Being public, it may be read from any
// origin. Other paths get 404.
func (a *Authenticator) MetadataHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !slices.Contains(a.paths, r.URL.Path) {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			h.Set("Content-Type", "application/json")
			_, _ = w.Write(a.metadata)
		case http.MethodOptions: // CORS preflight
			h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "*")
			w.WriteHeader(http.StatusNoContent)
		default:
			h.Set("Allow", "GET, HEAD, OPTIONS")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
	})
}
