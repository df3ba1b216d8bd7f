package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcphost/mcphost/status"
	"github.com/spf13/cobra"
)

type statusFlags struct {
	url       string
	tokenFile string
}

func newStatusCommand() *cobra.Command {
	var f statusFlags
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show a running server's status: its plugins, sessions, tasks and latest denials",
		Long: `status reads /status.json of a running mcphost serve (served where /metrics
is: the HTTP transport's loopback listener, or [telemetry] metrics_listen) and
prints it: each plugin's language, isolation, instances, queue, breaker,
memory and calls of the last five minutes, then the sessions, the tasks and
the latest denials. A server that wants a token for it ([telemetry]
status_token_file) gets it from --token-file.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			snap, err := fetchStatus(cmd.Context(), f)
			if err != nil {
				return err
			}
			printStatus(cmd.OutOrStdout(), snap)
			return nil
		},
	}
	cmd.Flags().StringVar(&f.url, "url", "http://127.0.0.1:8080", "the server's base URL (its /status.json is read)")
	cmd.Flags().StringVar(&f.tokenFile, "token-file", "", "a file holding the bearer token the status page requires")
	return cmd
}

// fetchStatus GETs the server's /status.json.
func fetchStatus(ctx context.Context, f statusFlags) (status.Snapshot, error) {
	var snap status.Snapshot
	token, err := readToken("--token-file", f.tokenFile)
	if err != nil {
		return snap, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	url := strings.TrimSuffix(strings.TrimSuffix(f.url, "/"), "/mcp") + "/status.json"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return snap, fmt.Errorf("--url: %w", err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return snap, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		return snap, fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&snap); err != nil {
		return snap, fmt.Errorf("GET %s: %w", url, err)
	}
	return snap, nil
}

// printStatus writes snap as tables.
func printStatus(w io.Writer, snap status.Snapshot) {
	fmt.Fprintf(w, "mcphost %s, up %s; memory budget %s held of %s\n\n", snap.Version,
		time.Duration(snap.UptimeSeconds)*time.Second, mib(int64(snap.MemoryHeldBytes)), mib(int64(snap.MemoryBudgetBytes)))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PLUGIN\tLANGUAGE\tISOLATION\tBUSY/IDLE\tQUEUED\tBREAKER\tMEMORY\tCALLS\tERRORS\tP50 MS\tP99 MS\tLAST ERROR")
	for _, p := range snap.Plugins {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%d\t%s\t%s\t%d\t%d\t%.3f\t%.3f\t%s\n", p.Name, orDash(p.Language, "-"), orDash(p.Isolation, "-"),
			p.Busy, p.Idle, p.Queued, orDash(p.Breaker, "-"), mib(int64(p.MemoryHeldBytes)), p.Calls, p.Errors, p.P50MS, p.P99MS, orDash(p.LastError, "-"))
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSIONS\tPROTOCOL VERSION\tOPEN")
	for _, s := range snap.Sessions {
		fmt.Fprintf(tw, "%s\t%s\t%d\n", s.Transport, orDash(s.ProtocolVersion, "-"), s.Count)
	}
	tw.Flush()
	var tasks []string
	for _, status := range slices.Sorted(maps.Keys(snap.Tasks)) {
		tasks = append(tasks, fmt.Sprintf("%s %d", status, snap.Tasks[status]))
	}
	fmt.Fprintf(w, "\ntasks: %s\n", orDash(strings.Join(tasks, ", "), "-"))
	if len(snap.Denials) > 0 {
		fmt.Fprintln(w, "\nlatest denials:")
		for _, d := range snap.Denials {
			fmt.Fprintf(w, "  %s  %s  %s %s  %s\n", d.Reason, orDash(d.Plugin, "-"), d.Method, d.Item, d.Detail)
		}
	}
}
