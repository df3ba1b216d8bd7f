// Package tokenbroker is hyper-mcp's OAuth2 token broker (the host
// function get_access_token) for mcphost: a plugin names one of the OAuth2
// clients the operator granted it, and gets an access token of that client,
// obtained with the client credentials grant or the device authorization
// grant (RFC 8628, the user sent to the verification URL through a URL
// elicitation), cached and refreshed. Credentials come from the operator's
// configuration only; neither they nor tokens are ever logged.
package tokenbroker

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

const (
	// expirySkew is how long before its expiry a token counts as expired,
	// as in hyper-mcp (AccessToken::EXPIRY_SKEW).
	expirySkew = 30 * time.Second
	// maxPollInterval caps the interval between device code polls an
	// issuer may ask for (RFC 8628's default is 5 s).
	maxPollInterval = 5 * time.Minute
	// maxAnswerBytes caps an answer of a token or device authorization
	// endpoint.
	maxAnswerBytes = 64 << 10
)

// Client is an OAuth2 client the operator granted a plugin, its secret
// read.
type Client struct {
	// TokenURL and ClientID identify the client, as the plugin names it.
	TokenURL, ClientID string
	// ClientSecret is "" for a public client.
	ClientSecret string
	// DeviceAuthURL, when set, selects the device authorization grant.
	DeviceAuthURL string
	// Scopes are those the plugin may ask for, and what it gets when it
	// asks for none.
	Scopes []string
	// AuthStyle is "basic", "body" or "" (try both).
	AuthStyle string
}

// Request is hyper-mcp's OauthCredentials, what the plugin sends. Only
// the client's identity and the scopes count: everything else (a secret,
// endpoints, extra parameters) comes from the operator's Client.
type Request struct {
	ClientID         string   `json:"client_id"`
	TokenEndpointURL string   `json:"token_endpoint_url"`
	Scopes           []string `json:"scopes"`
}

// AccessToken is hyper-mcp's AccessToken, what the plugin receives.
type AccessToken struct {
	AccessToken string      `json:"access_token"`
	ExpiresAt   *SystemTime `json:"expires_at"`
	Scopes      []string    `json:"scopes"`
}

// SystemTime is a Rust std::time::SystemTime as serde encodes it.
type SystemTime struct {
	Secs  int64 `json:"secs_since_epoch"`
	Nanos int   `json:"nanos_since_epoch"`
}

// Prompt sends the user of the calling request to url (the verification
// URL of a device authorization, userCode the code to enter there) and
// returns once they say they are done; a user who declines is an error.
// done, called once the token is obtained, tells the client the
// interaction is complete.
type Prompt func(ctx context.Context, url, userCode string, expires time.Time) (done func(), err error)

// Broker obtains and caches access tokens. The zero value is not usable;
// use New.
type Broker struct {
	http  *http.Client
	mu    sync.Mutex
	cache map[string]*entry
}

// entry is a cached token; its mutex serializes obtaining it.
type entry struct {
	mu    sync.Mutex
	token *oauth2.Token
}

