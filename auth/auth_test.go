package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/internal/testrig/syncbuf"
)

const (
	resource    = "https://mcp.example.com/mcp"
	issuer      = "https://auth.example.com"
	metadataURL = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
	rsaKid      = "rsa-1"
	ecKid       = "ec-1"
)

// testKeys are the signing keys of the tests, generated once: RSA key
// generation is slow under the race detector.
var testKeys = sync.OnceValue(func() struct {
	rsa *rsa.PrivateKey
	ec  *ecdsa.PrivateKey
} {
	r, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	e, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return struct {
		rsa *rsa.PrivateKey
		ec  *ecdsa.PrivateKey
	}{r, e}
})

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func rsaJWK(kid string, k *rsa.PublicKey) jwk {
	return jwk{Kty: "RSA", Kid: kid, Use: "sig", N: b64(k.N.Bytes()), E: b64(big.NewInt(int64(k.E)).Bytes())}
}

func ecJWK(kid string, k *ecdsa.PublicKey) jwk {
	b, err := k.Bytes() // 0x04 || x || y
	if err != nil {
		panic(err)
	}
	return jwk{Kty: "EC", Kid: kid, Crv: "P-256", X: b64(b[1:33]), Y: b64(b[33:])}
}

// jwksServer serves a JWK set that tests may change, counting requests.
type jwksServer struct {
	*httptest.Server
	hits   atomic.Int32
	status atomic.Int32
	body   atomic.Pointer[[]byte]
}

func newJWKSServer(t *testing.T, keys ...jwk) *jwksServer {
	t.Helper()
	s := &jwksServer{}
	s.status.Store(http.StatusOK)
	s.set(keys...)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(int(s.status.Load()))
		_, _ = w.Write(*s.body.Load())
	}))
	t.Cleanup(s.Close)
	return s
}

// set replaces the served keys.
func (s *jwksServer) set(keys ...jwk) {
	b, err := json.Marshal(map[string][]jwk{"keys": keys})
	if err != nil {
		panic(err)
	}
	s.body.Store(&b)
}

// bothKeys returns the JWKs of the RSA and the EC test keys.
func bothKeys() []jwk {
	k := testKeys()
	return []jwk{rsaJWK(rsaKid, &k.rsa.PublicKey), ecJWK(ecKid, &k.ec.PublicKey)}
}

func jwtConfig(jwksURL string) config.AuthConfig {
	return config.AuthConfig{
		Mode:            config.AuthJWT,
		Resource:        resource,
		Issuer:          issuer,
		JWKSURL:         jwksURL,
		Audience:        resource,
		Scopes:          []string{"mcp"},
		ScopesSupported: []string{"mcp", "files:read"},
	}
}

// newLogger returns a debug logger writing to a buffer.
func newLogger() (*slog.Logger, *syncbuf.Buffer) {
	var buf syncbuf.Buffer
	return slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), &buf
}

func newAuth(t *testing.T, cfg config.AuthConfig, logger *slog.Logger) *Authenticator {
	t.Helper()
	a, err := New(cfg, logger)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a
}

