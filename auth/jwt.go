package auth

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcphost/mcphost/config"
)

// leeway is the clock skew tolerated when checking exp, nbf and iat.
const leeway = 30 * time.Second

// rsaAlgs are the algorithms an RSA key may verify; an EC P-256 key
// verifies ES256 only. Symmetric algorithms and "none" are never accepted.
var rsaAlgs = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}

var (
	errUnknownKey   = errors.New("unknown signing key")
	errAlgMismatch  = errors.New("signing algorithm does not match the key")
	errNoSubject    = errors.New("token has no subject")
	errNotScopeList = errors.New("scope claim is neither a string nor an array of strings")
)

// jwtVerifier accepts JWT access tokens of one issuer for one audience.
type jwtVerifier struct {
	parser *jwt.Parser
	keys   *keySet
}

func newJWTVerifier(cfg config.AuthConfig, logger *slog.Logger) (*jwtVerifier, error) {
	if cfg.Issuer == "" || cfg.JWKSURL == "" || cfg.Audience == "" {
		return nil, errors.New(`auth: mode "jwt" needs issuer, jwks_url and audience`)
	}
	return &jwtVerifier{
		parser: jwt.NewParser(
			jwt.WithValidMethods(append(slices.Clone(rsaAlgs), "ES256")),
			jwt.WithIssuer(cfg.Issuer),
			jwt.WithAudience(cfg.Audience),
			jwt.WithExpirationRequired(),
			jwt.WithIssuedAt(),
			jwt.WithLeeway(leeway),
		),
		keys: newKeySet(cfg.JWKSURL, logger),
	}, nil
}

// claims are the claims of an access token mcphost reads.
type claims struct {
	jwt.RegisteredClaims
	// Scope is the scope claim (RFC 8693, RFC 9068); Scp is its name at
	// some authorization servers.
	Scope scopeList `json:"scope"`
	Scp   scopeList `json:"scp"`
}

// Validate requires a subject; the parser calls it after checking the
// registered claims.
func (c *claims) Validate() error {
	if c.Subject == "" {
		return errNoSubject
	}
	return nil
}

// scopeList is a list of scopes, written in JSON as one space-separated
// string or as an array of strings.
type scopeList []string

func (l *scopeList) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*l = strings.Fields(s)
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return errNotScopeList
	}
	*l = list
	return nil
}

func (v *jwtVerifier) verify(ctx context.Context, token string) (principal, error) {
	var c claims
	_, err := v.parser.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		k, err := v.keys.get(ctx, kid)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(k.algs, t.Method.Alg()) {
			return nil, errAlgMismatch
		}
		return k.key, nil
	})
	switch {
	case errors.Is(err, errKeysUnavailable):
		return principal{}, errKeysUnavailable
	case err != nil:
		return principal{}, invalidToken(describe(err))
	}
	return principal{subject: c.Subject, scopes: append(c.Scope, c.Scp...)}, nil
}

// describe returns why the parser refused a token, in words fit for clients
// and logs: the parser's own messages may quote claims.
func describe(err error) string {
	for _, d := range []struct {
		err  error
		desc string
	}{
		{errUnknownKey, "unknown signing key"},
		{errAlgMismatch, "signing algorithm does not match the key"},
		{jwt.ErrTokenMalformed, "malformed token"},
		{jwt.ErrTokenSignatureInvalid, "invalid signature or signing algorithm"},
		{jwt.ErrTokenExpired, "token expired"},
		{jwt.ErrTokenNotValidYet, "token not valid yet"},
		{jwt.ErrTokenUsedBeforeIssued, "token issued in the future"},
		{jwt.ErrTokenInvalidIssuer, "wrong issuer"},
		{jwt.ErrTokenInvalidAudience, "wrong audience"},
		{errNoSubject, "token has no subject"},
		{jwt.ErrTokenRequiredClaimMissing, "token lacks a required claim"},
	} {
		if errors.Is(err, d.err) {
			return d.desc
		}
	}
	return "invalid token"
}