// New returns a broker whose requests to token endpoints use client, or,
// when nil, a client with a 15 s timeout that follows no redirects; either
// way an answer longer than maxAnswerBytes fails.
func New(client *http.Client) *Broker {
	if client == nil {
		client = &http.Client{
			Timeout:       15 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	bounded := *client
	bounded.Transport = boundedTransport{cmp.Or(client.Transport, http.DefaultTransport)}
	return &Broker{http: &bounded, cache: map[string]*entry{}}
}

// boundedTransport gives out answers whose bodies fail past maxAnswerBytes.
// x/oauth2 would cut one off silently at 1 MiB and fail to decode it, and
// leaves a device authorization answer unclosed, its connection held
// until the client's timeout.
type boundedTransport struct{ next http.RoundTripper }

// RoundTrip sends req with the next transport and bounds the answer.
func (t boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &boundedBody{ReadCloser: resp.Body, left: maxAnswerBytes, url: req.URL.Redacted()}
	return resp, nil
}

// boundedBody is the body of an answer from url, left bytes of which may
// still be read; past them it is closed, and fails.
type boundedBody struct {
	io.ReadCloser
	left int64
	url  string
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	if b.left -= int64(n); b.left < 0 {
		b.Close()
		return 0, fmt.Errorf("the answer of %s runs past %d bytes", b.url, maxAnswerBytes)
	}
	return n, err
}

// Token answers a get_access_token call of plugin, whose granted clients
// are clients, with input the plugin's OauthCredentials. A cached token is
// returned while it is valid, refreshed with its refresh token once it is
// about to expire, and obtained anew otherwise. prompt reaches the user
// for the device authorization grant.
func (b *Broker) Token(ctx context.Context, plugin string, clients []Client, input []byte, prompt Prompt) (*AccessToken, error) {
	var req Request
	if err := json.Unmarshal(input, &req); err != nil {
		return nil, fmt.Errorf("get_access_token: bad input: %w", err)
	}
	i := slices.IndexFunc(clients, func(c Client) bool { return c.ClientID == req.ClientID && c.TokenURL == req.TokenEndpointURL })
	if i < 0 {
		return nil, fmt.Errorf("get_access_token: the client %q of %s is not granted to plugin %s (add it to [[plugins.%s.oauth2]])",
			req.ClientID, req.TokenEndpointURL, plugin, plugin)
	}
	c := clients[i]
	scopes := c.Scopes
	if len(req.Scopes) > 0 {
		for _, s := range req.Scopes {
			if !slices.Contains(c.Scopes, s) {
				return nil, fmt.Errorf("get_access_token: scope %q of client %q is not granted to plugin %s (add it to its scopes in [[plugins.%s.oauth2]])",
					s, c.ClientID, plugin, plugin)
			}
		}
		scopes = slices.Sorted(slices.Values(req.Scopes))
	}
	e := b.entry(strings.Join([]string{plugin, c.TokenURL, c.ClientID, strings.Join(scopes, " ")}, "\x00"))
	e.mu.Lock()
	defer e.mu.Unlock()
	ctx = context.WithValue(ctx, oauth2.HTTPClient, b.http)
	tok, err := e.token, error(nil)
	switch {
	case tok != nil && fresh(tok):
	case tok != nil && tok.RefreshToken != "":
		stale := *tok
		stale.Expiry = time.Unix(1, 0) // make the token source refresh it
		if tok, err = config(c, scopes).TokenSource(ctx, &stale).Token(); err == nil {
			break
		}
		fallthrough // hyper-mcp too obtains a new token when refreshing fails
	default:
		tok, err = obtain(ctx, c, scopes, prompt)
	}
	if err != nil {
		e.token = nil
		return nil, fmt.Errorf("get_access_token: client %q of %s: %w", c.ClientID, c.TokenURL, describe(err))
	}
	e.token = tok
	return accessToken(tok, scopes), nil
}

func (b *Broker) entry(key string) *entry {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.cache[key]
	if e == nil {
		e = &entry{}
		b.cache[key] = e
	}
	return e
}

// fresh reports whether tok is valid for another expirySkew.
func fresh(tok *oauth2.Token) bool {
	return tok.AccessToken != "" && (tok.Expiry.IsZero() || time.Now().Add(expirySkew).Before(tok.Expiry))
}

func authStyle(s string) oauth2.AuthStyle {
	switch s {
	case "basic":
		return oauth2.AuthStyleInHeader
	case "body":
		return oauth2.AuthStyleInParams
	}
	return oauth2.AuthStyleAutoDetect
}

// deviceAuthStyle is how the client authenticates to its token endpoint:
// as set, or, unset, for a client of the device authorization grant, in
// the body for a public client (its client_id is a parameter of every
// poll) and with HTTP Basic for a confidential one (which every token
// endpoint must take, RFC 6749 section 2.3.1), never both in turn: x/oauth2
// would send each poll that gets an error (authorization_pending,
// slow_down) again at once the other way, polling twice as often as the
// issuer allows.
func deviceAuthStyle(c Client) oauth2.AuthStyle {
	switch {
	case c.AuthStyle != "" || c.DeviceAuthURL == "":
		return authStyle(c.AuthStyle)
	case c.ClientSecret == "":
		return oauth2.AuthStyleInParams
	}
	return oauth2.AuthStyleInHeader
}

// config is the x/oauth2 configuration of the client's device
// authorization grant and refresh.
func config(c Client, scopes []string) *oauth2.Config {
	return &oauth2.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, Scopes: scopes,
		Endpoint: oauth2.Endpoint{TokenURL: c.TokenURL, DeviceAuthURL: c.DeviceAuthURL, AuthStyle: deviceAuthStyle(c)}}
}

// obtain gets a new token with the client's grant.
func obtain(ctx context.Context, c Client, scopes []string, prompt Prompt) (*oauth2.Token, error) {
	if c.DeviceAuthURL == "" {
		cc := clientcredentials.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, TokenURL: c.TokenURL,
			Scopes: scopes, AuthStyle: authStyle(c.AuthStyle)}
		return cc.Token(ctx)
	}
	conf := config(c, scopes)
	da, err := conf.DeviceAuth(ctx)
	if err != nil {
		return nil, fmt.Errorf("device authorization: %w", describe(err))
	}
	if da.Interval < 0 || da.Interval > int64(maxPollInterval/time.Second) {
		return nil, fmt.Errorf("device authorization: the endpoint answered interval %d s, want 0 (5 s) to %d s",
			da.Interval, int64(maxPollInterval/time.Second))
	}
	url := da.VerificationURIComplete
	if url == "" {
		url = da.VerificationURI
	}
	done, err := prompt(ctx, url, da.UserCode, da.Expiry)
	if err != nil {
		return nil, err
	}
	tok, err := conf.DeviceAccessToken(ctx, da)
	if err != nil {
		// x/oauth2 polls until the code's expiry, then fails with the
		// bare deadline of its own context.
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil && !da.Expiry.IsZero() && !time.Now().Before(da.Expiry) {
			return nil, fmt.Errorf("the device code expired at %s without a token: the user did not approve it in time, or the token endpoint never granted it",
				da.Expiry.Local().Format(time.TimeOnly))
		}
		return nil, err
	}
	done()
	return tok, nil
}

// describe returns err without what a token endpoint's answer may hold
// beyond its error code.
func describe(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		msg := fmt.Sprintf("the token endpoint answered %s", re.Response.Status)
		if re.ErrorCode != "" {
			msg += ": " + re.ErrorCode
		}
		return errors.New(msg)
	}
	return err
}

// accessToken is tok as hyper-mcp hands it to plugins: its scopes are
// those the issuer says it granted, else those asked for.
func accessToken(tok *oauth2.Token, scopes []string) *AccessToken {
	out := &AccessToken{AccessToken: tok.AccessToken}
	if !tok.Expiry.IsZero() {
		out.ExpiresAt = &SystemTime{Secs: tok.Expiry.Unix(), Nanos: tok.Expiry.Nanosecond()}
	}
	if granted, _ := tok.Extra("scope").(string); granted != "" {
		out.Scopes = strings.Fields(granted)
	} else if len(scopes) > 0 {
		out.Scopes = slices.Clone(scopes)
	}
	return out
}