// claimsWith returns the claims of a valid token, changed by changes: a nil
// value removes the claim.
func claimsWith(changes jwt.MapClaims) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{
		"iss":   issuer,
		"aud":   resource,
		"sub":   "alice",
		"iat":   now.Unix(),
		"exp":   now.Add(time.Hour).Unix(),
		"scope": "mcp files:read",
	}
	for k, v := range changes {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

// sign returns a token of claims signed with key by method, with kid in
// its header unless it is "".
func sign(t *testing.T, method jwt.SigningMethod, key any, kid string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// seen is what the handler behind the middleware saw of a request.
type seen struct {
	called        bool
	subject       string
	scopes        []string
	authorization []string
}

// serve sends GET /mcp with the given Authorization header values through
// a's middleware.
func serve(a *Authenticator, authorization ...string) (*httptest.ResponseRecorder, seen) {
	var s seen
	h := a.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s = seen{called: true, subject: Subject(r.Context()), scopes: Scopes(r.Context()), authorization: r.Header.Values("Authorization")}
	}))
	r := httptest.NewRequest(http.MethodGet, "/mcp", nil)
	for _, v := range authorization {
		r.Header.Add("Authorization", v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w, s
}

func TestJWT(t *testing.T) {
	keys := testKeys()
	srv := newJWKSServer(t, bothKeys()...)
	logger, logs := newLogger()
	a := newAuth(t, jwtConfig(srv.URL), logger)
	var tokens []string // every token sent, to check the logs for them

	t.Run("valid", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			method jwt.SigningMethod
			key    any
			kid    string
			claims jwt.MapClaims
		}{
			{"RS256", jwt.SigningMethodRS256, keys.rsa, rsaKid, claimsWith(nil)},
			{"PS384", jwt.SigningMethodPS384, keys.rsa, rsaKid, claimsWith(nil)},
			{"ES256", jwt.SigningMethodES256, keys.ec, ecKid, claimsWith(nil)},
			{"scp string", jwt.SigningMethodRS256, keys.rsa, rsaKid, claimsWith(jwt.MapClaims{"scope": nil, "scp": "mcp"})},
			{"scp array", jwt.SigningMethodRS256, keys.rsa, rsaKid, claimsWith(jwt.MapClaims{"scope": nil, "scp": []string{"x", "mcp"}})},
			{"audience list", jwt.SigningMethodES256, keys.ec, ecKid, claimsWith(jwt.MapClaims{"aud": []string{"other", resource}})},
			{"expired within leeway", jwt.SigningMethodRS256, keys.rsa, rsaKid, claimsWith(jwt.MapClaims{"exp": time.Now().Add(-5 * time.Second).Unix()})},
		} {
			token := sign(t, tc.method, tc.key, tc.kid, tc.claims)
			tokens = append(tokens, token)
			w, s := serve(a, "Bearer "+token)
			if w.Code != http.StatusOK || !s.called {
				t.Errorf("%s: status %d, handler called %v; want 200 and the handler: %s %s",
					tc.name, w.Code, s.called, w.Header().Get("WWW-Authenticate"), w.Body)
				continue
			}
			if s.subject != "alice" {
				t.Errorf("%s: Subject = %q, want alice", tc.name, s.subject)
			}
			if tc.name == "scp array" && !slices.Equal(s.scopes, []string{"x", "mcp"}) {
				t.Errorf("%s: Scopes = %q, want the token's [x mcp]", tc.name, s.scopes)
			}
			if len(s.authorization) > 0 {
				t.Errorf("%s: the handler saw Authorization %q", tc.name, s.authorization)
			}
		}
	})

	t.Run("scheme case", func(t *testing.T) {
		token := sign(t, jwt.SigningMethodRS256, keys.rsa, rsaKid, claimsWith(nil))
		tokens = append(tokens, token)
		if w, _ := serve(a, "bearer "+token); w.Code != http.StatusOK {
			t.Errorf("lower-case scheme: status %d, want 200", w.Code)
		}
	})

	t.Run("missing", func(t *testing.T) {
		want := `Bearer resource_metadata="` + metadataURL + `", scope="mcp"`
		for _, authz := range [][]string{nil, {"Basic YWxpY2U6c2VjcmV0"}} {
			w, s := serve(a, authz...)
			if w.Code != http.StatusUnauthorized || s.called {
				t.Errorf("Authorization %q: status %d, handler called %v; want 401", authz, w.Code, s.called)
			}
			if got := w.Header().Get("WWW-Authenticate"); got != want {
				t.Errorf("Authorization %q: WWW-Authenticate = %q, want %q", authz, got, want)
			}
		}
	})

	t.Run("malformed", func(t *testing.T) {
		valid := sign(t, jwt.SigningMethodRS256, keys.rsa, rsaKid, claimsWith(nil))
		tokens = append(tokens, valid)
		for _, authz := range [][]string{{"Bearer"}, {"Bearer  "}, {"Bearer a b"}, {"Bearer " + valid, "Bearer " + valid}} {
			w, s := serve(a, authz...)
			if w.Code != http.StatusBadRequest || s.called {
				t.Errorf("Authorization %q: status %d, handler called %v; want 400", authz, w.Code, s.called)
			}
			if got := w.Header().Get("WWW-Authenticate"); !strings.HasPrefix(got, `Bearer error="invalid_request", `) {
				t.Errorf("Authorization %q: WWW-Authenticate = %q, want invalid_request", authz, got)
			}
		}
	})

	t.Run("invalid", func(t *testing.T) {
		now := time.Now()
		valid := sign(t, jwt.SigningMethodRS256, keys.rsa, rsaKid, claimsWith(nil))
		other := sign(t, jwt.SigningMethodRS256, keys.rsa, rsaKid, claimsWith(jwt.MapClaims{"sub": "mallory"}))
		vp, op := strings.Split(valid, "."), strings.Split(other, ".")
		pub, err := x509.MarshalPKIXPublicKey(&keys.rsa.PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
		for _, tc := range []struct {
			name, token, desc string
		}{
			{"expired", sign(t, jwt.SigningMethodRS256, keys.rsa, rsaKid, claimsWith(jwt.MapClaims{
				"iat": now.Add(-2 * time.Hour).Unix(), "exp": now.Add(-time.Hour).Unix()})), "token expired"},
			{"not yet valid", sign(t, jwt.SigningMethodRS256, keys.rsa, rsaKid, claimsWith(jwt.MapClaims{
				"nbf": now.Add(time.Hour).Unix()})), "token not valid yet"},
			{"issued in the future", sign(t, jwt.SigningMethodES256, keys.ec, ecKid, claimsWith(jwt.MapClaims{
				"iat": now.Add(time.Hour).Unix()})), "token issued in the future"},
			{"wrong issuer", sign(t, jwt.SigningMethodRS256, keys.rsa, rsaKid, claimsWith(jwt.MapClaims{
				"iss": "https://evil.example.com"})), "wrong issuer"},
			{"no issuer", sign(t, jwt.SigningMethodRS256, keys.rsa, rsaKid, claimsWith(jwt.MapClaims{"iss": nil})),
				"token lacks a required claim"},
			{"wrong audience", sign(t, jwt.SigningMethodRS256, keys.rsa, rsaKid, claimsWith(jwt.MapClaims{
				"aud": "https://other.example.com/mcp"})), "wrong audience"},
			{"wrong audience list", sign(t, jwt.SigningMethodES256, keys.ec, ecKid, claimsWith(jwt.MapClaims{
				"aud": []string{"a", "b"}})), "wrong audience"},
			{"no audience", sign(t, jwt.SigningMethodRS256, keys.rsa, rsaKid, claimsWith(jwt.MapClaims{"aud": nil})),
				"token lacks a required claim"},
			{"no expiry", sign(t, jwt.SigningMethodRS256, keys.rsa, rsaKid, claimsWith(jwt.MapClaims{"exp": nil})),
				"token lacks a required claim"},
			{"no subject", sign(t, jwt.SigningMethodRS256, keys.rsa, rsaKid, claimsWith(jwt.MapClaims{"sub": nil})),
				"token has no subject"},
			{"bad signature", vp[0] + "." + op[1] + "." + vp[2], "invalid signature or signing algorithm"},
			{"alg none", sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, rsaKid, claimsWith(nil)),
				"invalid signature or signing algorithm"},
			{"HS256 with the public key", sign(t, jwt.SigningMethodHS256, pubPEM, rsaKid, claimsWith(nil)),
				"invalid signature or signing algorithm"},
			{"unknown kid", sign(t, jwt.SigningMethodRS256, keys.rsa, "rsa-2", claimsWith(nil)), "unknown signing key"},
			{"ES256 with an RSA kid", sign(t, jwt.SigningMethodES256, keys.ec, rsaKid, claimsWith(nil)),
				"signing algorithm does not match the key"},
			{"RS256 with an EC kid", sign(t, jwt.SigningMethodRS256, keys.rsa, ecKid, claimsWith(nil)),
				"signing algorithm does not match the key"},
			{"no kid with two keys", sign(t, jwt.SigningMethodRS256, keys.rsa, "", claimsWith(nil)), "unknown signing key"},
			{"bad scope claim", sign(t, jwt.SigningMethodRS256, keys.rsa, rsaKid, claimsWith(jwt.MapClaims{"scope": 7})),
				"malformed token"},
			{"not a JWT", "not-a-jwt", "malformed token"},
		} {
			tokens = append(tokens, tc.token)
			w, s := serve(a, "Bearer "+tc.token)
			if w.Code != http.StatusUnauthorized || s.called {
				t.Errorf("%s: status %d, handler called %v; want 401", tc.name, w.Code, s.called)
				continue
			}
			want := `Bearer error="invalid_token", error_description="` + tc.desc +
				`", resource_metadata="` + metadataURL + `", scope="mcp"`
			if got := w.Header().Get("WWW-Authenticate"); got != want {
				t.Errorf("%s: WWW-Authenticate =\n%s\nwant\n%s", tc.name, got, want)
			}
		}
	})

	t.Run("insufficient scope", func(t *testing.T) {
		want := `Bearer error="insufficient_scope", error_description="the token lacks a required scope", ` +
			`resource_metadata="` + metadataURL + `", scope="mcp"`
		for _, c := range []jwt.MapClaims{
			claimsWith(jwt.MapClaims{"scope": "files:read mcp:admin"}),
			claimsWith(jwt.MapClaims{"scope": nil}),
			claimsWith(jwt.MapClaims{"scope": ""}),
		} {
			token := sign(t, jwt.SigningMethodRS256, keys.rsa, rsaKid, c)
			tokens = append(tokens, token)
			w, s := serve(a, "Bearer "+token)
			if w.Code != http.StatusForbidden || s.called {
				t.Errorf("scope %v: status %d, handler called %v; want 403", c["scope"], w.Code, s.called)
			}
			if got := w.Header().Get("WWW-Authenticate"); got != want {
				t.Errorf("scope %v: WWW-Authenticate =\n%s\nwant\n%s", c["scope"], got, want)
			}
		}
	})

	if srv.hits.Load() > 2 {
		t.Errorf("the JWK set was fetched %d times; want once, and once more for the unknown kid", srv.hits.Load())
	}
	checkNotLogged(t, logs.String(), tokens...)
	if !strings.Contains(logs.String(), "reason=\"token expired\"") {
		t.Errorf("the logs do not give the reasons of refusals:\n%s", logs)
	}
}

