package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Bounds of fetching a JWK set.
const (
	// jwksMinRefresh is the least time between two fetches, however many
	// tokens name unknown keys.
	jwksMinRefresh = 30 * time.Second
	// jwksMaxAge is how long fetched keys are used before the set is
	// fetched again.
	jwksMaxAge = time.Hour
	// jwksTimeout bounds one fetch.
	jwksTimeout = 10 * time.Second
	// jwksMaxBytes caps the size of the set.
	jwksMaxBytes = 1 << 20
	// jwksMaxKeys caps the keys of the set.
	jwksMaxKeys = 100
	// minRSABits is the size of the smallest RSA key accepted.
	minRSABits = 2048
)

// publicKey is a verification key and the algorithms it may verify.
type publicKey struct {
	key  crypto.PublicKey // *rsa.PublicKey or *ecdsa.PublicKey
	algs []string
}

// keySet is a JWK set fetched from a URL and cached. Unknown key IDs and
// age make it fetch the set again, at most once per minRefresh.
type keySet struct {
	url        string
	client     *http.Client
	logger     *slog.Logger
	minRefresh time.Duration

	fetching sync.Mutex // held during a fetch, and guards tried
	tried    time.Time  // start of the last fetch

	mu      sync.Mutex // guards keys and fetched
	keys    map[string]publicKey
	fetched time.Time // of keys; zero before the first successful fetch
}

func newKeySet(url string, logger *slog.Logger) *keySet {
	return &keySet{
		url: url,
		// A redirect could lead to plain http: do not follow any.
		client: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
		logger:     logger,
		minRefresh: jwksMinRefresh,
	}
}

// get returns the key with ID kid; an empty kid names the only key of a set
// of one. It fetches the set first when there are no keys yet, when they
// are older than jwksMaxAge and when kid is unknown, unless the last fetch
// was less than minRefresh ago. When a fetch fails the keys fetched before
// stay in use.
func (s *keySet) get(ctx context.Context, kid string) (publicKey, error) {
	if k, ok, fresh := s.lookup(kid); ok && fresh {
		return k, nil
	}
	s.fetching.Lock()
	defer s.fetching.Unlock()
	// Another request may have fetched the set meanwhile.
	k, ok, fresh := s.lookup(kid)
	if ok && fresh {
		return k, nil
	}
	if time.Since(s.tried) >= s.minRefresh {
		s.tried = time.Now()
		s.refresh(ctx)
		k, ok, _ = s.lookup(kid)
	}
	switch {
	case ok:
		return k, nil
	case s.loaded():
		return publicKey{}, errUnknownKey
	}
	return publicKey{}, errKeysUnavailable
}

// lookup returns the key with ID kid, whether there is one and whether the
// keys are younger than jwksMaxAge.
func (s *keySet) lookup(kid string) (k publicKey, ok, fresh bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fresh = time.Since(s.fetched) < jwksMaxAge
	if kid == "" && len(s.keys) == 1 {
		for _, k := range s.keys {
			return k, true, fresh
		}
	}
	k, ok = s.keys[kid]
	return k, ok, fresh
}

// loaded reports whether a fetch ever succeeded.
func (s *keySet) loaded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys != nil
}

// refresh fetches the set and replaces the keys, logging failures.
func (s *keySet) refresh(ctx context.Context) {
	keys, err := s.fetch(ctx)
	if err != nil {
		s.logger.Error("auth: fetching the JWK set failed", "url", s.url, "err", err)
		return
	}
	s.mu.Lock()
	s.keys, s.fetched = keys, time.Now()
	s.mu.Unlock()
	s.logger.Debug("auth: fetched the JWK set", "url", s.url, "keys", len(keys))
}

// fetch fetches and parses the set. The request's cancellation does not
// abort it: the keys serve every request.
func (s *keySet) fetch(ctx context.Context) (map[string]publicKey, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), jwksTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, jwksMaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > jwksMaxBytes {
		return nil, fmt.Errorf("the set is larger than %d bytes", jwksMaxBytes)
	}
	keys, skipped, err := parseJWKS(body)
	if skipped != nil {
		s.logger.Info("auth: JWK set keys skipped", "url", s.url, "reasons", skipped)
	}
	return keys, err
}

