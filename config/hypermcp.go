package config

import (
	"fmt"
	"net/url"
	"slices"
)

// KeyringEntry grants a plugin one keyring entry, which get_keyring_secret
// answers with the value of one of the plugin's secrets or, without
// Secret, with the value of the entry in the OS keyring.
type KeyringEntry struct {
	// Service and User name the entry, as the plugin asks for it (and as
	// the OS keyring stores it: secret-tool's service and username).
	Service, User string
	// Secret is the key, in the plugin's secrets table, of its value; ""
	// for the OS keyring's entry.
	Secret string
}

// OAuth2Client grants a plugin the access tokens of one OAuth2 client,
// which get_access_token obtains: with the client credentials grant, or
// with the device authorization grant when DeviceAuthorizationURL is set.
// Everything but a subset of Scopes comes from here, never from the plugin.
type OAuth2Client struct {
	// TokenURL is the issuer's token endpoint; with ClientID it is how the
	// plugin names the client.
	TokenURL string
	// ClientID is the client's id.
	ClientID string
	// ClientSecret is where the client's secret comes from; nil for a
	// public client.
	ClientSecret *Secret
	// DeviceAuthorizationURL is the issuer's device authorization
	// endpoint (RFC 8628), or "".
	DeviceAuthorizationURL string
	// Scopes are the scopes the plugin may ask for, and what it gets when
	// it asks for none.
	Scopes []string
	// AuthStyle is how the client authenticates: "basic" (HTTP Basic),
	// "body" (form fields) or "" (try both).
	AuthStyle string
}

var (
	keyringKeys = []string{"service", "user", "secret"}
	oauth2Keys  = []string{"token_url", "client_id", "client_secret", "device_authorization_url", "scopes", "auth_style"}
)

// keyring returns the keyring array of tables; each entry's secret must
// be a key of t's secrets table (one whose value is wrong is reported
// there, not again here).
func (d *decoder) keyring(t map[string]any, p keyPath) []KeyringEntry {
	items := d.tableArray(t, p, "keyring")
	p = p.add("keyring")
	secrets, _ := t["secrets"].(map[string]any)
	var out []KeyringEntry
	for i, item := range items {
		ip := p.add(index(i))
		et, ok := d.table(item, ip, keyringKeys)
		if !ok {
			continue
		}
		before := len(d.errs)
		var e KeyringEntry
		field := func(key string) string {
			d.required(et, ip, key)
			s, _ := d.str(et, ip, key)
			return s
		}
		e.Service, e.User = field("service"), field("user")
		named := len(d.errs) == before // service and user are right
		if secret, ok := d.str(et, ip, "secret"); ok {
			e.Secret = secret
			if _, ok := secrets[secret]; !ok {
				d.errorf(ip.add("secret"), "%s", missingSecret(secret))
			}
		}
		if !named {
			continue // entries alike only through a wrong key are no duplicates
		}
		if slices.ContainsFunc(out, func(o KeyringEntry) bool { return o.Service == e.Service && o.User == e.User }) {
			d.errorf(ip, "the entry service = %q, user = %q is granted twice", e.Service, e.User)
			continue
		}
		out = append(out, e)
	}
	return out
}

// oauth2 returns the oauth2 array of tables.
func (d *decoder) oauth2(t map[string]any, p keyPath) []OAuth2Client {
	items := d.tableArray(t, p, "oauth2")
	p = p.add("oauth2")
	var out []OAuth2Client
	for i, item := range items {
		ip := p.add(index(i))
		ct, ok := d.table(item, ip, oauth2Keys)
		if !ok {
			continue
		}
		before := len(d.errs)
		var c OAuth2Client
		d.required(ct, ip, "token_url")
		d.required(ct, ip, "client_id")
		c.TokenURL, _ = d.checked(ct, ip, "token_url", checkEndpoint)
		c.ClientID, _ = d.str(ct, ip, "client_id")
		named := len(d.errs) == before // token_url and client_id are right
		c.DeviceAuthorizationURL, _ = d.checked(ct, ip, "device_authorization_url", checkEndpoint)
		if ref, ok := d.str(ct, ip, "client_secret"); ok {
			if s, ok := d.secretRef(ip.add("client_secret"), ref); ok {
				c.ClientSecret = &s
			}
		}
		c.Scopes = d.strs(ct, ip, "scopes", func(s string) error {
			if s == "" {
				return fmt.Errorf("empty scope")
			}
			return nil
		})
		if style, ok := d.str(ct, ip, "auth_style"); ok {
			if style != "basic" && style != "body" {
				d.errorf(ip.add("auth_style"), "%q is not \"basic\" or \"body\"", style)
			}
			c.AuthStyle = style
		}
		if !named {
			continue // clients alike only through a wrong key are no duplicates
		}
		if slices.ContainsFunc(out, func(o OAuth2Client) bool { return o.TokenURL == c.TokenURL && o.ClientID == c.ClientID }) {
			d.errorf(ip, "the client %q of %s is granted twice", c.ClientID, c.TokenURL)
			continue
		}
		out = append(out, c)
	}
	return out
}

// missingSecret says why a keyring entry's secret, which is not a key of
// the plugin's secrets table, is wrong.
func missingSecret(secret string) string {
	if secret == "" {
		return "empty: name a key of this plugin's secrets table, or leave secret out to read the OS keyring"
	}
	return fmt.Sprintf("%q is not a key of this plugin's secrets table", secret)
}

// checkEndpoint returns why s is not an absolute http or https URL.
func checkEndpoint(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http or https URL", s)
	}
	return nil
}
