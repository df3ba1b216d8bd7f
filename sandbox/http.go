package sandbox

import (
	"errors"
	"fmt"
	"net/http"
	"sync"

	extism "github.com/extism/go-sdk"
	"github.com/gobwas/glob"
)

var guardRedirectsOnce sync.Once

// guardRedirects closes a hole in Extism's http_request: it checks the
// plugin's AllowedHosts against the URL the plugin asks for, then sends the
// request with http.DefaultClient, which follows redirects to any host. This
// makes http.DefaultClient refuse to follow a plugin's request (recognized by
// the Extism plugin in its context) to a host the plugin may not reach, which
// fails the call. Other requests keep their redirect policy.
func guardRedirects() {
	guardRedirectsOnce.Do(func() {
		next := http.DefaultClient.CheckRedirect
		http.DefaultClient.CheckRedirect = func(req *http.Request, via []*http.Request) error {
			p, ok := req.Context().Value(extism.PluginCtxKey("plugin")).(*extism.Plugin)
			if ok && !hostAllowed(p.AllowedHosts, req.URL.Hostname()) {
				return fmt.Errorf("redirect to %s is not allowed", req.URL.Redacted())
			}
			if next != nil {
				return next(req, via)
			}
			if len(via) >= 10 { // http.Client's default policy
				return errors.New("stopped after 10 redirects")
			}
			return nil
		}
	})
}

// hostAllowed matches host against allowed as Extism's http_request does.
func hostAllowed(allowed []string, host string) bool {
	for _, pattern := range allowed {
		if pattern == host {
			return true
		}
		if g, err := glob.Compile(pattern); err == nil && g.Match(host) {
			return true
		}
	}
	return false
}
