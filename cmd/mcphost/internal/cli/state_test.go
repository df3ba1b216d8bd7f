package cli

import (
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/internal/testrig/redistest"
)

// TestStateBackendSettingsThatCannotWorkStopServe opens the Redis backend
// with each setting serve cannot use, and checks that each stops it with
// an error naming the setting: a missing or empty password source, a
// ca_file that is missing or holds no certificate.
func TestStateBackendSettingsThatCannotWorkStopServe(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	empty := filepath.Join(dir, "empty")
	for _, f := range []string{notPEM, empty} {
		if err := os.WriteFile(f, []byte("\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("MCPHOST_TEST_NO_PASSWORD", "")
	for _, c := range []struct {
		state config.StateConfig
		want  string
	}{
		{config.StateConfig{Password: config.Secret{Env: "MCPHOST_TEST_NO_PASSWORD"}}, "[state] password: environment variable MCPHOST_TEST_NO_PASSWORD"},
		{config.StateConfig{Password: config.Secret{File: empty}}, "[state] password: secret file " + empty + " is empty"},
		{config.StateConfig{URL: "rediss://127.0.0.1:6380", CAFile: filepath.Join(dir, "missing.pem")}, "[state] ca_file: open " + filepath.Join(dir, "missing.pem")},
		{config.StateConfig{URL: "rediss://127.0.0.1:6380", CAFile: notPEM}, "[state] ca_file: " + notPEM + " holds no PEM certificate"},
	} {
		cfg := config.Default()
		c.state.Backend, c.state.Prefix = config.StateRedis, "mcphost:"
		if c.state.URL == "" {
			c.state.URL = "redis://127.0.0.1:6379"
		}
		cfg.State = c.state
		s, err := openState(t.Context(), cfg, "http", slog.New(slog.DiscardHandler))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error with %q", c.state, err, c.want)
		}
		s.close()
	}
}

// TestReadyzNeverWaitsForTheStateBackend opens the backend on a Redis
// that accepts connections and never answers: /readyz's report of it
// comes at once (a load balancer's check times out in a fraction of a
// second; a probe that waited for the ping would take the replica out),
// saying it is unreachable.
func TestReadyzNeverWaitsForTheStateBackend(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			defer conn.Close() // held open, never answered
		}
	}()
	cfg := config.Default()
	cfg.State = config.StateConfig{Backend: config.StateRedis, URL: "redis://" + ln.Addr().String(), Prefix: "mcphost:"}
	s, err := openState(t.Context(), cfg, "http", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	for range 3 {
		start := time.Now()
		report := s.report()
		if took := time.Since(start); took >= pingTimeout/10 {
			t.Errorf("the report took %v: it waits for the backend", took)
		}
		if report == nil || report.Reachable {
			t.Errorf("report %+v, want an unreachable redis", report)
		}
	}
}

// TestStateValuesAreCappedByTheConfig opens the backend with a config
// whose largest max_output_bytes (a plugin's, above the defaults') and
// max_body_bytes bound a record: one of stateValueCap bytes is stored, one
// byte more is refused.
func TestStateValuesAreCappedByTheConfig(t *testing.T) {
	r := redistest.Start(t)
	path := filepath.Join(t.TempDir(), "mcphost.toml")
	if err := os.WriteFile(path, []byte("[defaults]\nmax_output_bytes = 1000\n[plugins.big]\nmax_output_bytes = 5000\n[http]\nmax_body_bytes = 2000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := stateValueCap(cfg), int64(2*(5000+2000)+64<<10); got != want {
		t.Errorf("stateValueCap: %d, want %d", got, want)
	}
	cfg.State = config.StateConfig{Backend: config.StateRedis, URL: r.URL(), Password: config.Secret{File: r.PasswordFile}, Prefix: "cap:"}
	s, err := openState(t.Context(), cfg, "http", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	limit := stateValueCap(cfg)
	if err := s.store.Save(t.Context(), "fits", make([]byte, limit), time.Minute); err != nil {
		t.Errorf("a record of the cap: %v", err)
	}
	if err := s.store.Save(t.Context(), "long", make([]byte, limit+1), time.Minute); err == nil {
		t.Error("a record one byte over the cap was stored")
	}
}
