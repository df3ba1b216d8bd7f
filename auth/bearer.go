package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
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

func (s staticToken) verify(_ context.Context, token string) (principal, error) {
	h := sha256.Sum256([]byte(token))
	if subtle.ConstantTimeCompare(h[:], s.hash[:]) != 1 {
		return principal{}, invalidToken("invalid token")
	}
	return principal{subject: "bearer"}, nil
}