// jwk is a JSON Web Key (RFC 7517) of type RSA or EC (RFC 7518 section 6).
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	Crv string `json:"crv"`
	N   string `json:"n"`
	E   string `json:"e"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// parseJWKS returns the signature keys of the JWK set body by key ID, and
// why it skipped the others: keys of other types, curves or uses, RSA keys
// shorter than minRSABits and invalid keys. A set without usable keys, or
// of more than jwksMaxKeys keys, is an error; of keys sharing an ID the
// first counts.
func parseJWKS(body []byte) (keys map[string]publicKey, skipped, err error) {
	var set struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, nil, fmt.Errorf("not a JWK set: %w", err)
	}
	if len(set.Keys) > jwksMaxKeys {
		return nil, nil, fmt.Errorf("the set holds %d keys, more than %d", len(set.Keys), jwksMaxKeys)
	}
	keys = map[string]publicKey{}
	var errs []error
	for _, k := range set.Keys {
		pk, err := k.publicKey()
		if _, dup := keys[k.Kid]; dup && err == nil {
			err = errors.New("duplicate key ID")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("key %q: %w", k.Kid, err))
			continue
		}
		keys[k.Kid] = pk
	}
	skipped = errors.Join(errs...)
	if len(keys) == 0 {
		return nil, skipped, errors.New("no usable keys: want RSA or EC P-256 signature keys")
	}
	return keys, skipped, nil
}

// publicKey returns the verification key k describes.
func (k jwk) publicKey() (publicKey, error) {
	if k.Use != "" && k.Use != "sig" {
		return publicKey{}, fmt.Errorf("use %q is not \"sig\"", k.Use)
	}
	var (
		pk  publicKey
		err error
	)
	switch k.Kty {
	case "RSA":
		pk.algs = rsaAlgs
		pk.key, err = k.rsa()
	case "EC":
		pk.algs = []string{"ES256"}
		pk.key, err = k.ecP256()
	default:
		return publicKey{}, fmt.Errorf("unsupported key type %q", k.Kty)
	}
	if err != nil {
		return publicKey{}, err
	}
	if k.Alg != "" {
		if !slices.Contains(pk.algs, k.Alg) {
			return publicKey{}, fmt.Errorf("alg %q does not fit key type %q", k.Alg, k.Kty)
		}
		pk.algs = []string{k.Alg}
	}
	return pk, nil
}

func (k jwk) rsa() (*rsa.PublicKey, error) {
	n, err := decodeParam("n", k.N)
	if err != nil {
		return nil, err
	}
	e, err := decodeParam("e", k.E)
	if err != nil {
		return nil, err
	}
	key := &rsa.PublicKey{N: new(big.Int).SetBytes(n)}
	if bits := key.N.BitLen(); bits < minRSABits {
		return nil, fmt.Errorf("RSA key of %d bits is shorter than %d", bits, minRSABits)
	}
	if len(e) > 4 {
		return nil, errors.New("RSA exponent too large")
	}
	for _, b := range e {
		key.E = key.E<<8 | int(b)
	}
	if key.E < 3 || key.E%2 == 0 {
		return nil, fmt.Errorf("bad RSA exponent %d", key.E)
	}
	return key, nil
}

func (k jwk) ecP256() (*ecdsa.PublicKey, error) {
	if k.Crv != "P-256" {
		return nil, fmt.Errorf("unsupported curve %q", k.Crv)
	}
	x, err := decodeParam("x", k.X)
	if err != nil {
		return nil, err
	}
	y, err := decodeParam("y", k.Y)
	if err != nil {
		return nil, err
	}
	if len(x) != 32 || len(y) != 32 {
		return nil, errors.New("P-256 coordinates are not 32 bytes long")
	}
	// ParseUncompressedPublicKey checks that the point is on the curve.
	return ecdsa.ParseUncompressedPublicKey(elliptic.P256(), slices.Concat([]byte{4}, x, y))
}

// decodeParam decodes the base64url key parameter name.
func decodeParam(name, v string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(v, "="))
	if err != nil || len(b) == 0 {
		return nil, fmt.Errorf("bad %q parameter", name)
	}
	return b, nil
}
