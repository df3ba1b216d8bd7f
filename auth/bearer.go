package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/mcphost/mcphost/config"
)

// minTokenLen is the length of the shortest static token accepted.
const minTokenLen = 16

// staticToken accepts one token. It keeps only its SHA-256 hash and
// compares hashes in constant time, so neither the token nor its length
// leaks through timing.
type staticToken struct {
	hash [sha256.Size]byte
}

// newStaticToken reads the token from the environment variable or file
// cfg names, with surrounding whitespace removed.
func newStaticToken(cfg config.AuthConfig) (staticToken, error) {
	var token, where string
	switch {
	case (cfg.TokenEnv == "") == (cfg.TokenFile == ""):
		return staticToken{}, errors.New(`auth: mode "bearer" needs one of token_env and token_file`)
	case cfg.TokenEnv != "":
		where = "environment variable " + cfg.TokenEnv
		token = os.Getenv(cfg.TokenEnv)
	default:
		where = "file " + cfg.TokenFile
		b, err := os.ReadFile(cfg.TokenFile)
		if err != nil {
			return staticToken{}, fmt.Errorf("auth: reading the bearer token: %w", err)
		}
		token = string(b)
	}
	token = strings.TrimSpace(token)
	switch {
	case token == "":
		return staticToken{}, fmt.Errorf("auth: no bearer token in %s (unset or empty)", where)
	case len(token) < minTokenLen:
		return staticToken{}, fmt.Errorf("auth: the bearer token in %s is shorter than %d characters", where, minTokenLen)
	case !isToken(token):
		return staticToken{}, fmt.Errorf("auth: the bearer token in %s has characters a bearer token cannot have "+
			"(allowed: letters, digits, \"-._~+/\" and trailing \"=\")", where)
	}
	return staticToken{hash: sha256.Sum256([]byte(token))}, nil
}

// BearerTokenIs returns a check that a request bears token in its
// Authorization header (scheme Bearer, in any case), comparing hashes in
// constant time as mode "bearer" does; an error when token cannot be a
// bearer token (RFC 6750's syntax), so that a token file that holds one
// fails at once rather than every request.
func BearerTokenIs(token string) (func(*http.Request) bool, error) {
	if !isToken(token) {
		return nil, errors.New("not a bearer token: its characters are letters, digits, \"-._~+/\" and trailing \"=\"")
	}
	want := staticToken{hash: sha256.Sum256([]byte(token))}
	return func(r *http.Request) bool {
		got, err := bearerToken(r.Header)
		if err != nil || got == "" {
			return false
		}
		_, err = want.verify(r.Context(), got)
		return err == nil
	}, nil
}

func (s staticToken) verify(_ context.Context, token string) (principal, error) {
	h := sha256.Sum256([]byte(token))
	if subtle.ConstantTimeCompare(h[:], s.hash[:]) != 1 {
		return principal{}, invalidToken("invalid token")
	}
	return principal{subject: "bearer"}, nil
}
