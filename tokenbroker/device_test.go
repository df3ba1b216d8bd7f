package tokenbroker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// deviceClientID is the public client of deviceIssuer.
const deviceClientID = "mcphost-device"

// deviceIssuer is a loopback authorization server of the device
// authorization grant (RFC 8628) for one public client: /device answers
// device authorization requests, polling once a second; /token answers the
// device code polls from a script, and refreshes tokens.
type deviceIssuer struct {
	*httptest.Server
	mu             sync.Mutex
	answers        []string    // each poll's answer in turn: an RFC 8628 error code, or "" for a token (the rest)
	polls          []time.Time // when each device code poll came
	authorizations int         // device authorization requests answered
	refreshes      int         // refresh token requests answered
	expiresIn      int         // expires_in of the tokens it issues
	codeLife       int         // expires_in of the device codes it issues
	interval       int64       // interval of the device codes it issues
	refreshFails   bool        // refresh requests get invalid_grant
	noComplete     bool        // no verification_uri_complete
}

func newDeviceIssuer(t *testing.T, answers ...string) *deviceIssuer {
	s := &deviceIssuer{answers: answers, expiresIn: 3600, codeLife: 600, interval: 1}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		s.mu.Lock()
		defer s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		reply := func(status int, v any) {
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(v)
		}
		if r.PostForm.Get("client_id") != deviceClientID {
			reply(http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
			return
		}
		token := func(access string) {
			reply(http.StatusOK, map[string]any{"access_token": access, "refresh_token": "refresh-" + access,
				"token_type": "Bearer", "expires_in": s.expiresIn})
		}
		switch grant := r.PostForm.Get("grant_type"); {
		case r.URL.Path == "/device":
			s.authorizations++
			da := map[string]any{"device_code": fmt.Sprintf("device-%d", s.authorizations), "user_code": "WDJB-MJHT",
				"verification_uri": s.URL + "/verify", "expires_in": s.codeLife, "interval": s.interval}
			if !s.noComplete {
				da["verification_uri_complete"] = s.URL + "/verify?user_code=WDJB-MJHT"
			}
			reply(http.StatusOK, da)
		case grant == "urn:ietf:params:oauth:grant-type:device_code":
			if r.PostForm.Get("device_code") != fmt.Sprintf("device-%d", s.authorizations) {
				reply(http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
				return
			}
			s.polls = append(s.polls, time.Now())
			answer := "" // once the script is played, the user has approved
			if len(s.answers) > 0 {
				answer, s.answers = s.answers[0], s.answers[1:]
			}
			if answer != "" {
				reply(http.StatusBadRequest, map[string]string{"error": answer})
				return
			}
			token(fmt.Sprintf("device-token-%d", s.authorizations))
		case grant == "refresh_token" && !s.refreshFails && strings.HasPrefix(r.PostForm.Get("refresh_token"), "refresh-"):
			s.refreshes++
			token(fmt.Sprintf("refreshed-token-%d", s.refreshes))
		default:
			reply(http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *deviceIssuer) client() Client {
	return Client{TokenURL: s.URL + "/token", ClientID: deviceClientID, DeviceAuthURL: s.URL + "/device", Scopes: []string{"read"}}
}

// counts returns the device authorizations, polls and refreshes answered.
func (s *deviceIssuer) counts() (authorizations, polls, refreshes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.authorizations, len(s.polls), s.refreshes
}

// gap returns the time between poll i-1 and poll i, 0 when there was no
// poll i.
func (s *deviceIssuer) gap(i int) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.polls) {
		return 0
	}
	return s.polls[i].Sub(s.polls[i-1])
}

// user is the user a device authorization is sent to, through Prompt: it
// records what it was shown, and answers with decline when set.
type user struct {
	mu      sync.Mutex
	urls    []string
	codes   []string
	expires []time.Time
	done    int // completions announced
	pollsAt int // polls the issuer had answered at the last completion
	decline error
	issuer  *deviceIssuer
}

func (u *user) prompt(_ context.Context, url, code string, expires time.Time) (func(), error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.urls, u.codes, u.expires = append(u.urls, url), append(u.codes, code), append(u.expires, expires)
	if u.decline != nil {
		return nil, u.decline
	}
	return func() {
		_, polls, _ := u.issuer.counts()
		u.mu.Lock()
		defer u.mu.Unlock()
		u.done++
		u.pollsAt = polls
	}, nil
}

func (u *user) prompts() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.urls)
}