// checkNotLogged fails when logs contain a token or its signature.
func checkNotLogged(t *testing.T, logs string, tokens ...string) {
	t.Helper()
	for _, token := range tokens {
		sig := token[strings.LastIndexByte(token, '.')+1:]
		if strings.Contains(logs, token) || len(sig) > 8 && strings.Contains(logs, sig) {
			t.Errorf("the logs contain a token:\n%s", logs)
			return
		}
	}
}

func TestBearer(t *testing.T) {
	const secret = "s3cr3t-t0ken-0123456789abcdef"
	t.Setenv("MCPHOST_TEST_TOKEN", secret)
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logger, logs := newLogger()
	for _, cfg := range []config.AuthConfig{
		{Mode: config.AuthBearer, Resource: "http://127.0.0.1:8080/mcp", TokenEnv: "MCPHOST_TEST_TOKEN"},
		{Mode: config.AuthBearer, Resource: "http://127.0.0.1:8080/mcp", TokenFile: file},
	} {
		a := newAuth(t, cfg, logger)
		w, s := serve(a, "Bearer "+secret)
		if w.Code != http.StatusOK || !s.called || s.subject != "bearer" || len(s.authorization) > 0 {
			t.Errorf("%+v: right token: status %d, seen %+v; want 200, subject bearer, no Authorization", cfg, w.Code, s)
		}
		challenge := `Bearer resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"`
		w, s = serve(a)
		if w.Code != http.StatusUnauthorized || s.called || w.Header().Get("WWW-Authenticate") != challenge {
			t.Errorf("no token: status %d, WWW-Authenticate %q; want 401, %q", w.Code, w.Header().Get("WWW-Authenticate"), challenge)
		}
		for _, wrong := range []string{secret + "x", strings.ToUpper(secret), "s3cr3t-t0ken-0123456789abcdeF", "short"} {
			w, s = serve(a, "Bearer "+wrong)
			want := `Bearer error="invalid_token", error_description="invalid token", ` + challenge[len("Bearer "):]
			if w.Code != http.StatusUnauthorized || s.called || w.Header().Get("WWW-Authenticate") != want {
				t.Errorf("wrong token %q: status %d, WWW-Authenticate %q; want 401, %q", wrong, w.Code, w.Header().Get("WWW-Authenticate"), want)
			}
		}
	}
	checkNotLogged(t, logs.String(), secret)
}

