package auth

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// keysOf returns the key set of a's JWT verifier.
func keysOf(a *Authenticator) *keySet { return a.verifier.(*jwtVerifier).keys }

func TestJWKSRotation(t *testing.T) {
	keys := testKeys()
	both := bothKeys()
	srv := newJWKSServer(t, both[0])
	a := newAuth(t, jwtConfig(srv.URL), nil)
	keysOf(a).minRefresh = 0
	rsaToken := sign(t, jwt.SigningMethodRS256, keys.rsa, rsaKid, claimsWith(nil))
	ecToken := sign(t, jwt.SigningMethodES256, keys.ec, ecKid, claimsWith(nil))

	for i, step := range []struct {
		token  string
		rotate bool // serve both keys from this step on
		status int
		hits   int32
	}{
		{rsaToken, false, http.StatusOK, 1},                                    // first use fetches
		{rsaToken, false, http.StatusOK, 1},                                    // cached
		{ecToken, false, http.StatusUnauthorized, 2},                           // unknown kid: fetched again, still unknown
		{ecToken, true, http.StatusOK, 3},                                      // fetched again, now known
		{ecToken, false, http.StatusOK, 3},                                     // cached
		{rsaToken, false, http.StatusOK, 3},                                    // cached
		{"", false, http.StatusUnauthorized, 3},                                // no token: no fetch
		{"x.y.z", false, http.StatusUnauthorized, 3},                           // malformed: no fetch
		{ecToken[:len(ecToken)-4] + "AAAA", false, http.StatusUnauthorized, 3}, // bad signature: no fetch
	} {
		if step.rotate {
			srv.set(both...)
		}
		var w *httptest.ResponseRecorder
		if step.token == "" {
			w, _ = serve(a)
		} else {
			w, _ = serve(a, "Bearer "+step.token)
		}
		if w.Code != step.status || srv.hits.Load() != step.hits {
			t.Errorf("step %d: status %d after %d fetches; want %d after %d (%s)",
				i, w.Code, srv.hits.Load(), step.status, step.hits, w.Header().Get("WWW-Authenticate"))
		}
	}
}

// TestJWKSRefreshBounded checks that tokens naming unknown keys, even many
// at once, make the set be fetched at most once per minRefresh.
func TestJWKSRefreshBounded(t *testing.T) {
	keys := testKeys()
	srv := newJWKSServer(t, bothKeys()...)
	a := newAuth(t, jwtConfig(srv.URL), nil)
	var wg sync.WaitGroup
	for i := range 20 {
		token := sign(t, jwt.SigningMethodRS256, keys.rsa, "unknown-"+string(rune('a'+i)), claimsWith(nil))
		wg.Go(func() {
			if w, _ := serve(a, "Bearer "+token); w.Code != http.StatusUnauthorized {
				t.Errorf("unknown kid: status %d, want 401", w.Code)
			}
		})
	}
	wg.Wait()
	if w, _ := serve(a, "Bearer "+sign(t, jwt.SigningMethodRS256, keys.rsa, rsaKid, claimsWith(nil))); w.Code != http.StatusOK {
		t.Errorf("known kid: status %d, want 200", w.Code)
	}
	if n := srv.hits.Load(); n != 1 {
		t.Errorf("the JWK set was fetched %d times, want 1", n)
	}
}