// TestDeviceCodePendingThenGranted proves the device authorization grant:
// the user is sent to the verification URL with the code to enter there
// (the URL that holds the code when the issuer gives one) and the time
// left, the token endpoint is polled while it answers
// authorization_pending, the completion is announced once the token is
// obtained, and the token is then served from the cache without asking the
// user again.
func TestDeviceCodePendingThenGranted(t *testing.T) {
	t.Parallel()
	iss := newDeviceIssuer(t, "authorization_pending", "")
	u := &user{issuer: iss}
	b, c := New(nil), iss.client()
	before := time.Now()
	tok, err := b.Token(t.Context(), "p", []Client{c}, ask(c), u.prompt)
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken != "device-token-1" || tok.ExpiresAt == nil || tok.ExpiresAt.Secs < before.Add(3599*time.Second).Unix() {
		t.Errorf("got %+v, want device-token-1 expiring in an hour", tok)
	}
	if want := iss.URL + "/verify?user_code=WDJB-MJHT"; len(u.urls) != 1 || u.urls[0] != want || u.codes[0] != "WDJB-MJHT" {
		t.Errorf("the user was sent to %q with codes %q, want once to %s with WDJB-MJHT", u.urls, u.codes, want)
	}
	if left := time.Until(u.expires[0]); left < 590*time.Second || left > 600*time.Second {
		t.Errorf("the user was told the code expires in %v, want 10 minutes", left)
	}
	if _, polls, _ := iss.counts(); polls != 2 || u.done != 1 || u.pollsAt != 2 {
		t.Errorf("%d polls, %d completions announced after %d polls; want 2 polls, one completion after the token", polls, u.done, u.pollsAt)
	}
	if gap := iss.gap(1); gap < 900*time.Millisecond {
		t.Errorf("polled again %v after authorization_pending, want the issuer's interval, 1 s", gap)
	}
	again, err := b.Token(t.Context(), "p", []Client{c}, ask(c), u.prompt)
	if a, polls, _ := iss.counts(); err != nil || again.AccessToken != "device-token-1" || u.prompts() != 1 || a != 1 || polls != 2 {
		t.Errorf("second call: %+v, %v after %d prompts, %d authorizations, %d polls; want the cached token", again, err, u.prompts(), a, polls)
	}
}

// TestDeviceCodeSlowDown proves a slow_down answer makes the broker poll
// 5 seconds less often, as RFC 8628 section 3.5 requires.
func TestDeviceCodeSlowDown(t *testing.T) {
	t.Parallel()
	iss := newDeviceIssuer(t, "slow_down", "")
	u := &user{issuer: iss}
	b, c := New(nil), iss.client()
	tok, err := b.Token(t.Context(), "p", []Client{c}, ask(c), u.prompt)
	if err != nil || tok.AccessToken != "device-token-1" {
		t.Fatalf("got %+v, %v; want device-token-1", tok, err)
	}
	if _, polls, _ := iss.counts(); polls != 2 {
		t.Fatalf("%d polls, want 2", polls)
	}
	if gap := iss.gap(1); gap < 5900*time.Millisecond {
		t.Errorf("polled again %v after slow_down, want the 1 s interval plus 5 s", gap)
	}
}

// TestDeviceCodeHostileIssuer proves the device authorization grant is
// bounded against an issuer that breaks RFC 8628: an interval that is
// negative or absurdly long is refused before the user is asked, naming
// it, and polls answered authorization_pending past the code's expiry end
// at the expiry, with an error that says so, not a bare deadline.
func TestDeviceCodeHostileIssuer(t *testing.T) {
	t.Parallel()
	for name, interval := range map[string]int64{"negative interval": -1, "interval of 317 years": 10_000_000_000} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			iss := newDeviceIssuer(t)
			iss.interval = interval
			u := &user{issuer: iss}
			b, c := New(nil), iss.client()
			_, err := b.Token(t.Context(), "p", []Client{c}, ask(c), u.prompt)
			want := fmt.Sprintf("device authorization: the endpoint answered interval %d s, want 0 (5 s) to %d s", interval, int64(maxPollInterval/time.Second))
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("got %v, want %q", err, want)
			}
			if _, polls, _ := iss.counts(); polls != 0 || u.prompts() != 0 {
				t.Errorf("%d polls, %d prompts; want neither", polls, u.prompts())
			}
		})
	}
	t.Run("pending past expiry", func(t *testing.T) {
		t.Parallel()
		iss := newDeviceIssuer(t, slices.Repeat([]string{"authorization_pending"}, 100)...)
		iss.codeLife = 2
		u := &user{issuer: iss}
		b, c := New(nil), iss.client()
		start := time.Now()
		_, err := b.Token(t.Context(), "p", []Client{c}, ask(c), u.prompt)
		if want := "the device code expired at "; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
		if _, polls, _ := iss.counts(); polls > 2 || u.done != 0 {
			t.Errorf("%d polls, %d completions; want at most 2 polls, one a second for the code's 2 s, and no completion", polls, u.done)
		}
		if took := time.Since(start); took > 4*time.Second {
			t.Errorf("took %v, want the code's 2 s", took)
		}
	})
}

