//go:build !wasip1

package plugintest

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/payload"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
)

// The classic cosign signature layout, as cosign writes it: written out
// here rather than taken from package ociplugin, whose tests use these
// helpers, so that the tests check its constants against cosign's format.
const (
	simpleSigningMediaType = "application/vnd.dev.cosign.simplesigning.v1+json"
	annotationSignature    = "dev.cosignproject.cosign/signature"
	annotationCertificate  = "dev.sigstore.cosign/certificate"
	annotationBundle       = "dev.sigstore.cosign/bundle"
)

// RepoOf returns the remote repository of an oci:// reference on a
// registry reached over plain HTTP.
func RepoOf(t testing.TB, ref string) *remote.Repository {
	t.Helper()
	r, err := registry.ParseReference(strings.TrimPrefix(ref, "oci://"))
	if err != nil {
		t.Fatal(err)
	}
	return &remote.Repository{Reference: r, PlainHTTP: true}
}

// PushBlob pushes b to repo (unless it is there) and returns its descriptor.
func PushBlob(t testing.TB, repo *remote.Repository, mediaType string, b []byte) ocispec.Descriptor {
	t.Helper()
	d := ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(b), Size: int64(len(b))}
	if err := repo.Push(context.Background(), d, bytes.NewReader(b)); err != nil && !strings.Contains(err.Error(), "exists") {
		t.Fatal(err)
	}
	return d
}

