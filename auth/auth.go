// Package auth authorizes requests to the HTTP transports, acting as an
// OAuth 2.1 resource server as the MCP authorization specification
// (2025-11-25) describes.
//
// An [Authenticator] built by [New] from the [auth] table checks the
// bearer token of every request its [Authenticator.Middleware] wraps:
//
//   - mode "none": every request passes;
//   - mode "bearer": the token must equal a static secret read from an
//     environment variable or a file;
//   - mode "jwt": the token must be a JWT signed by a key of the issuer's
//     JWK set (RSA or EC P-256), unexpired, issued by the issuer, for the
//     audience (the resource, RFC 8707), with a subject and every required
//     scope.
//
// A request without a token gets 401 with a WWW-Authenticate challenge
// naming the protected resource metadata (RFC 9728), which
// [Authenticator.MetadataHandler] serves; an invalid token gets 401
// invalid_token, a token without the required scopes 403
// insufficient_scope (RFC 6750). In every mode the Authorization header is
// removed before the request goes on, so tokens never reach plugins, and
// tokens appear in no log or error message.
package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/mcphost/mcphost/config"
)

// Authenticator checks the access tokens of HTTP requests and serves the
// protected resource metadata.
type Authenticator struct {
	logger   *slog.Logger
	verifier verifier // nil in mode "none"
	// scopes are the scopes every request needs.
	scopes []string
	// metadataURL is the URL of the protected resource metadata, sent in
	// challenges.
	metadataURL string
	// paths are the URL paths the metadata is served at.
	paths []string
	// metadata is the protected resource metadata document.
	metadata []byte
	// denied, when set, is told of each request refused for its token
	// (OnDenied).
	denied func(r *http.Request, reason, detail string)
}

// The reasons OnDenied's function is given.
const (
	// DeniedBadToken: the bearer token is malformed, invalid or expired.
	DeniedBadToken = "bad_token"
	// DeniedScope: the token lacks a scope every request needs.
	DeniedScope = "insufficient_scope"
)

// OnDenied has f told of each request refused for its token (DeniedBadToken,
// DeniedScope), for the audit trail; a request without a token, the first
// step of every client's sign-in, is not one. Call it before serving.
func (a *Authenticator) OnDenied(f func(r *http.Request, reason, detail string)) {
	a.denied = f
}

// deny tells the OnDenied function, if any, of a refused request.
func (a *Authenticator) deny(r *http.Request, reason, detail string) {
	if a.denied != nil {
		a.denied(r, reason, detail)
	}
}

// verifier checks an access token.
type verifier interface {
	// verify returns who the token stands for, an invalidToken error when
	// it is not acceptable, or errKeysUnavailable when it cannot be
	// checked now.
	verify(ctx context.Context, token string) (principal, error)
}

// principal is who a valid token stands for.
type principal struct {
	subject string
	scopes  []string
}

// invalidToken is why a token was refused: a description fit for clients
// and logs, which never includes the token.
type invalidToken string

func (e invalidToken) Error() string { return string(e) }

// errKeysUnavailable means tokens cannot be verified because the signing
// keys could not be fetched.
var errKeysUnavailable = errors.New("signing keys unavailable")

// New returns an Authenticator for cfg, a validated [auth] table. In mode
// "bearer" it reads the token from the environment variable or file named
// by cfg; its errors name where the token was expected, never the token. A
// nil logger discards.
func New(cfg config.AuthConfig, logger *slog.Logger) (*Authenticator, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	a := &Authenticator{logger: logger}
	var err error
	switch cfg.Mode {
	case config.AuthNone, "":
		return a, nil
	case config.AuthBearer:
		a.verifier, err = newStaticToken(cfg)
	case config.AuthJWT:
		a.verifier, err = newJWTVerifier(cfg, logger)
		a.scopes = cfg.Scopes
	default:
		err = fmt.Errorf("auth: unknown mode %q", cfg.Mode)
	}
	if err != nil {
		return nil, err
	}
	if err := a.setMetadata(cfg); err != nil {
		return nil, err
	}
	return a, nil
}