func TestJWKSUnavailable(t *testing.T) {
	keys := testKeys()
	srv := newJWKSServer(t, bothKeys()...)
	srv.status.Store(http.StatusInternalServerError)
	logger, logs := newLogger()
	a := newAuth(t, jwtConfig(srv.URL), logger)
	keysOf(a).minRefresh = 0
	token := sign(t, jwt.SigningMethodRS256, keys.rsa, rsaKid, claimsWith(nil))

	w, s := serve(a, "Bearer "+token)
	if w.Code != http.StatusServiceUnavailable || s.called {
		t.Errorf("JWK set unavailable: status %d, want 503", w.Code)
	}
	if !strings.Contains(logs.String(), "fetching the JWK set failed") || !strings.Contains(logs.String(), "500 Internal Server Error") {
		t.Errorf("the failed fetch is not logged:\n%s", logs)
	}

	// Once the set can be fetched, the token passes; a later failure
	// keeps the keys fetched before.
	srv.status.Store(http.StatusOK)
	if w, _ := serve(a, "Bearer "+token); w.Code != http.StatusOK {
		t.Errorf("JWK set back: status %d, want 200", w.Code)
	}
	srv.status.Store(http.StatusInternalServerError)
	if w, _ := serve(a, "Bearer "+sign(t, jwt.SigningMethodRS256, keys.rsa, "rsa-new", claimsWith(nil))); w.Code != http.StatusUnauthorized {
		t.Errorf("unknown kid while the set is unavailable: status %d, want 401", w.Code)
	}
	if w, _ := serve(a, "Bearer "+token); w.Code != http.StatusOK {
		t.Errorf("known kid while the set is unavailable: status %d, want 200", w.Code)
	}
	checkNotLogged(t, logs.String(), token)
}

func TestJWKSNoRedirects(t *testing.T) {
	keys := testKeys()
	target := newJWKSServer(t, bothKeys()...)
	redirect := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusFound))
	t.Cleanup(redirect.Close)
	a := newAuth(t, jwtConfig(redirect.URL), nil)
	if w, _ := serve(a, "Bearer "+sign(t, jwt.SigningMethodRS256, keys.rsa, rsaKid, claimsWith(nil))); w.Code != http.StatusServiceUnavailable {
		t.Errorf("redirected JWK set: status %d, want 503", w.Code)
	}
	if n := target.hits.Load(); n != 0 {
		t.Errorf("the redirect was followed %d times", n)
	}
}

// TestJWKSHostileSetIsBounded checks that a JWK set server is bounded by
// bytes and by count: a set longer than jwksMaxBytes, or of more than
// jwksMaxKeys keys (even one holding the token's key), is refused, and the
// log says which bound it broke.
func TestJWKSHostileSetIsBounded(t *testing.T) {
	keys := testKeys()
	many := bothKeys()
	for i := len(many); i <= jwksMaxKeys; i++ {
		many = append(many, ecJWK("ec-"+strconv.Itoa(i), &keys.ec.PublicKey))
	}
	token := sign(t, jwt.SigningMethodRS256, keys.rsa, rsaKid, claimsWith(nil))
	for name, c := range map[string]struct {
		set  func(*jwksServer)
		want string
	}{
		"longer than jwksMaxBytes": {func(s *jwksServer) {
			b := slices.Concat([]byte(`{"keys": [`), bytes.Repeat([]byte(" "), 2*jwksMaxBytes), []byte(`]}`))
			s.body.Store(&b)
		}, "the set is larger than " + strconv.Itoa(jwksMaxBytes) + " bytes"},
		"more than jwksMaxKeys keys": {func(s *jwksServer) { s.set(many...) },
			"the set holds " + strconv.Itoa(jwksMaxKeys+1) + " keys, more than " + strconv.Itoa(jwksMaxKeys)},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newJWKSServer(t)
			c.set(srv)
			logger, logs := newLogger()
			a := newAuth(t, jwtConfig(srv.URL), logger)
			if w, _ := serve(a, "Bearer "+token); w.Code != http.StatusServiceUnavailable {
				t.Errorf("status %d, want 503", w.Code)
			}
			if !strings.Contains(logs.String(), "fetching the JWK set failed") || !strings.Contains(logs.String(), c.want) {
				t.Errorf("the log does not say %q:\n%s", c.want, logs)
			}
		})
	}
}

func TestJWTWithoutKid(t *testing.T) {
	keys := testKeys()
	srv := newJWKSServer(t, bothKeys()[1])
	a := newAuth(t, jwtConfig(srv.URL), nil)
	if w, _ := serve(a, "Bearer "+sign(t, jwt.SigningMethodES256, keys.ec, "", claimsWith(nil))); w.Code != http.StatusOK {
		t.Errorf("token without kid, set of one key: status %d, want 200", w.Code)
	}
}

