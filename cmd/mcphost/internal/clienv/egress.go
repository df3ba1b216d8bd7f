package clienv

import (
	"crypto/x509"
	"fmt"
	"log/slog"
	"net/url"

	"golang.org/x/net/http/httpproxy"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/certfile"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/sandbox"
)

// Egress returns how plugins' granted requests leave the machine: through
// the proxy the environment names (HTTPS_PROXY, HTTP_PROXY, NO_PROXY, read
// now), trusting the certificate authorities of [server] egress_ca_file
// besides the system's. logger (nil for none) hears of the proxy.
func Egress(cfg *config.Config, logger *slog.Logger) (sandbox.Egress, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var e sandbox.Egress
	proxies := httpproxy.FromEnvironment()
	if proxies.HTTPProxy != "" || proxies.HTTPSProxy != "" {
		proxyFor := proxies.ProxyFunc()
		e.Proxy = func(u *url.URL) (*url.URL, error) { return proxyFor(u) }
		logger.Info("plugins' requests go through a proxy", "http_proxy", redactedURL(proxies.HTTPProxy),
			"https_proxy", redactedURL(proxies.HTTPSProxy), "no_proxy", proxies.NoProxy)
	}
	if cfg.Server.EgressCAFile != "" {
		system, err := x509.SystemCertPool()
		if err != nil {
			system = nil
		}
		pool, err := certfile.CAPool(cfg.Server.EgressCAFile, system)
		if err != nil {
			return e, fmt.Errorf("egress_ca_file: %w", err)
		}
		e.RootCAs = pool
	}
	return e, nil
}

// redactedURL is a proxy setting without its password, for the log.
func redactedURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || s == "" {
		return s
	}
	return u.Redacted()
}
