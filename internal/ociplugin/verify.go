package ociplugin

import (
	"bytes"
	"context"
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/payload"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"
)

// The classic cosign signature layout: the signatures of the manifest
// sha256:HEX are the layers of the manifest tagged sha256-HEX.sig in the
// same repository, each a simple-signing payload whose annotations hold
// the signature and, for keyless signatures, the certificate and the
// transparency log's promise of inclusion.
const (
	// SimpleSigningMediaType is the media type of a cosign signature layer.
	SimpleSigningMediaType = "application/vnd.dev.cosign.simplesigning.v1+json"
	// AnnotationSignature holds the base64 signature of the payload.
	AnnotationSignature = "dev.cosignproject.cosign/signature"
	// AnnotationCertificate holds the PEM signing certificate (keyless).
	AnnotationCertificate = "dev.sigstore.cosign/certificate"
	// AnnotationChain holds the PEM certificates between it and the root.
	AnnotationChain = "dev.sigstore.cosign/chain"
	// AnnotationBundle holds the Rekor entry and its signed entry timestamp.
	AnnotationBundle = "dev.sigstore.cosign/bundle"

	// maxSignatureBytes caps a signature manifest and each payload.
	maxSignatureBytes = 64 << 10
	// maxSignatures caps the signature layers, and the sigstore bundles
	// among a manifest's referrers, tried.
	maxSignatures = 16
	// maxReferrerPages caps the pages of a manifest's referrers read.
	maxReferrerPages = 10
)

// Policy is what a pulled plugin's signature must be: by the cosign public
// key in the file Key, or keyless, by a certificate of the sigstore trusted
// root in the file TrustedRoot whose subject (Identity, or IdentityRegexp)
// and OIDC issuer (Issuer, or IssuerRegexp) match; or AllowUnsigned.
type Policy struct {
	Key                      string
	TrustedRoot              string
	Identity, IdentityRegexp string
	Issuer, IssuerRegexp     string
	AllowUnsigned            bool
}

// expected says what the policy accepts, for error messages.
func (p Policy) expected() string {
	if p.Key != "" {
		return "a cosign signature by the key " + p.Key
	}
	return fmt.Sprintf("a keyless cosign signature by identity %s issued by %s, under the trusted root %s",
		orRegexp(p.Identity, p.IdentityRegexp), orRegexp(p.Issuer, p.IssuerRegexp), p.TrustedRoot)
}

func orRegexp(exact, re string) string {
	if exact != "" {
		return fmt.Sprintf("%q", exact)
	}
	return fmt.Sprintf("matching /%s/", re)
}

// SignatureTag is the tag of the classic cosign signatures of digest.
func SignatureTag(digest string) string { return strings.Replace(digest, ":", "-", 1) + ".sig" }

// ErrUnsigned is the error of a plugin that has no signature at all.
var ErrUnsigned = errors.New("no cosign signature")

// verifySignature checks that the manifest digest of source, in repo, has
// a signature pol accepts, and returns who signed it.
func verifySignature(ctx context.Context, repo *remote.Repository, source, digest string, pol Policy) (string, error) {
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("%s (%s) refused: %s; expected %s", source, digest, fmt.Sprintf(format, args...), pol.expected())
	}
	check, err := pol.checker()
	if err != nil {
		return "", refuse("%v", err)
	}
	tag := SignatureTag(digest)
	desc, err := repo.Resolve(ctx, tag)
	if errors.Is(err, errdef.ErrNotFound) {
		return verifyBundles(ctx, repo, digest, pol, refuse)
	}
	if isUnreachable(err) { // the caller may have it verified before
		return "", fmt.Errorf("looking for its signature %s: %w", tag, err)
	}
	if err != nil {
		return "", refuse("looking for its signature %s: %v", tag, err)
	}
	if desc.Size > maxSignatureBytes {
		return "", refuse("its signature manifest claims %d bytes, more than %d", desc.Size, maxSignatureBytes)
	}
	var m ocispec.Manifest
	if err := fetchJSON(ctx, repo, desc, &m); err != nil {
		return "", refuse("its signature manifest %s: %v", tag, err)
	}
	var reasons []string
	for i, layer := range m.Layers {
		if i == maxSignatures {
			break
		}
		if layer.MediaType != SimpleSigningMediaType || layer.Size > maxSignatureBytes {
			continue
		}
		rc, err := repo.Blobs().Fetch(ctx, layer)
		if err != nil {
			reasons = append(reasons, err.Error())
			continue
		}
		body, err := content.ReadAll(rc, layer)
		rc.Close()
		if err != nil {
			reasons = append(reasons, fmt.Sprintf("signature payload %s: %v", layer.Digest, err))
			continue
		}
		signer, err := check(body, layer.Annotations)
		if err == nil {
			err = checkPayload(body, digest)
		}
		if err != nil {
			reasons = append(reasons, err.Error())
			continue
		}
		return signer, nil
	}
	if len(reasons) == 0 {
		return "", fmt.Errorf("%w: %s", ErrUnsigned, refuse("%s holds no cosign signature layer", tag))
	}
	return "", refuse("%s", strings.Join(reasons, "; "))
}

