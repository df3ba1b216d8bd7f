package clienv

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/mcphost/mcphost/config"
)

// VerifyFlags say how an oci:// reference given on the command line (to
// plugin pull, inspect) must be signed, as verify and allow_unsigned say it
// in a [plugins.NAME] table. The flags are cosign's.
type VerifyFlags struct {
	config.Verify
	AllowUnsigned bool
}

// Register adds the flags to fs.
func (v *VerifyFlags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&v.Key, "key", "", "cosign public key the signature of an oci:// reference must verify with")
	fs.StringVar(&v.TrustedRoot, "trusted-root", "", "sigstore trusted root (JSON) a keyless signature must chain to")
	fs.StringVar(&v.Identity, "certificate-identity", "", "keyless: the signer's identity (certificate SAN)")
	fs.StringVar(&v.IdentityRegexp, "certificate-identity-regexp", "", "keyless: a regular expression the signer's identity must match")
	fs.StringVar(&v.Issuer, "certificate-oidc-issuer", "", "keyless: the OIDC issuer that vouched for the signer")
	fs.StringVar(&v.IssuerRegexp, "certificate-oidc-issuer-regexp", "", "keyless: a regular expression the OIDC issuer must match")
	fs.BoolVar(&v.AllowUnsigned, "allow-unsigned", false, "accept an oci:// reference without checking its signature")
}

// PluginConfig returns the settings of a plugin pulled from the reference
// ref with these flags, under the [defaults] of cfg; it refuses flags
// that ask for no signature or for two kinds.
func (v VerifyFlags) PluginConfig(cfg *config.Config, name, ref string) (config.PluginConfig, error) {
	kinds := 0
	for _, set := range []bool{v.Key != "", v.TrustedRoot != "", v.AllowUnsigned} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return config.PluginConfig{}, fmt.Errorf("%s: give one of --key (a cosign public key), --trusted-root with --certificate-identity[-regexp] and --certificate-oidc-issuer[-regexp] (keyless), or --allow-unsigned", ref)
	}
	pc := cfg.Plugin(name)
	pc.Source, pc.Verify, pc.AllowUnsigned = ref, v.Verify, v.AllowUnsigned
	for _, f := range []*string{&pc.Verify.Key, &pc.Verify.TrustedRoot} {
		if *f != "" {
			abs, err := filepath.Abs(*f)
			if err != nil {
				return pc, err
			}
			*f = abs
		}
	}
	return pc, nil
}
