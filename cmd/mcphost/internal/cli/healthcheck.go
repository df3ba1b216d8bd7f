package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

func newHealthcheckCommand() *cobra.Command {
	var url string
	var ready bool
	cmd := &cobra.Command{
		Use:   "healthcheck",
		Short: "Exit 0 when a running HTTP server is live (/healthz), or ready with --ready (/readyz)",
		Long: `healthcheck asks a running mcphost serve --transport http whether it is live
(GET /healthz: the process answers HTTP at all) or, with --ready, ready
(GET /readyz: the plugins of the start-up have loaded or failed), and exits 0
when it answers 200, 1 otherwise: a container's HEALTHCHECK, where the image
has no curl (docs/observability.md, "Health").`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path := "/healthz"
			if ready {
				path = "/readyz"
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Second)
			defer cancel()
			target := strings.TrimSuffix(strings.TrimSuffix(url, "/"), "/mcp") + path
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
			if err != nil {
				return fmt.Errorf("--url: %w", err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("GET %s: %s: %s", target, resp.Status, strings.TrimSpace(string(body)))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s", target, body)
			return nil
		},
	}
	cmd.Flags().StringVar(&url, "url", "http://127.0.0.1:8080", "the server's base URL")
	cmd.Flags().BoolVar(&ready, "ready", false, "ask /readyz (the plugins loaded) rather than /healthz (the process lives)")
	return cmd
}