// checkPayload checks that a simple-signing payload signs digest.
func checkPayload(body []byte, digest string) error {
	var p payload.SimpleContainerImage
	if err := json.Unmarshal(body, &p); err != nil {
		return fmt.Errorf("the signed payload is not simple signing JSON: %v", err)
	}
	if got := p.Critical.Image.DockerManifestDigest; got != digest {
		return fmt.Errorf("the signature is valid but signs another manifest: critical.image.docker-manifest-digest is %q", got)
	}
	if p.Critical.Type != payload.CosignSignatureType {
		return fmt.Errorf("the signed payload's critical.type is %q, not %q", p.Critical.Type, payload.CosignSignatureType)
	}
	return nil
}

// checker returns the function that checks one signature layer (its
// payload and annotations) under the policy, and returns who signed.
func (p Policy) checker() (func([]byte, map[string]string) (string, error), error) {
	if p.Key != "" {
		v, signer, err := p.publicKey()
		if err != nil {
			return nil, err
		}
		return func(body []byte, ann map[string]string) (string, error) {
			sig, err := base64.StdEncoding.DecodeString(ann[AnnotationSignature])
			if err != nil || len(sig) == 0 {
				return "", fmt.Errorf("a signature layer has no %s annotation", AnnotationSignature)
			}
			if err := v.VerifySignature(bytes.NewReader(sig), bytes.NewReader(body)); err != nil {
				return "", fmt.Errorf("the signature does not verify with the key %s: %v", p.Key, err)
			}
			return signer, nil
		}, nil
	}
	verifyKeyless, err := p.keyless()
	if err != nil {
		return nil, err
	}
	return func(body []byte, ann map[string]string) (string, error) {
		entity, err := keylessEntity(body, ann)
		if err != nil {
			return "", err
		}
		signer, err := verifyKeyless(entity, verify.WithArtifact(bytes.NewReader(body)))
		if err != nil {
			return "", fmt.Errorf("the keyless signature does not verify: %v", err)
		}
		return signer, nil
	}, nil
}

// publicKey reads the policy's public key, and returns its verifier and
// how a signature by it is named.
func (p Policy) publicKey() (signature.Verifier, string, error) {
	pem, err := os.ReadFile(p.Key)
	if err != nil {
		return nil, "", fmt.Errorf("reading the public key: %w", err)
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(pem)
	if err != nil {
		return nil, "", fmt.Errorf("the public key %s: %w", p.Key, err)
	}
	v, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		return nil, "", fmt.Errorf("the public key %s: %w", p.Key, err)
	}
	der, err := cryptoutils.MarshalPublicKeyToDER(pub)
	if err != nil {
		return nil, "", err
	}
	fp := sha256.Sum256(der)
	return v, fmt.Sprintf("key %s (sha256:%s)", p.Key, hex.EncodeToString(fp[:])), nil
}

// bundleVerifier returns the function that verifies a sigstore bundle of
// the artifact under the policy, and returns who signed: keyless, or by the
// key, whatever key hint the bundle gives, with no transparency log entry
// or timestamp required (nor checked: a key policy names no log's key), as
// for a classic signature by key.
func (p Policy) bundleVerifier() (func(verify.SignedEntity, verify.ArtifactPolicyOption) (string, error), error) {
	if p.Key == "" {
		return p.keyless()
	}
	pub, signer, err := p.publicKey()
	if err != nil {
		return nil, err
	}
	key := root.NewExpiringKey(pub, time.Time{}, time.Time{})
	v, err := verify.NewVerifier(root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) { return key, nil }),
		verify.WithNoObserverTimestamps())
	if err != nil {
		return nil, err
	}
	return func(entity verify.SignedEntity, artifact verify.ArtifactPolicyOption) (string, error) {
		// The signature of an envelope first, on its own: sigstore-go's
		// error for a signature by another key does not say so.
		if sc, err := entity.SignatureContent(); err == nil && sc.EnvelopeContent() != nil {
			if _, err := v.Verify(entity, verify.NewPolicy(verify.WithoutArtifactUnsafe(), verify.WithKey())); err != nil {
				return "", fmt.Errorf("its signature is not by the key %s: %v", p.Key, err)
			}
		}
		if _, err := v.Verify(entity, verify.NewPolicy(artifact, verify.WithKey())); err != nil {
			return "", err
		}
		return signer, nil
	}, nil
}