func TestBearerSecretErrors(t *testing.T) {
	dir := t.TempDir()
	short, spaced := "tooShort123", "a token with spaces in it"
	t.Setenv("MCPHOST_TEST_SHORT", short)
	t.Setenv("MCPHOST_TEST_SPACED", spaced)
	t.Setenv("MCPHOST_TEST_EMPTY", "  \n")
	shortFile := filepath.Join(dir, "short")
	if err := os.WriteFile(shortFile, []byte(short), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		cfg  config.AuthConfig
		want string
	}{
		{config.AuthConfig{TokenEnv: "MCPHOST_TEST_UNSET"}, "no bearer token in environment variable MCPHOST_TEST_UNSET"},
		{config.AuthConfig{TokenEnv: "MCPHOST_TEST_EMPTY"}, "no bearer token in environment variable MCPHOST_TEST_EMPTY"},
		{config.AuthConfig{TokenEnv: "MCPHOST_TEST_SHORT"}, "the bearer token in environment variable MCPHOST_TEST_SHORT is shorter than 16 characters"},
		{config.AuthConfig{TokenEnv: "MCPHOST_TEST_SPACED"}, "the bearer token in environment variable MCPHOST_TEST_SPACED has characters"},
		{config.AuthConfig{TokenFile: shortFile}, "the bearer token in file " + shortFile + " is shorter"},
		{config.AuthConfig{TokenFile: missing}, "reading the bearer token: open " + missing},
		{config.AuthConfig{}, "needs one of token_env and token_file"},
		{config.AuthConfig{TokenEnv: "MCPHOST_TEST_SHORT", TokenFile: shortFile}, "needs one of token_env and token_file"},
	} {
		tc.cfg.Mode, tc.cfg.Resource = config.AuthBearer, resource
		a, err := New(tc.cfg, nil)
		if err == nil {
			t.Errorf("New(%+v) = %v, nil; want an error", tc.cfg, a)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %q, want it to contain %q", tc.cfg, err, tc.want)
		}
		if strings.Contains(err.Error(), short) || strings.Contains(err.Error(), spaced) {
			t.Errorf("New(%+v) = %q: the error shows the token", tc.cfg, err)
		}
	}
}

