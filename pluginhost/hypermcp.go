package pluginhost

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sandbox"
	"github.com/mcphost/mcphost/tokenbroker"
)

// hyper-mcp's get_access_token and get_keyring_secret fail as hyper-mcp's
// do: with null and with nothing, the host logging why, never with
// abi.HostFunctionError, which a plugin written for hyper-mcp cannot read.
var hyperFailures = map[string][]byte{
	abi.HostGetAccessToken:   []byte("null"),
	abi.HostGetKeyringSecret: {},
}

// brokers is the token broker of each Loader: tokens outlive a plugin's
// reload.
var brokers sync.Map // *Loader -> *tokenbroker.Broker

func (l *Loader) broker() *tokenbroker.Broker {
	b, _ := brokers.LoadOrStore(l, tokenbroker.New(nil))
	return b.(*tokenbroker.Broker)
}

// oauth2Clients returns the OAuth2 clients pc grants, their secrets read.
func oauth2Clients(pc config.PluginConfig) ([]tokenbroker.Client, error) {
	clients := make([]tokenbroker.Client, 0, len(pc.OAuth2))
	for i, c := range pc.OAuth2 {
		secret, err := pc.OAuth2Secret(i)
		if err != nil {
			return nil, err
		}
		clients = append(clients, tokenbroker.Client{TokenURL: c.TokenURL, ClientID: c.ClientID, ClientSecret: secret,
			DeviceAuthURL: c.DeviceAuthorizationURL, Scopes: c.Scopes, AuthStyle: c.AuthStyle})
	}
	return clients, nil
}

// withHyperMCP adds to impl, the server's host functions for plugin name,
// get_keyring_secret and get_access_token of the clients granted
// (oauth2Clients). keyring are the values of the keyring entries granted
// (keyringValues); each access token handed to the plugin is added to
// tokens, which the sandbox redacts.
func (l *Loader) withHyperMCP(name string, clients []tokenbroker.Client, keyring map[keyringID]string, tokens *sandbox.Redactions, impl map[string]host.HostFunc) map[string]host.HostFunc {
	out := make(map[string]host.HostFunc, len(impl)+2)
	for k, f := range impl {
		out[k] = f
	}
	out[abi.HostGetKeyringSecret] = keyringSecret(name, keyring)
	broker, prompt := l.broker(), devicePrompt(impl[abi.HostCreateElicitation], impl[abi.HostNotifyElicitationComplete])
	out[abi.HostGetAccessToken] = func(ctx context.Context, in []byte) ([]byte, error) {
		tok, err := broker.Token(ctx, name, clients, in, prompt)
		if err != nil {
			return nil, err
		}
		tokens.Add(tok.AccessToken)
		return json.Marshal(tok)
	}
	return out
}

// keyringSecret is get_keyring_secret of plugin: the raw value of a
// granted entry, from values (keyringValues).
func keyringSecret(plugin string, values map[keyringID]string) host.HostFunc {
	return func(_ context.Context, in []byte) ([]byte, error) {
		var id struct {
			Service string `json:"service"`
			User    string `json:"user"`
		}
		if err := json.Unmarshal(in, &id); err != nil {
			return nil, fmt.Errorf("get_keyring_secret: bad input: %w", err)
		}
		v, ok := values[keyringID{id.Service, id.User}]
		if !ok {
			return nil, fmt.Errorf("get_keyring_secret: the entry service %q, user %q is not granted to plugin %s (add it to keyring in [plugins.%s])",
				id.Service, id.User, plugin, plugin)
		}
		return []byte(v), nil
	}
}

// devicePrompt sends the user to a device authorization's verification URL
// with a URL elicitation (a form asking to confirm, for clients without URL
// elicitation), through the server's own create_elicitation, and announces
// its completion once the token is obtained.
func devicePrompt(elicit, complete host.HostFunc) tokenbroker.Prompt {
	return func(ctx context.Context, url, userCode string, expires time.Time) (func(), error) {
		minutes := ""
		if !expires.IsZero() {
			minutes = fmt.Sprintf("; you have %d minutes", int(time.Until(expires).Minutes()+0.5))
		}
		id := rand.Text()
		in, _ := json.Marshal(map[string]string{"mode": "url", "elicitationId": id, "url": url,
			"message": fmt.Sprintf("Open this URL in your browser and approve the code %s%s", userCode, minutes)})
		out, err := elicit(ctx, in)
		done := func() { _, _ = complete(ctx, []byte(`{"elicitationId":"`+id+`"}`)) }
		if err != nil { // no URL elicitation: a form asking the user to confirm
			in, _ = json.Marshal(map[string]any{"mode": "form",
				"message":         fmt.Sprintf("Open this URL in your browser: %s and enter the code %s%s; then confirm", url, userCode, minutes),
				"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"completed": map[string]string{"type": "boolean"}}, "required": []string{"completed"}}})
			if out, err = elicit(ctx, in); err != nil {
				return nil, fmt.Errorf("the user cannot be asked to authorize the device: %w", err)
			}
			done = func() {}
		}
		var res struct {
			Action string `json:"action"`
		}
		if err := json.Unmarshal(out, &res); err != nil || res.Action != "accept" {
			return nil, errors.New("the user did not authorize the device (" + res.Action + ")")
		}
		return done, nil
	}
}