// TestDeviceCodeRefusals proves each way a device authorization ends
// without a token: the code expired (expired_token), the user refused at
// the issuer (access_denied), or declined when asked (the token endpoint
// is then not polled). Each is an error naming the cause, announces no
// completion, and is not cached: the next call asks the user again.
func TestDeviceCodeRefusals(t *testing.T) {
	t.Parallel()
	for _, code := range []string{"expired_token", "access_denied"} {
		t.Run(code, func(t *testing.T) {
			t.Parallel()
			iss := newDeviceIssuer(t, "authorization_pending", code)
			u := &user{issuer: iss}
			b, c := New(nil), iss.client()
			_, err := b.Token(t.Context(), "p", []Client{c}, ask(c), u.prompt)
			if want := "the token endpoint answered 400 Bad Request: " + code; err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("got %v, want %q", err, want)
			}
			if _, polls, _ := iss.counts(); polls != 2 || u.done != 0 {
				t.Errorf("%d polls, %d completions; want 2 polls and none", polls, u.done)
			}
			if _, err := b.Token(t.Context(), "p", []Client{c}, ask(c), u.prompt); err != nil || u.prompts() != 2 {
				t.Errorf("after %s: %v after %d prompts; want the user asked again and a token", code, err, u.prompts())
			}
		})
	}
	t.Run("declined", func(t *testing.T) {
		t.Parallel()
		iss := newDeviceIssuer(t)
		iss.noComplete = true
		u := &user{issuer: iss, decline: errors.New("the user did not authorize the device (decline)")}
		b, c := New(nil), iss.client()
		_, err := b.Token(t.Context(), "p", []Client{c}, ask(c), u.prompt)
		if err == nil || !strings.Contains(err.Error(), "the user did not authorize the device (decline)") {
			t.Fatalf("got %v, want the decline", err)
		}
		if a, polls, _ := iss.counts(); a != 1 || polls != 0 {
			t.Errorf("%d authorizations, %d polls; want one authorization and no poll", a, polls)
		}
		// Without verification_uri_complete, the user gets verification_uri.
		if want := iss.URL + "/verify"; len(u.urls) != 1 || u.urls[0] != want {
			t.Errorf("the user was sent to %q, want %s", u.urls, want)
		}
	})
}

// TestDeviceCodeRefresh proves a device token about to expire is refreshed
// with its refresh token, without asking the user, and that when the
// refresh fails the user is asked to authorize the device again.
func TestDeviceCodeRefresh(t *testing.T) {
	t.Parallel()
	iss := newDeviceIssuer(t)
	iss.expiresIn = 20 // within the 30 s skew: every token is about to expire
	u := &user{issuer: iss}
	b, c := New(nil), iss.client()
	if _, err := b.Token(t.Context(), "p", []Client{c}, ask(c), u.prompt); err != nil {
		t.Fatal(err)
	}
	tok, err := b.Token(t.Context(), "p", []Client{c}, ask(c), u.prompt)
	if a, _, r := iss.counts(); err != nil || tok.AccessToken != "refreshed-token-1" || u.prompts() != 1 || a != 1 || r != 1 {
		t.Fatalf("got %+v, %v after %d prompts, %d authorizations, %d refreshes; want refreshed-token-1 without the user", tok, err, u.prompts(), a, r)
	}
	iss.mu.Lock()
	iss.refreshFails = true
	iss.mu.Unlock()
	tok, err = b.Token(t.Context(), "p", []Client{c}, ask(c), u.prompt)
	if a, _, _ := iss.counts(); err != nil || tok.AccessToken != "device-token-2" || u.prompts() != 2 || a != 2 {
		t.Fatalf("refresh refused: %+v, %v after %d prompts, %d authorizations; want device-token-2 from a new authorization", tok, err, u.prompts(), a)
	}
}
