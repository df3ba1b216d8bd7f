package ociplugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/opencontainers/go-digest"
	"oras.land/oras-go/v2/registry/remote/errcode"
)

// A verification record says that a manifest digest was verified under a
// policy: it is kept in the plugin cache beside the content, at
// <cache>/plugins/verified/sha256/HEX/POLICY.json, where POLICY is the
// sha256 of the policy's identity (policyIdentity). It lets a plugin start
// from the cache when its registry cannot be asked, under the same policy
// only.

// verification is the content of a verification record.
type verification struct {
	Source     string         `json:"source"`
	Digest     string         `json:"digest"`
	Policy     policyIdentity `json:"policy"`
	Signer     string         `json:"signer"`
	VerifiedAt time.Time      `json:"verified_at"`
}

// policyIdentity is a policy exactly: its settings and the sha256 of the
// files they name, so that a key or trusted root file edited in place is
// another policy.
type policyIdentity struct {
	Key               string `json:"key,omitempty"`
	KeySHA256         string `json:"key_sha256,omitempty"`
	TrustedRoot       string `json:"trusted_root,omitempty"`
	TrustedRootSHA256 string `json:"trusted_root_sha256,omitempty"`
	Identity          string `json:"identity,omitempty"`
	IdentityRegexp    string `json:"identity_regexp,omitempty"`
	Issuer            string `json:"issuer,omitempty"`
	IssuerRegexp      string `json:"issuer_regexp,omitempty"`
}

// identity returns the identity of p and its sha256 (hex).
func (p Policy) identity() (policyIdentity, string, error) {
	id := policyIdentity{Key: p.Key, TrustedRoot: p.TrustedRoot, Identity: p.Identity, IdentityRegexp: p.IdentityRegexp,
		Issuer: p.Issuer, IssuerRegexp: p.IssuerRegexp}
	for _, f := range []struct{ file, sum *string }{{&id.Key, &id.KeySHA256}, {&id.TrustedRoot, &id.TrustedRootSHA256}} {
		if *f.file == "" {
			continue
		}
		b, err := os.ReadFile(*f.file)
		if err != nil {
			return id, "", err
		}
		sum := sha256.Sum256(b)
		*f.sum = hex.EncodeToString(sum[:])
	}
	b, err := json.Marshal(id)
	if err != nil {
		return id, "", err
	}
	sum := sha256.Sum256(b)
	return id, hex.EncodeToString(sum[:]), nil
}

// recordDir is the folder of the verification records of dgst.
func (p *Puller) recordDir(dgst string) (string, bool) {
	d := digest.Digest(dgst)
	if p.CacheDir == "" || d.Validate() != nil || d.Algorithm() != digest.SHA256 {
		return "", false
	}
	return filepath.Join(p.CacheDir, "plugins", "verified", "sha256", d.Encoded()), true
}

// record writes that dgst of source was verified under pol, signed by
// signer; a failure only costs starting offline, and is logged.
func (p *Puller) record(source, dgst string, pol Policy, signer string) {
	dir, ok := p.recordDir(dgst)
	if !ok {
		return
	}
	id, sum, err := pol.identity()
	if err == nil {
		var b []byte
		if b, err = json.MarshalIndent(verification{Source: source, Digest: dgst, Policy: id, Signer: signer, VerifiedAt: time.Now().UTC()}, "", "  "); err == nil {
			err = writeAtomic(filepath.Join(dir, sum+".json"), b)
		}
	}
	if err != nil {
		p.logger().Warn("verification not recorded in the plugin cache: starting offline will need the registry", "source", source, "digest", dgst, "err", err)
	}
}

// verifiedBefore returns who signed dgst of source when the plugin cache
// records it verified under pol, for a registry that could not be asked
// (unreachable, the error it gave); otherwise an error that says why the
// digest cannot be served.
func (p *Puller) verifiedBefore(source, dgst string, pol Policy, unreachable error) (string, error) {
	refuse := func(why string) error {
		return fmt.Errorf("%s (%s) refused: registry unreachable (%w), and %s; expected %s", source, dgst, unreachable, why, pol.expected())
	}
	dir, ok := p.recordDir(dgst)
	if !ok {
		return "", refuse("there is no plugin cache")
	}
	_, sum, err := pol.identity()
	if err != nil {
		return "", refuse(fmt.Sprintf("the policy's file: %v", err))
	}
	b, err := os.ReadFile(filepath.Join(dir, sum+".json"))
	if err != nil {
		if others, _ := os.ReadDir(dir); len(others) > 0 {
			return "", refuse("the plugin cache has it verified under another policy; it must be verified again, with the registry reachable")
		}
		return "", refuse("it was never verified under any policy (no record in the plugin cache)")
	}
	var v verification
	if err := json.Unmarshal(b, &v); err != nil || v.Digest != dgst {
		return "", refuse("its verification record in the plugin cache is unreadable")
	}
	p.logger().Warn("registry unreachable; serving the digest verified before under the same policy, from the cache",
		"source", source, "digest", dgst, "signer", v.Signer, "verified_at", v.VerifiedAt, "err", unreachable)
	return fmt.Sprintf("%s (verified %s; registry unreachable, served from the cache)", v.Signer, v.VerifiedAt.Format(time.RFC3339)), nil
}

// isUnreachable reports whether err says that the registry could not be
// asked (no connection, no answer in time, a server error), rather than
// that it answered (a missing signature, a refusal).
func isUnreachable(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	var resp *errcode.ErrorResponse
	if errors.As(err, &resp) {
		return resp.StatusCode >= 500
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded)
}
