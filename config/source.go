package config

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"oras.land/oras-go/v2/registry"
)

// Where a plugin comes from when it is not a file of the plugins folder:
// the source, verify and allow_unsigned keys of [plugins.NAME], and the
// plugin cache and lock file of [server].

// Source schemes.
const (
	// SchemeOCI is the scheme of a source in an OCI registry.
	SchemeOCI = "oci://"
	// SchemeHTTPS is the scheme of a source downloaded over HTTPS.
	SchemeHTTPS = "https://"
)

// verifyKeys are the keys of a plugin's verify table.
var verifyKeys = []string{"key", "trusted_root", "identity", "identity_regexp", "issuer", "issuer_regexp"}

// Verify is how a plugin from an OCI registry must be signed: with the
// cosign key Key, or, keyless, by a certificate of the certificate
// authorities of TrustedRoot whose identity and issuer match. The zero
// value asks for nothing.
type Verify struct {
	// Key is the absolute path of a cosign public key (PEM).
	Key string
	// TrustedRoot is the absolute path of a sigstore trusted root (JSON:
	// certificate authorities, transparency logs) for keyless signatures.
	TrustedRoot string
	// Identity and IdentityRegexp match the signing certificate's subject
	// alternative name (an e-mail address or a URI): exactly, or by a
	// regular expression.
	Identity, IdentityRegexp string
	// Issuer and IssuerRegexp match the OIDC issuer the certificate names.
	Issuer, IssuerRegexp string
}

// IsZero reports whether v asks for no signature.
func (v Verify) IsZero() bool { return v == Verify{} }

// PluginCacheDir returns the directory of the plugin cache, where plugins
// pulled from sources are kept by digest: plugin_cache_dir, or by default
// <user cache dir>/mcphost.
func (c *Config) PluginCacheDir() (string, error) {
	if c.Server.PluginCacheDir != "" {
		return c.Server.PluginCacheDir, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("plugin cache directory: %w", err)
	}
	return filepath.Join(base, "mcphost"), nil
}

// LockPath returns the lock file that pins the tags of OCI sources to
// digests: mcphost.lock beside the config file, or in the working
// directory when there is no file.
func (c *Config) LockPath() string {
	if c.Path == "" {
		return "mcphost.lock"
	}
	return filepath.Join(filepath.Dir(c.Path), "mcphost.lock")
}

// checkSource returns why s is not a plugin source.
func checkSource(s string) error {
	bad := fmt.Errorf(`%q is not "oci://REGISTRY/REPOSITORY:TAG", "oci://REGISTRY/REPOSITORY@sha256:DIGEST" or "https://HOST/PATH"`, s)
	if rest, ok := strings.CutPrefix(s, SchemeOCI); ok {
		ref, err := registry.ParseReference(rest)
		switch {
		case err != nil:
			return fmt.Errorf("%q is not a valid reference: %v", s, err)
		case ref.Reference == "":
			return fmt.Errorf("%q names no tag or digest: add :TAG or @sha256:DIGEST", s)
		}
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" {
		return bad
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http": // for a server on this machine only
		if ip := net.ParseIP(u.Hostname()); (ip != nil && ip.IsLoopback()) || u.Hostname() == "localhost" {
			return nil
		}
	}
	return bad
}

// source decodes the source, verify and allow_unsigned keys of the
// plugin table t into pc, whose sha256 is decoded already.
func (d *decoder) source(t map[string]any, p keyPath, pc *PluginConfig) {
	src, hasSource := d.checked(t, p, "source", checkSource)
	pc.Source = src
	oci := strings.HasPrefix(src, SchemeOCI)
	_, sourceKey := t["source"] // a bad source is reported already
	if v, ok := t["verify"]; ok {
		pc.Verify = d.verify(v, p.add("verify"))
		if !sourceKey {
			d.errorf(p.add("verify"), `only an oci source is verified; add source = "oci://..."`)
		}
	}
	if allow, ok := d.boolean(t, p, "allow_unsigned"); ok {
		pc.AllowUnsigned = allow
		switch {
		case !sourceKey || (hasSource && !oci):
			d.errorf(p.add("allow_unsigned"), `only an oci source is verified; add source = "oci://..." or remove allow_unsigned`)
		case allow && t["verify"] != nil:
			d.errorf(p.add("allow_unsigned"), "verify and allow_unsigned = true exclude each other")
		}
	}
	switch {
	case !hasSource:
	case oci && t["verify"] == nil && !pc.AllowUnsigned:
		d.errorf(p.add("source"), `an oci source needs verify = { key = "..." } or verify = { trusted_root = "...", ... }, or allow_unsigned = true to run it unsigned`)
	case !oci && pc.SHA256 == "":
		scheme, _, _ := strings.Cut(src, ":")
		d.errorf(p.add("source"), `an %s source needs sha256 = "..." in [%s], the digest of the file it serves`, scheme, p)
	}
}

// verify decodes a plugin's verify table.
func (d *decoder) verify(v any, p keyPath) Verify {
	var out Verify
	t, ok := d.table(v, p, verifyKeys)
	if !ok {
		return out
	}
	if k, ok := d.str(t, p, "key"); ok && k != "" {
		out.Key = d.abs(k)
	}
	if r, ok := d.str(t, p, "trusted_root"); ok && r != "" {
		out.TrustedRoot = d.abs(r)
	}
	out.Identity, _ = d.str(t, p, "identity")
	out.IdentityRegexp, _ = d.checked(t, p, "identity_regexp", checkRegexp)
	out.Issuer, _ = d.str(t, p, "issuer")
	out.IssuerRegexp, _ = d.checked(t, p, "issuer_regexp", checkRegexp)
	_, badIdentity := t["identity_regexp"]
	_, badIssuer := t["issuer_regexp"]
	badIdentity = badIdentity && out.IdentityRegexp == ""
	badIssuer = badIssuer && out.IssuerRegexp == ""
	for k := range t {
		if !slices.Contains(verifyKeys, k) {
			return out // the unknown key is reported; the rest may be misspelt
		}
	}
	constrained := out.Identity != "" || out.IdentityRegexp != "" || out.Issuer != "" || out.IssuerRegexp != ""
	switch {
	case out.Key != "" && out.TrustedRoot != "":
		d.errorf(p, "give either key or trusted_root, not both")
	case out.Key != "" && constrained:
		d.errorf(p, "identity, identity_regexp, issuer and issuer_regexp apply to keyless verification (trusted_root) only")
	case out.Key != "":
	case out.TrustedRoot == "":
		d.errorf(p, "give key (a cosign public key) or trusted_root (a sigstore trusted root) with identity and issuer")
	case out.Identity == "" && out.IdentityRegexp == "" && !badIdentity:
		d.errorf(p, "trusted_root needs identity or identity_regexp: who must have signed")
	case out.Issuer == "" && out.IssuerRegexp == "" && !badIssuer:
		d.errorf(p, "trusted_root needs issuer or issuer_regexp: the OIDC issuer that vouched for the signer")
	}
	return out
}

// checkRegexp returns why s is not a regular expression.
func checkRegexp(s string) error {
	if _, err := regexp.Compile(s); err != nil {
		return fmt.Errorf("%q is not a regular expression: %v", s, err)
	}
	return nil
}
