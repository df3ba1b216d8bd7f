package tokenbroker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	clientID = "mcphost-test"
	secret   = "very-s3cret-value"
)

// issuer is a loopback OAuth2 token endpoint of one confidential client
// (client credentials grant) that grants at most the scopes "read" and
// "write", and echoes any secret it is sent in its error descriptions, as
// a careless issuer might.
type issuer struct {
	*httptest.Server
	mu        sync.Mutex
	requests  int                   // token requests answered
	expiresIn int                   // expires_in of the tokens it issues
	grant     func([]string) string // the scope it grants, from those asked for
}

func newIssuer(t *testing.T) *issuer {
	s := &issuer{expiresIn: 3600, grant: func(asked []string) string { return strings.Join(asked, " ") }}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		s.mu.Lock()
		defer s.mu.Unlock()
		s.requests++
		id, sec, ok := r.BasicAuth()
		if !ok {
			id, sec = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		w.Header().Set("Content-Type", "application/json")
		fail := func(code string) {
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": "rejected client " + id + " with secret " + sec})
		}
		switch {
		case r.URL.Path != "/token" || r.PostForm.Get("grant_type") != "client_credentials":
			fail("unsupported_grant_type")
		case id != clientID || sec != secret:
			fail("invalid_client")
		default:
			_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "tok-" + strconv.Itoa(s.requests),
				"token_type": "Bearer", "expires_in": s.expiresIn, "scope": s.grant(strings.Fields(r.PostForm.Get("scope")))})
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *issuer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

func (s *issuer) client() Client {
	return Client{TokenURL: s.URL + "/token", ClientID: clientID, ClientSecret: secret, Scopes: []string{"read", "write"}}
}

// ask is the plugin's get_access_token input for client c with scopes.
func ask(c Client, scopes ...string) []byte {
	b, _ := json.Marshal(Request{ClientID: c.ClientID, TokenEndpointURL: c.TokenURL, Scopes: scopes})
	return b
}

func noPrompt(context.Context, string, string, time.Time) (func(), error) {
	panic("the client credentials grant prompts no one")
}

// TestIssueAndCache proves a token is obtained with the operator's secret,
// handed over in hyper-mcp's shape, and served from the cache while valid,
// per plugin and per set of scopes.
func TestIssueAndCache(t *testing.T) {
	iss := newIssuer(t)
	b, c := New(nil), iss.client()
	before := time.Now()
	tok, err := b.Token(t.Context(), "p", []Client{c}, ask(c), noPrompt)
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken != "tok-1" || !slices.Equal(tok.Scopes, []string{"read", "write"}) || tok.ExpiresAt == nil ||
		tok.ExpiresAt.Secs < before.Add(3599*time.Second).Unix() {
		t.Fatalf("got %+v (expires %+v), want tok-1 of read write expiring in an hour", tok, tok.ExpiresAt)
	}
	again, err := b.Token(t.Context(), "p", []Client{c}, ask(c), noPrompt)
	if err != nil || again.AccessToken != "tok-1" || iss.count() != 1 {
		t.Fatalf("second call: %+v, %v after %d requests; want tok-1 from the cache", again, err, iss.count())
	}
	// The order of the scopes asked for does not matter; another set of
	// scopes or another plugin is another token.
	if tok, err := b.Token(t.Context(), "p", []Client{c}, ask(c, "write", "read"), noPrompt); err != nil || tok.AccessToken != "tok-1" || iss.count() != 1 {
		t.Fatalf("scopes in another order: %+v, %v after %d requests; want tok-1 from the cache", tok, err, iss.count())
	}
	n := iss.count()
	tok, err = b.Token(t.Context(), "p", []Client{c}, ask(c, "read"), noPrompt)
	if err != nil || tok.AccessToken == "tok-1" || !slices.Equal(tok.Scopes, []string{"read"}) || iss.count() != n+1 {
		t.Fatalf("scope read: %+v, %v; want a new token of read", tok, err)
	}
	tok, err = b.Token(t.Context(), "q", []Client{c}, ask(c, "read"), noPrompt)
	if err != nil || iss.count() != n+2 {
		t.Fatalf("another plugin: %+v, %v after %d requests; want a token of its own", tok, err, iss.count())
	}
}

// TestRefreshBeforeExpiry proves a token about to expire (within the 30 s
// skew hyper-mcp also uses) is replaced before the plugin gets it.
func TestRefreshBeforeExpiry(t *testing.T) {
	iss := newIssuer(t)
	iss.expiresIn = 20
	b, c := New(nil), iss.client()
	first, err := b.Token(t.Context(), "p", []Client{c}, ask(c), noPrompt)
	if err != nil {
		t.Fatal(err)
	}
	second, err := b.Token(t.Context(), "p", []Client{c}, ask(c), noPrompt)
	if err != nil || second.AccessToken == first.AccessToken || iss.count() != 2 {
		t.Fatalf("got %+v, %v after %d requests; want a new token, the first expiring within the skew", second, err, iss.count())
	}
	iss.mu.Lock()
	iss.expiresIn = 3600
	iss.mu.Unlock()
	third, _ := b.Token(t.Context(), "p", []Client{c}, ask(c), noPrompt)
	fourth, err := b.Token(t.Context(), "p", []Client{c}, ask(c), noPrompt)
	if err != nil || third.AccessToken != fourth.AccessToken || iss.count() != 3 {
		t.Fatalf("after a long-lived token: %+v then %+v, %v after %d requests; want it cached", third, fourth, err, iss.count())
	}
}

// TestScopes proves a plugin cannot ask for a scope its client is not
// granted (refused before any request), and that the scopes handed over
// are those the issuer granted when it says so.
func TestScopes(t *testing.T) {
	iss := newIssuer(t)
	b, c := New(nil), iss.client()
	_, err := b.Token(t.Context(), "p", []Client{c}, ask(c, "read", "admin"), noPrompt)
	if err == nil || !strings.Contains(err.Error(), `scope "admin" of client "mcphost-test" is not granted to plugin p`) {
		t.Fatalf("got %v, want scope admin refused", err)
	}
	if iss.count() != 0 {
		t.Fatalf("%d token requests for a refused scope, want none", iss.count())
	}
	iss.mu.Lock()
	iss.grant = func([]string) string { return "read" }
	iss.mu.Unlock()
	tok, err := b.Token(t.Context(), "p", []Client{c}, ask(c, "read", "write"), noPrompt)
	if err != nil || !slices.Equal(tok.Scopes, []string{"read"}) {
		t.Fatalf("got %+v, %v; want the scope the issuer granted, read", tok, err)
	}
}

// TestUnknownClient proves a client the operator did not grant the plugin
// is refused without a request, and one the issuer does not know fails
// with the issuer's status and error code only: the secret, which this
// issuer echoes in its answer, is in no error.
func TestUnknownClient(t *testing.T) {
	iss := newIssuer(t)
	b, c := New(nil), iss.client()
	other := c
	other.ClientID = "someone-else"
	_, err := b.Token(t.Context(), "p", []Client{c}, ask(other), noPrompt)
	if err == nil || !strings.Contains(err.Error(), `the client "someone-else" of `+c.TokenURL+` is not granted to plugin p`) || iss.count() != 0 {
		t.Fatalf("ungranted client: %v after %d requests; want refused without a request", err, iss.count())
	}
	elsewhere := c
	elsewhere.TokenURL = "https://attacker.example/token"
	if _, err := b.Token(t.Context(), "p", []Client{c}, ask(elsewhere), noPrompt); err == nil || iss.count() != 0 {
		t.Fatalf("another endpoint: %v; want refused", err)
	}
	// A client_secret the plugin sends is ignored.
	in, _ := json.Marshal(map[string]any{"client_id": c.ClientID, "token_endpoint_url": c.TokenURL, "client_secret": "from-the-plugin"})
	wrong := c
	wrong.ClientSecret = secret + "-but-wrong"
	for _, style := range []string{"", "basic", "body"} {
		wrong.AuthStyle = style
		_, err = b.Token(t.Context(), "p", []Client{wrong}, in, noPrompt)
		if err == nil || !strings.Contains(err.Error(), "the token endpoint answered 401 Unauthorized: invalid_client") {
			t.Fatalf("auth_style %q: got %v, want the issuer's status and code", style, err)
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "from-the-plugin") {
			t.Fatalf("auth_style %q: the error shows a secret: %v", style, err)
		}
	}
	// A failure is not cached: the right secret then gets a token.
	if _, err := b.Token(t.Context(), "p", []Client{c}, in, noPrompt); err != nil {
		t.Fatalf("the right secret after a failure: %v", err)
	}
}

// TestBadInput proves input that is not hyper-mcp's OauthCredentials is
// refused.
func TestBadInput(t *testing.T) {
	if _, err := New(nil).Token(t.Context(), "p", nil, []byte("{"), noPrompt); err == nil || !strings.Contains(err.Error(), "bad input") {
		t.Fatalf("got %v, want bad input", err)
	}
}

// TestAnswerWithoutEndIsBounded proves a token or device authorization
// endpoint that answers with a body without end is read up to
// maxAnswerBytes: the call fails at once, saying so, and the broker hangs
// up, rather than reading on or holding the connection open (x/oauth2
// leaves a device authorization answer unclosed) until the client's 15 s
// timeout.
func TestAnswerWithoutEndIsBounded(t *testing.T) {
	t.Parallel()
	for name, path := range map[string]string{"token endpoint": "/token", "device authorization endpoint": "/device"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var written atomic.Int64
			hungUp := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer close(hungUp)
				w.Header().Set("Content-Type", "application/json")
				chunk := `{"access_token": "` + strings.Repeat("a", 64<<10)
				for range 1 << 10 { // 64 MiB at most: the broker hangs up well before
					n, err := io.WriteString(w, chunk)
					written.Add(int64(n))
					if err != nil {
						return
					}
				}
			}))
			t.Cleanup(srv.Close)
			c := Client{TokenURL: srv.URL + "/token", ClientID: clientID, ClientSecret: secret, AuthStyle: "basic"}
			if path == "/device" {
				c.DeviceAuthURL = srv.URL + "/device"
			}
			tok, err := New(nil).Token(t.Context(), "p", []Client{c}, ask(c), noPrompt)
			if want := fmt.Sprintf("the answer of %s%s runs past %d bytes", srv.URL, path, maxAnswerBytes); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("got %+v, %v; want %q", tok, err, want)
			}
			select {
			case <-hungUp:
			case <-time.After(5 * time.Second):
				t.Fatalf("the broker still holds the connection 5 s after the call, the endpoint having written %d bytes", written.Load())
			}
			if got := written.Load(); got > 16<<20 {
				t.Errorf("the endpoint wrote %d bytes before the broker hung up, want at most 16 MiB", got)
			}
		})
	}
}