// keyless returns the function that verifies a signed entity of the
// artifact under the keyless policy, and returns who signed.
func (p Policy) keyless() (func(verify.SignedEntity, verify.ArtifactPolicyOption) (string, error), error) {
	tr, err := root.NewTrustedRootFromPath(p.TrustedRoot)
	if err != nil {
		return nil, fmt.Errorf("the trusted root %s: %w", p.TrustedRoot, err)
	}
	v, err := verify.NewVerifier(tr, verify.WithTransparencyLog(1), verify.WithIntegratedTimestamps(1))
	if err != nil {
		return nil, err
	}
	id, err := verify.NewShortCertificateIdentity(p.Issuer, p.IssuerRegexp, p.Identity, p.IdentityRegexp)
	if err != nil {
		return nil, err
	}
	return func(entity verify.SignedEntity, artifact verify.ArtifactPolicyOption) (string, error) {
		res, err := v.Verify(entity, verify.NewPolicy(artifact, verify.WithCertificateIdentity(id)))
		if err != nil {
			return "", err
		}
		c := res.Signature.Certificate
		return fmt.Sprintf("%s (issuer %s)", c.SubjectAlternativeName, c.Issuer), nil
	}, nil
}

// BundleArtifactType is the artifact type, and its layer's media type, of
// the sigstore bundle cosign v3 attaches to a manifest through the OCI
// referrers API by default.
const BundleArtifactType = "application/vnd.dev.sigstore.bundle.v0.3+json"

// errEnoughReferrers stops a referrers walk that found maxSignatures
// sigstore bundles.
var errEnoughReferrers = errors.New("enough referrers")

// verifyBundles checks, for a manifest without classic cosign signatures,
// that one of the first maxSignatures sigstore bundles among its referrers
// (found with the referrers API, at most maxReferrerPages pages of it,
// else its tag schema) signs digest under pol, and returns who signed.
// refuse formats a refusal as verifySignature does.
func verifyBundles(ctx context.Context, repo *remote.Repository, digest string, pol Policy, refuse func(string, ...any) error) (string, error) {
	none := func() (string, error) {
		return "", fmt.Errorf("%w: %s", ErrUnsigned, refuse("no cosign signature (no tag %s) and no sigstore bundle among its referrers", SignatureTag(digest)))
	}
	target, err := repo.Resolve(ctx, digest)
	if err != nil {
		return "", fmt.Errorf("looking for its sigstore bundles: %w", err)
	}
	var found []ocispec.Descriptor
	err = repo.Referrers(ctx, target, BundleArtifactType, func(refs []ocispec.Descriptor) error {
		found = append(found, refs[:min(len(refs), maxSignatures-len(found))]...)
		if len(found) == maxSignatures {
			return errEnoughReferrers
		}
		return nil
	})
	if errors.Is(err, errEnoughReferrers) {
		err = nil
	}
	switch {
	case errors.Is(err, errdef.ErrNotFound) || err == nil && len(found) == 0:
		return none()
	case isUnreachable(err): // the caller may have it verified before
		return "", fmt.Errorf("looking for its sigstore bundles: %w", err)
	case errors.Is(err, errdef.ErrTooManyPages):
		return "", refuse("the registry's referrers of %s run past %d pages", digest, maxReferrerPages)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF): // oras-go reads at most MaxMetadataBytes
		return "", refuse("the registry's referrers of %s: a page is cut off or longer than %d bytes (%v)", digest, maxManifestBytes, err)
	case err != nil:
		return "", refuse("looking for its sigstore bundles: %v", err)
	}
	verifyEntity, err := pol.bundleVerifier()
	if err != nil {
		return "", refuse("%v", err)
	}
	sum, err := hex.DecodeString(strings.TrimPrefix(digest, "sha256:"))
	if err != nil {
		return "", refuse("%v", err)
	}
	var reasons []string
	for _, desc := range found {
		signer, err := verifyBundle(ctx, repo, desc, sum, verifyEntity)
		if err != nil {
			reasons = append(reasons, fmt.Sprintf("the sigstore bundle %s: %v", desc.Digest, err))
			continue
		}
		return signer, nil
	}
	return "", refuse("%s", strings.Join(reasons, "; "))
}

