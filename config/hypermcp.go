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
	secrets, _ := t["secrets"].(map[string]any)
	return grantTables(d, t, p, "keyring", keyringKeys, func(et map[string]any, ip keyPath) (e KeyringEntry, named bool) {
		before := len(d.errs)
		field := func(key string) string {
			d.required(et, ip, key)
			s, _ := d.str(et, ip, key)
			return s
		}
		e.Service, e.User = field("service"), field("user")
		named = len(d.errs) == before
		if secret, ok := d.str(et, ip, "secret"); ok {
			e.Secret = secret
			if _, ok := secrets[secret]; !ok {
				d.errorf(ip.add("secret"), "%s", missingSecret(secret))
			}
		}
		return e, named
	}, func(e KeyringEntry) string {
		return fmt.Sprintf("the entry service = %q, user = %q", e.Service, e.User)
	})
}

// oauth2 returns the oauth2 array of tables.
func (d *decoder) oauth2(t map[string]any, p keyPath) []OAuth2Client {
	return grantTables(d, t, p, "oauth2", oauth2Keys, func(ct map[string]any, ip keyPath) (c OAuth2Client, named bool) {
		before := len(d.errs)
		d.required(ct, ip, "token_url")
		d.required(ct, ip, "client_id")
		c.TokenURL, _ = d.checked(ct, ip, "token_url", checkEndpoint)
		c.ClientID, _ = d.str(ct, ip, "client_id")
		named = len(d.errs) == before
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
		return c, named
	}, func(c OAuth2Client) string { return fmt.Sprintf("the client %q of %s", c.ClientID, c.TokenURL) })
}

// grantTables decodes the array of tables key of t, grants of one kind,
// each a table of the keys known, with decode, which reports whether the
// keys that identify the grant were right. A grant is left out when they
// were not (grants alike only through a wrong key are no duplicates), and
// reported when another one has the same identity, id's description of it.
func grantTables[T any](d *decoder, t map[string]any, p keyPath, key string, known []string,
	decode func(map[string]any, keyPath) (T, bool), id func(T) string) []T {
	items := d.tableArray(t, p, key)
	p = p.add(key)
	var out []T
	var ids []string
	for i, item := range items {
		ip := p.add(index(i))
		it, ok := d.table(item, ip, known)
		if !ok {
			continue
		}
		g, named := decode(it, ip)
		if !named {
			continue
		}
		if slices.Contains(ids, id(g)) {
			d.errorf(ip, "%s is granted twice", id(g))
			continue
		}
		out, ids = append(out, g), append(ids, id(g))
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