func TestNone(t *testing.T) {
	for _, mode := range []config.AuthMode{config.AuthNone, ""} {
		a := newAuth(t, config.AuthConfig{Mode: mode}, nil)
		w, s := serve(a, "Bearer some-token")
		if w.Code != http.StatusOK || !s.called || s.subject != "" || len(s.authorization) > 0 {
			t.Errorf("mode %q: status %d, seen %+v; want 200, no subject, no Authorization", mode, w.Code, s)
		}
		if paths := a.MetadataPaths(); len(paths) > 0 {
			t.Errorf("mode %q: MetadataPaths() = %q, want none", mode, paths)
		}
	}
	if _, err := New(config.AuthConfig{Mode: "oauth"}, nil); err == nil || !strings.Contains(err.Error(), `unknown mode "oauth"`) {
		t.Errorf(`New(mode "oauth") = %v, want an unknown mode error`, err)
	}
}

func TestNewErrors(t *testing.T) {
	jwtCfg := jwtConfig("https://auth.example.com/jwks")
	jwtCfg.Issuer = ""
	if _, err := New(jwtCfg, nil); err == nil || !strings.Contains(err.Error(), "needs issuer, jwks_url and audience") {
		t.Errorf("jwt without issuer: %v", err)
	}
	jwtCfg = jwtConfig("https://auth.example.com/jwks")
	jwtCfg.Resource = "mcp.example.com/mcp"
	if _, err := New(jwtCfg, nil); err == nil || !strings.Contains(err.Error(), `resource "mcp.example.com/mcp" is not an absolute URL`) {
		t.Errorf("relative resource: %v", err)
	}
}

func TestSubjectWithoutAuthentication(t *testing.T) {
	if s := Scopes(httptest.NewRequest(http.MethodGet, "/", nil).Context()); s != nil {
		t.Errorf("Scopes() = %q, want none", s)
	}
	if s := Subject(httptest.NewRequest(http.MethodGet, "/", nil).Context()); s != "" {
		t.Errorf("Subject() = %q, want empty", s)
	}
}