// verifyBundle verifies the sigstore bundle in the referrer desc as a
// signature of the manifest whose sha256 is sum, with verifyEntity.
func verifyBundle(ctx context.Context, repo *remote.Repository, desc ocispec.Descriptor, sum []byte,
	verifyEntity func(verify.SignedEntity, verify.ArtifactPolicyOption) (string, error)) (string, error) {
	if desc.Size > maxSignatureBytes {
		return "", fmt.Errorf("its manifest claims %d bytes, more than %d", desc.Size, maxSignatureBytes)
	}
	var m ocispec.Manifest
	if err := fetchJSON(ctx, repo, desc, &m); err != nil {
		return "", err
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != BundleArtifactType || m.Layers[0].Size > maxSignatureBytes {
		return "", fmt.Errorf("its manifest does not hold one bundle layer of at most %d bytes", maxSignatureBytes)
	}
	rc, err := repo.Blobs().Fetch(ctx, m.Layers[0])
	if err != nil {
		return "", err
	}
	body, err := content.ReadAll(rc, m.Layers[0])
	rc.Close()
	if err != nil {
		return "", err
	}
	var b bundle.Bundle
	if err := b.UnmarshalJSON(body); err != nil {
		return "", err
	}
	signer, err := verifyEntity(&b, verify.WithArtifactDigest("sha256", sum))
	if err != nil {
		return "", fmt.Errorf("does not verify: %v", err)
	}
	return signer, nil
}

// cosignBundle is the annotation AnnotationBundle: a Rekor entry and the
// log's signed promise to include it.
type cosignBundle struct {
	SignedEntryTimestamp []byte
	Payload              struct {
		Body           []byte `json:"body"`
		IntegratedTime int64  `json:"integratedTime"`
		LogIndex       int64  `json:"logIndex"`
		LogID          string `json:"logID"`
	}
}

// keylessEntity makes of a keyless classic cosign signature layer the
// signed entity sigstore-go verifies: certificate, message signature and
// transparency log entry.
func keylessEntity(body []byte, ann map[string]string) (verify.SignedEntity, error) {
	sig, err := base64.StdEncoding.DecodeString(ann[AnnotationSignature])
	if err != nil || len(sig) == 0 {
		return nil, fmt.Errorf("a signature layer has no %s annotation", AnnotationSignature)
	}
	certs, err := cryptoutils.UnmarshalCertificatesFromPEM([]byte(ann[AnnotationCertificate]))
	if err != nil || len(certs) == 0 {
		return nil, fmt.Errorf("a signature layer has no certificate (%s): keyless verification needs one", AnnotationCertificate)
	}
	var b cosignBundle
	if err := json.Unmarshal([]byte(ann[AnnotationBundle]), &b); err != nil {
		return nil, fmt.Errorf("a keyless signature layer has no transparency log entry (%s): %v", AnnotationBundle, err)
	}
	logID, err := hex.DecodeString(b.Payload.LogID)
	if err != nil {
		return nil, fmt.Errorf("the transparency log entry's logID: %v", err)
	}
	entry, err := tlog.NewEntry(b.Payload.Body, b.Payload.IntegratedTime, b.Payload.LogIndex, logID, b.SignedEntryTimestamp, nil) //nolint:staticcheck // the classic layout carries a Rekor v1 entry
	if err != nil {
		return nil, fmt.Errorf("the transparency log entry: %v", err)
	}
	sum := sha256.Sum256(body)
	return &classicEntity{cert: certs[0], sig: bundle.NewMessageSignature(sum[:], "SHA2_256", sig), entry: entry}, nil
}

// classicEntity is a keyless classic cosign signature as sigstore-go sees it.
type classicEntity struct {
	cert  *x509.Certificate
	sig   *bundle.MessageSignature
	entry *tlog.Entry
}

func (e *classicEntity) HasInclusionPromise() bool { return e.entry.HasInclusionPromise() }
func (e *classicEntity) HasInclusionProof() bool   { return e.entry.HasInclusionProof() }
func (e *classicEntity) SignatureContent() (verify.SignatureContent, error) {
	return e.sig, nil
}
func (e *classicEntity) Timestamps() ([][]byte, error)       { return nil, nil }
func (e *classicEntity) TlogEntries() ([]*tlog.Entry, error) { return []*tlog.Entry{e.entry}, nil }
func (e *classicEntity) Version() (string, error)            { return "v0.1", nil }
func (e *classicEntity) VerificationContent() (verify.VerificationContent, error) {
	return bundle.NewCertificate(e.cert), nil
}