// SimpleSigning returns the cosign payload that signs the manifest dgst of
// ref.
func SimpleSigning(t testing.TB, ref, dgst string) []byte {
	t.Helper()
	r, _ := registry.ParseReference(strings.TrimPrefix(ref, "oci://"))
	b, err := json.Marshal(payload.SimpleContainerImage{Critical: payload.Critical{
		Identity: payload.Identity{DockerReference: r.Registry + "/" + r.Repository},
		Image:    payload.Image{DockerManifestDigest: dgst},
		Type:     payload.CosignSignatureType,
	}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// PushSignature pushes a signature layer of body with annotations as the
// classic cosign signature of the manifest dgst of ref: the tag
// sha256-HEX.sig.
func PushSignature(t testing.TB, ref, dgst string, body []byte, annotations map[string]string) {
	t.Helper()
	ctx := context.Background()
	repo := RepoOf(t, ref)
	layer := PushBlob(t, repo, simpleSigningMediaType, body)
	layer.Annotations = annotations
	cfg := PushBlob(t, repo, ocispec.MediaTypeImageConfig, []byte("{}"))
	desc, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "", oras.PackManifestOptions{Layers: []ocispec.Descriptor{layer}, ConfigDescriptor: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, desc, strings.Replace(dgst, ":", "-", 1)+".sig"); err != nil {
		t.Fatal(err)
	}
}

// KeySigner signs as `cosign sign --key` does: an ECDSA P-256 key, a
// simple-signing payload naming the manifest digest, its signature in the
// layer's annotation.
type KeySigner struct {
	// SV signs and verifies with the private key.
	SV *signature.ECDSASignerVerifier
	// Pub is the public key's PEM file, as verify = { key = ... } names it.
	Pub string
}

// NewKeySigner generates a key, and writes its public key to a file.
func NewKeySigner(t testing.TB) *KeySigner {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sv, err := signature.LoadECDSASignerVerifier(priv, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := cryptoutils.MarshalPublicKeyToPEM(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	pub := filepath.Join(t.TempDir(), "cosign.pub")
	if err := os.WriteFile(pub, pem, 0o644); err != nil {
		t.Fatal(err)
	}
	return &KeySigner{SV: sv, Pub: pub}
}

// Sign signs the manifest dgst of ref with the key, and pushes the
// signature.
func (s *KeySigner) Sign(t testing.TB, ref, dgst string) {
	t.Helper()
	body := SimpleSigning(t, ref, dgst)
	PushSignature(t, ref, dgst, body, map[string]string{annotationSignature: s.SignatureOf(t, body)})
}

// SignatureOf returns the base64 signature of body, as the annotation
// holds it.
func (s *KeySigner) SignatureOf(t testing.TB, body []byte) string {
	t.Helper()
	sig, err := s.SV.SignMessage(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(sig)
}

// KeylessSigner signs as `cosign sign` does without a key, against
// sigstore-go's virtual Fulcio and Rekor: a certificate for an identity
// and issuer, and the Rekor entry with its signed entry timestamp in the
// cosign bundle annotation.
type KeylessSigner struct {
	vs *ca.VirtualSigstore
	// Root is the trusted root file, as verify = { trusted_root = ... }
	// names it.
	Root string
}

// NewKeylessSigner starts a virtual sigstore and writes its trusted root.
func NewKeylessSigner(t testing.TB) *KeylessSigner {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	// The virtual logs' IDs are their hex key IDs as text; a trusted root
	// file holds the raw key IDs.
	rekor := vs.RekorLogs()
	for id, l := range rekor {
		if l.ID, err = hex.DecodeString(id); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, vs.FulcioCertificateAuthorities(), nil, vs.TimestampingAuthorities(), rekor)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "trusted_root.json")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return &KeylessSigner{vs: vs, Root: file}
}

// Sign signs the manifest dgst of ref as identity of issuer, and pushes
// the signature.
func (s *KeylessSigner) Sign(t testing.TB, ref, dgst, identity, issuer string) {
	t.Helper()
	body := SimpleSigning(t, ref, dgst)
	PushSignature(t, ref, dgst, body, s.Annotations(t, identity, issuer, body))
}

// Annotations signs body as identity of issuer and returns the cosign
// annotations of the signature layer.
func (s *KeylessSigner) Annotations(t testing.TB, identity, issuer string, body []byte) map[string]string {
	t.Helper()
	e, err := s.vs.Sign(identity, issuer, body)
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := e.VerificationContent()
	certPEM, _ := cryptoutils.MarshalCertificateToPEM(vc.Certificate())
	sc, _ := e.SignatureContent()
	entries, _ := e.TlogEntries()
	tle := entries[0].TransparencyLogEntry()
	logID := hex.EncodeToString(tle.GetLogId().GetKeyId())
	set, err := s.vs.RekorSignPayload(tlog.RekorPayload{Body: base64.StdEncoding.EncodeToString(tle.GetCanonicalizedBody()),
		IntegratedTime: tle.GetIntegratedTime(), LogIndex: tle.GetLogIndex(), LogID: logID})
	if err != nil {
		t.Fatal(err)
	}
	var bundle struct {
		SignedEntryTimestamp []byte
		Payload              struct {
			Body           []byte `json:"body"`
			IntegratedTime int64  `json:"integratedTime"`
			LogIndex       int64  `json:"logIndex"`
			LogID          string `json:"logID"`
		}
	}
	bundle.SignedEntryTimestamp = set
	bundle.Payload.Body, bundle.Payload.IntegratedTime, bundle.Payload.LogIndex, bundle.Payload.LogID =
		tle.GetCanonicalizedBody(), tle.GetIntegratedTime(), tle.GetLogIndex(), logID
	bb, _ := json.Marshal(bundle)
	return map[string]string{
		annotationSignature:   base64.StdEncoding.EncodeToString(sc.Signature()),
		annotationCertificate: string(certPEM),
		annotationBundle:      string(bb),
	}
}

// bundleArtifactType is the artifact type, and the layer's media type, of
// the sigstore bundle cosign v3 attaches to an image by default.
const bundleArtifactType = "application/vnd.dev.sigstore.bundle.v0.3+json"

// AttachBundle signs the manifest subject of ref as identity of issuer as
// `cosign sign` v3 does by default: an in-toto statement whose subject is
// the manifest digest signed, dsse-wrapped, by a certificate of the
// virtual Fulcio, logged with an inclusion proof in the virtual Rekor, in
// a v0.3 sigstore bundle attached to the manifest dgst of ref through the
// referrers API (the referrers tag schema on registries without it).
// subject is the digest the statement names: dgst, or another to attach a
// bundle that signs something else.
func (s *KeylessSigner) AttachBundle(t testing.TB, ref, dgst, subject, identity, issuer string) {
	t.Helper()
	e, err := s.vs.AttestAtTime(identity, issuer, cosignStatement(ref, subject), time.Now().Add(5*time.Minute), true)
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := e.VerificationContent()
	sc, _ := e.SignatureContent()
	env := sc.EnvelopeContent().RawEnvelope()
	payloadBytes, _ := base64.StdEncoding.DecodeString(env.Payload)
	sig, _ := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
	entries, _ := e.TlogEntries()
	tle := entries[0].TransparencyLogEntry()
	tle.KindVersion = &protorekor.KindVersion{Kind: "dsse", Version: "0.0.1"} // as Rekor's dsse type writes it
	set, err := s.vs.RekorSignPayload(tlog.RekorPayload{Body: base64.StdEncoding.EncodeToString(tle.GetCanonicalizedBody()),
		IntegratedTime: tle.GetIntegratedTime(), LogIndex: tle.GetLogIndex(), LogID: hex.EncodeToString(tle.GetLogId().GetKeyId())})
	if err != nil {
		t.Fatal(err)
	}
	tle.InclusionPromise = &protorekor.InclusionPromise{SignedEntryTimestamp: set}
	attachBundle(t, ref, dgst, &protobundle.VerificationMaterial{
		Content:     &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: vc.Certificate().Raw}},
		TlogEntries: []*protorekor.TransparencyLogEntry{tle},
	}, &protodsse.Envelope{Payload: payloadBytes, PayloadType: env.PayloadType, Signatures: []*protodsse.Signature{{Sig: sig}}})
}

// AttachBundle signs the manifest subject of ref with the key as `cosign
// sign --key` v3 does without a transparency log (--tlog-upload=false):
// the in-toto statement of KeylessSigner.AttachBundle, dsse-wrapped and
// signed with the key, in a v0.3 sigstore bundle whose verification
// material is the key's hint, attached to the manifest dgst of ref through
// the referrers API.
func (s *KeySigner) AttachBundle(t testing.TB, ref, dgst, subject string) {
	t.Helper()
	const payloadType = "application/vnd.in-toto+json"
	statement := cosignStatement(ref, subject)
	sig, err := s.SV.SignMessage(bytes.NewReader(dsse.PAE(payloadType, statement)))
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := s.SV.PublicKey()
	der, err := cryptoutils.MarshalPublicKeyToDER(pub)
	if err != nil {
		t.Fatal(err)
	}
	hint := sha256.Sum256(der)
	attachBundle(t, ref, dgst, &protobundle.VerificationMaterial{
		Content: &protobundle.VerificationMaterial_PublicKey{PublicKey: &protocommon.PublicKeyIdentifier{Hint: base64.StdEncoding.EncodeToString(hint[:])}},
	}, &protodsse.Envelope{Payload: statement, PayloadType: payloadType, Signatures: []*protodsse.Signature{{Sig: sig}}})
}

// cosignStatement returns the in-toto statement `cosign sign` v3 signs
// for the manifest subject of ref.
func cosignStatement(ref, subject string) []byte {
	hexDigest, _ := strings.CutPrefix(subject, "sha256:")
	statement, _ := json.Marshal(map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []map[string]any{{"name": strings.TrimPrefix(ref, "oci://"), "digest": map[string]string{"sha256": hexDigest}}},
		"predicateType": "https://sigstore.dev/cosign/sign/v1",
		"predicate":     map[string]any{},
	})
	return statement
}

// attachBundle pushes the v0.3 sigstore bundle of vm and env, attached to
// the manifest dgst of ref through the referrers API.
func attachBundle(t testing.TB, ref, dgst string, vm *protobundle.VerificationMaterial, env *protodsse.Envelope) {
	t.Helper()
	b, err := (&bundle.Bundle{Bundle: &protobundle.Bundle{
		MediaType:            bundleArtifactType,
		VerificationMaterial: vm,
		Content:              &protobundle.Bundle_DsseEnvelope{DsseEnvelope: env},
	}}).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	repo := RepoOf(t, ref)
	layer := PushBlob(t, repo, bundleArtifactType, b)
	target, err := repo.Resolve(ctx, dgst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, bundleArtifactType,
		oras.PackManifestOptions{Layers: []ocispec.Descriptor{layer}, Subject: &target}); err != nil {
		t.Fatal(err)
	}
}