func TestMetadata(t *testing.T) {
	a := newAuth(t, jwtConfig("https://auth.example.com/jwks"), nil)
	paths := []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"}
	if got := a.MetadataPaths(); !reflect.DeepEqual(got, paths) {
		t.Errorf("MetadataPaths() = %q, want %q", got, paths)
	}
	want := map[string]any{
		"resource":                 resource,
		"authorization_servers":    []any{issuer},
		"scopes_supported":         []any{"mcp", "files:read"},
		"bearer_methods_supported": []any{"header"},
	}
	h := a.MetadataHandler()
	for _, p := range paths {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, p, nil))
		if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("GET %s: status %d, Content-Type %q", p, w.Code, w.Header().Get("Content-Type"))
		}
		if w.Header().Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("GET %s: no Access-Control-Allow-Origin: *", p)
		}
		var got map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("GET %s: %s (%v), want %v", p, w.Body, err, want)
		}
	}
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{http.MethodHead, paths[1], http.StatusOK},
		{http.MethodOptions, paths[1], http.StatusNoContent},
		{http.MethodPost, paths[0], http.StatusMethodNotAllowed},
		{http.MethodGet, "/.well-known/oauth-protected-resource/other", http.StatusNotFound},
		{http.MethodGet, "/mcp", http.StatusNotFound},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
		if w.Code != tc.status {
			t.Errorf("%s %s: status %d, want %d", tc.method, tc.path, w.Code, tc.status)
		}
	}

	// A static token has no authorization server or scopes to advertise;
	// a resource without a path has its metadata at the root only.
	t.Setenv("MCPHOST_TEST_TOKEN", "0123456789abcdef0123")
	a = newAuth(t, config.AuthConfig{Mode: config.AuthBearer, Resource: "https://mcp.example.com", TokenEnv: "MCPHOST_TEST_TOKEN"}, nil)
	if got := a.MetadataPaths(); !reflect.DeepEqual(got, paths[:1]) {
		t.Errorf("bearer: MetadataPaths() = %q, want %q", got, paths[:1])
	}
	w := httptest.NewRecorder()
	a.MetadataHandler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, paths[0], nil))
	if got, want := w.Body.String(), `{"resource":"https://mcp.example.com","bearer_methods_supported":["header"]}`; got != want {
		t.Errorf("bearer metadata = %s, want %s", got, want)
	}
	w, _ = serve(a)
	if got, want := w.Header().Get("WWW-Authenticate"), `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource"`; got != want {
		t.Errorf("bearer challenge = %q, want %q", got, want)
	}
}

// TestJWTConfigFromFile checks that the [auth] table as config loads it
// makes a working Authenticator.
func TestJWTConfigFromFile(t *testing.T) {
	keys := testKeys()
	srv := newJWKSServer(t, bothKeys()...)
	path := filepath.Join(t.TempDir(), "mcphost.toml")
	src := "[auth]\nmode = \"jwt\"\nresource = \"" + resource + "\"\nissuer = \"" + issuer + "\"\njwks_url = \"" + srv.URL + "\"\nscopes = [\"mcp\"]\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	a := newAuth(t, cfg.Auth, nil)
	token := sign(t, jwt.SigningMethodES256, keys.ec, ecKid, claimsWith(nil))
	if w, s := serve(a, "Bearer "+token); w.Code != http.StatusOK || s.subject != "alice" {
		t.Errorf("status %d, subject %q; want 200, alice", w.Code, s.subject)
	}
}

// BearerTokenIs lets in a request bearing the token under the Bearer
// scheme in any case, and nothing else: another token, another scheme, a
// malformed header, two headers; a token that cannot be a bearer token is
// refused at once.
func TestBearerTokenIs(t *testing.T) {
	allow, err := BearerTokenIs("operator-token-0123")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		headers []string
		want    bool
	}{
		{[]string{"Bearer operator-token-0123"}, true},
		{[]string{"bearer operator-token-0123"}, true},
		{nil, false},
		{[]string{"Bearer operator-token-012"}, false},
		{[]string{"Bearer operator-token-01234"}, false},
		{[]string{"Basic operator-token-0123"}, false},
		{[]string{"Bearer operator token"}, false},
		{[]string{"Bearer operator-token-0123", "Bearer operator-token-0123"}, false},
	} {
		r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		for _, h := range c.headers {
			r.Header.Add("Authorization", h)
		}
		if got := allow(r); got != c.want {
			t.Errorf("Authorization %q: allowed %v, want %v", c.headers, got, c.want)
		}
	}
	if _, err := BearerTokenIs("has spaces in it"); err == nil {
		t.Error("a token with spaces: no error")
	}
}
