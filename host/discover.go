package host

import (
	"context"
	"slices"
)

// discoverResult answers server/discover (2026-07-28).
type discoverResult struct {
	SupportedVersions []string       `json:"supportedVersions"`
	Capabilities      map[string]any `json:"capabilities"`
	Instructions      string         `json:"instructions,omitempty"`
}

// handleDiscover names the protocol versions the server speaks: the modern
// ones first, served per request, then those a legacy client negotiates
// with initialize. Unlike initialize, it does not wait for the plugins
// loading at start-up: clients probe discovery with a short timeout (five
// seconds for mcp-go) and fall back to initialize, and a first start
// compiles for seconds. While plugins load, the capabilities allow for
// what they may bring; the requests that follow wait for them.
func handleDiscover(ctx context.Context, req *request, _ *meta) (any, error) {
	srv := req.sess.srv
	loading := srv.stillLoading()
	return discoverResult{
		SupportedVersions: slices.Concat(modernVersions, supportedVersions),
		Capabilities:      srv.Catalog().capabilities(Version20260728, loading, req.view()),
		Instructions:      srv.opts.Instructions,
	}, nil
}
