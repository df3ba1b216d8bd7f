package e2e

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// TestAnotherSubjectCannotUseYourSession: with [auth] mode = "jwt" and two
// valid tokens for alice and bob, bob presenting alice's Mcp-Session-Id is
// answered 404, as for an unknown session, and alice's session goes on.
// Nor does bob, in his own session, reach what alice's calls left in a
// plugin instance: plugins are isolated per user when clients
// authenticate.
func TestAnotherSubjectCannotUseYourSession(t *testing.T) {
	issuer := newJWTIssuer(t)
	tokenFor := func(subject string) string { return issuer.token(t, subject) }
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	f := newFixture(t, issuer.auth+"\n[telemetry]\naudit = \"file\"\naudit_file = \""+auditFile+"\"\n", "plugins/examples/tools")
	if err := os.WriteFile(filepath.Join(f.plugins, "memo.js"), []byte(memoPlugin), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := f.start(t)
	url := srv.url

	alice := &httpPeer{url: url, token: tokenFor("alice")}
	resp := alice.post(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"alice","version":"1"}}}`)
	resp.Body.Close()
	alice.session = resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || alice.session == "" {
		t.Fatalf("alice's initialize: %s", resp.Status)
	}
	alice.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	bob := &httpPeer{url: url, token: tokenFor("bob"), session: alice.session}
	for _, msg := range []string{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"jsonrpc":"2.0","method":"notifications/initialized"}`} {
		resp := bob.post(t, msg)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("bob with alice's session id: %s, want 404", resp.Status)
		}
	}
	if got := alice.request(t, 2, "tools/list", nil); len(got) == 0 || got[len(got)-1]["result"] == nil {
		t.Fatalf("alice's own session after bob's attempts: %v", got)
	}
	// The audit trail records bob's attempts, and a forged token's.
	forged := &httpPeer{url: url, token: tokenFor("mallory")[:20] + "forged"}
	resp = forged.post(t, `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a forged token: %s, want 401", resp.Status)
	}
	raw, err := os.ReadFile(auditFile)
	if err != nil {
		t.Fatal(err)
	}
	owners, bad := 0, 0
	for line := range strings.Lines(string(raw)) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("an audit record is not JSON: %q", line)
		}
		switch rec["reason"] {
		case "session_owner":
			owners++
			if rec["subject"] != "bob" || rec["remote"] == "" {
				t.Errorf("the record of bob's attempt: %v", rec)
			}
		case "bad_token":
			bad++
		}
	}
	if owners != 2 || bad != 1 {
		t.Errorf("denial records: %d of another subject's session (want 2), %d of a bad token (want 1):\n%s", owners, bad, raw)
	}

	text := func(p *httpPeer, id int, tool string, args map[string]any) string {
		t.Helper()
		msgs := p.request(t, id, "tools/call", map[string]any{"name": tool, "arguments": args})
		content, _ := resultOf(t, msgs)["content"].([]any)
		if len(content) == 0 {
			t.Fatalf("%s: %v", tool, msgs)
		}
		return content[0].(map[string]any)["text"].(string)
	}
	text(alice, 3, "remember", map[string]any{"text": "alice-secret"})
	bob.session = ""
	resp = bob.post(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bob","version":"1"}}}`)
	resp.Body.Close()
	bob.session = resp.Header.Get("Mcp-Session-Id")
	bob.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i := range 8 { // more calls than instances: none reaches alice's
		if got := text(bob, 10+i, "recall", map[string]any{}); got == "alice-secret" {
			t.Fatalf("bob's call %d read what alice's call left in the plugin", i)
		}
	}
	if got := text(alice, 4, "recall", map[string]any{}); got != "alice-secret" {
		t.Errorf("alice's own instance lost her text: %q", got)
	}

	// No JWT, valid or forged, reaches what the server tells the
	// operator: its log, the audit trail, /metrics, the status page (which
	// the operator's token opens).
	raw, err = os.ReadFile(auditFile)
	if err != nil {
		t.Fatal(err)
	}
	operator := issuer.token(t, "ops", "mcphost:operator")
	told := operatorViews(t, url, operator)
	told["the server log"], told["the audit trail"] = srv.log.String(), string(raw)
	for where, text := range told {
		for who, token := range map[string]string{"alice's": alice.token, "bob's": bob.token, "the forged": forged.token, "the operator's": operator} {
			if strings.Contains(text, token) || strings.Contains(text, token[strings.LastIndex(token, ".")+1:]) {
				t.Errorf("%s holds %s token (or its signature)", where, who)
			}
		}
	}
}

// jwtIssuer stands in for an OAuth authorization server: it publishes a
// JWK set and signs access tokens for the resource of [auth].
type jwtIssuer struct {
	key *rsa.PrivateKey
	// auth is the [auth] table of a server that takes its tokens.
	auth string
}

// The resource and issuer of jwtIssuer's tokens.
const jwtResource, jwtIssuerURL = "http://127.0.0.1:8080/mcp", "https://issuer.example"

// newJWTIssuer starts an issuer's JWK set endpoint, which ends with the
// test.
func newJWTIssuer(t *testing.T) *jwtIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{
			"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256",
			"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes()),
		}}})
	}))
	t.Cleanup(jwks.Close)
	return &jwtIssuer{key: key, auth: "[auth]\nmode = \"jwt\"\nresource = \"" + jwtResource + "\"\nissuer = \"" + jwtIssuerURL + "\"\njwks_url = \"" + jwks.URL + "\"\n"}
}

// token returns an access token for subject, valid for an hour, holding
// scopes (a scope claim) when there are any.
func (i *jwtIssuer) token(t *testing.T, subject string, scopes ...string) string {
	t.Helper()
	claims := jwt.MapClaims{
		"iss": jwtIssuerURL, "sub": subject, "aud": jwtResource,
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(),
	}
	if len(scopes) > 0 {
		claims["scope"] = strings.Join(scopes, " ")
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = "k1"
	s, err := tok.SignedString(i.key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// memoPlugin keeps the last text it was given in a global of its instance.
const memoPlugin = `/* mcphost.manifest
{"name": "memo", "version": "0.1.0", "description": "Remembers the last text."}
*/
let last = '';
mcphost.tool('remember', {
  description: 'Keeps a text.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
}, ({ text }) => { last = text; return 'kept'; });
mcphost.tool('recall', {
  description: 'Returns the text kept last.',
  inputSchema: { type: 'object' },
}, () => last || '(nothing)');
`
