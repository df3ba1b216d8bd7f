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

// handleDiscover names the protocol versions the server speaks: the 2026-07-28
// ones first, served per request, then those a legacy client negotiates
// with initialize. Unlike initialize, it does not wait for the plugins
// loading at start-up: clients probe discovery with a short timeout (five
// seconds for mcp-go) and fall back to initialize, and a first start
// compiles for seconds. While plugins load, the capabilities allow for
// what they may bring; the requests that follow wait for them.
func handleDiscover(ctx context.Context, req *request, _ *meta) (any, error) {
	srv := req.srv
	return discoverResult{
		SupportedVersions: slices.Concat(perRequestVersions, supportedVersions),
		Capabilities:      srv.capabilities20260728(req.view()),
		Instructions:      srv.opts.Instructions,
	}, nil
}

// capabilities20260728 are the capabilities of the server at 2026-07-28, as
// of now, for a request that sees v.
func (s *Server) capabilities20260728(v view) map[string]any {
	return s.Catalog().capabilities(Version20260728, s.stillLoading(), s.opts.CatalogChanges, v)
}