func TestParseJWKS(t *testing.T) {
	k := testKeys()
	good := bothKeys()
	restricted := rsaJWK("rs256-only", &k.rsa.PublicKey)
	restricted.Alg = "RS256"
	noKid := good[1]
	noKid.Kid = ""
	with := func(base jwk, change func(*jwk)) jwk {
		change(&base)
		return base
	}
	bad := []jwk{
		with(good[0], func(j *jwk) { j.Kid, j.N = "rsa-1024", b64(bytes.Repeat([]byte{0xff}, 128)) }),
		with(good[0], func(j *jwk) { j.Kid, j.E = "even-e", b64([]byte{2}) }),
		with(good[0], func(j *jwk) { j.Kid, j.E = "huge-e", b64([]byte{1, 0, 0, 0, 1}) }),
		with(good[0], func(j *jwk) { j.Kid, j.N = "bad-base64", "!!!" }),
		with(good[0], func(j *jwk) { j.Kid, j.Use = "enc", "enc" }),
		with(good[0], func(j *jwk) { j.Kid, j.Alg = "rsa-es256", "ES256" }),
		with(good[0], func(j *jwk) { j.Kid, j.Alg = "rsa-hs256", "HS256" }),
		with(good[1], func(j *jwk) { j.Kid, j.Crv = "p384", "P-384" }),
		with(good[1], func(j *jwk) { j.Kid, j.Y = "off-curve", b64(bytes.Repeat([]byte{1}, 32)) }),
		with(good[1], func(j *jwk) { j.Kid, j.X = "short-x", b64([]byte{1, 2, 3}) }),
		{Kty: "oct", Kid: "hmac"},
		{Kty: "OKP", Kid: "ed25519", Crv: "Ed25519"},
		with(good[1], func(j *jwk) {}), // duplicate kid
	}
	body, err := json.Marshal(map[string][]jwk{"keys": slices.Concat(good, []jwk{restricted, noKid}, bad)})
	if err != nil {
		t.Fatal(err)
	}
	keys, skipped, err := parseJWKS(body)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := slices.Sorted(maps.Keys(keys)), []string{"", ecKid, "rs256-only", rsaKid}; !slices.Equal(got, want) {
		t.Errorf("key IDs = %q, want %q", got, want)
	}
	if algs := keys["rs256-only"].algs; !slices.Equal(algs, []string{"RS256"}) {
		t.Errorf("algs of a key with alg RS256 = %q", algs)
	}
	if algs := keys[rsaKid].algs; !slices.Equal(algs, rsaAlgs) {
		t.Errorf("algs of an RSA key = %q, want %q", algs, rsaAlgs)
	}
	for _, j := range bad {
		if !strings.Contains(skipped.Error(), "key "+strconv.Quote(j.Kid)+": ") {
			t.Errorf("key %q is not reported skipped:\n%v", j.Kid, skipped)
		}
	}

	for _, body := range []string{`{"keys": []}`, `{}`, `[1]`, `{"keys": [{"kty": "oct", "kid": "a"}]}`} {
		if _, _, err := parseJWKS([]byte(body)); err == nil {
			t.Errorf("parseJWKS(%s) succeeded, want an error", body)
		}
	}
}

// TestJWKAlgRestriction checks that a key whose alg is RS256 verifies only
// RS256 tokens.
func TestJWKAlgRestriction(t *testing.T) {
	keys := testKeys()
	restricted := rsaJWK(rsaKid, &keys.rsa.PublicKey)
	restricted.Alg = "RS256"
	srv := newJWKSServer(t, restricted)
	a := newAuth(t, jwtConfig(srv.URL), nil)
	if w, _ := serve(a, "Bearer "+sign(t, jwt.SigningMethodRS256, keys.rsa, rsaKid, claimsWith(nil))); w.Code != http.StatusOK {
		t.Errorf("RS256: status %d, want 200", w.Code)
	}
	w, _ := serve(a, "Bearer "+sign(t, jwt.SigningMethodPS256, keys.rsa, rsaKid, claimsWith(nil)))
	if w.Code != http.StatusUnauthorized || !strings.Contains(w.Header().Get("WWW-Authenticate"), "signing algorithm does not match the key") {
		t.Errorf("PS256 against an RS256 key: status %d, %s", w.Code, w.Header().Get("WWW-Authenticate"))
	}
}