// Middleware returns next behind the token check. Requests without a
// bearer token get 401, with a malformed Authorization header 400, with an
// invalid token 401 invalid_token, with a token lacking a required scope
// 403 insufficient_scope, and 503 when the signing keys cannot be fetched.
// Accepted requests reach next without their Authorization header, with
// the token's subject in their context (see [Subject]).
func (a *Authenticator) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.verifier == nil {
			next.ServeHTTP(w, forward(r.Context(), r))
			return
		}
		log := a.logger.With("remote", r.RemoteAddr, "method", r.Method, "path", r.URL.Path)
		token, err := bearerToken(r.Header)
		if err != nil {
			log.Info("auth: request refused", "reason", err)
			a.deny(r, DeniedBadToken, err.Error())
			a.reject(w, http.StatusBadRequest, "invalid_request", err.Error())
			return
		}
		if token == "" {
			log.Debug("auth: request without a bearer token")
			a.reject(w, http.StatusUnauthorized, "", "bearer token required")
			return
		}
		p, err := a.verifier.verify(r.Context(), token)
		var invalid invalidToken
		switch {
		case errors.As(err, &invalid):
			log.Info("auth: token refused", "reason", err)
			a.deny(r, DeniedBadToken, err.Error())
			a.reject(w, http.StatusUnauthorized, "invalid_token", err.Error())
			return
		case err != nil:
			log.Error("auth: cannot verify tokens", "err", err)
			http.Error(w, "cannot verify access tokens now", http.StatusServiceUnavailable)
			return
		}
		for _, s := range a.scopes {
			if !slices.Contains(p.scopes, s) {
				log.Info("auth: token lacks a scope", "sub", p.subject, "scope", s)
				a.deny(r, DeniedScope, "subject "+p.subject+": the token lacks the scope "+s)
				a.reject(w, http.StatusForbidden, "insufficient_scope", "the token lacks a required scope")
				return
			}
		}
		log.Debug("auth: request authorized", "sub", p.subject)
		ctx := context.WithValue(context.WithValue(r.Context(), subjectKey{}, p.subject), scopesKey{}, slices.Clone(p.scopes))
		next.ServeHTTP(w, forward(ctx, r))
	})
}

// subjectKey and scopesKey are the context keys of the authenticated
// subject and its token's scopes.
type (
	subjectKey struct{}
	scopesKey  struct{}
)

// Scopes returns the scopes of the token authenticated for the request
// whose context is ctx; nil when no authentication took place or the token
// has none (the static bearer token).
func Scopes(ctx context.Context) []string {
	s, _ := ctx.Value(scopesKey{}).([]string)
	return s
}

// Subject returns the subject authenticated for the request whose context
// is ctx: the JWT sub claim, or "bearer" for the static token; "" when no
// authentication took place.
func Subject(ctx context.Context) string {
	s, _ := ctx.Value(subjectKey{}).(string)
	return s
}

// forward returns r with context ctx and without its Authorization header.
func forward(ctx context.Context, r *http.Request) *http.Request {
	r = r.WithContext(ctx)
	r.Header = r.Header.Clone()
	r.Header.Del("Authorization")
	return r
}

// bearerToken returns the token of the Authorization header; "" when there
// is none or the header uses another scheme. It returns an error when the
// header is malformed.
func bearerToken(h http.Header) (string, error) {
	values := h.Values("Authorization")
	switch len(values) {
	case 0:
		return "", nil
	case 1:
	default:
		return "", errors.New("more than one Authorization header")
	}
	scheme, token, _ := strings.Cut(values[0], " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", nil
	}
	token = strings.Trim(token, " ")
	if !isToken(token) {
		return "", errors.New("malformed bearer token")
	}
	return token, nil
}

// isToken reports whether s has the syntax of a bearer token (RFC 6750
// section 2.1): b64token, letters, digits and "-._~+/" followed by any
// number of "=".
func isToken(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~+/", c) >= 0) {
			return false
		}
	}
	return true
}

// reject answers with status and a Bearer challenge carrying the error
// code (none for a request without a token) and desc.
func (a *Authenticator) reject(w http.ResponseWriter, status int, code, desc string) {
	params := make([]string, 0, 4)
	if code != "" {
		params = append(params, fmt.Sprintf("error=%q", code), fmt.Sprintf("error_description=%q", desc))
	}
	params = append(params, fmt.Sprintf("resource_metadata=%q", a.metadataURL))
	if len(a.scopes) > 0 {
		params = append(params, fmt.Sprintf("scope=%q", strings.Join(a.scopes, " ")))
	}
	w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
	http.Error(w, desc, status)
}
