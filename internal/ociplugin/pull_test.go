package ociplugin

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/mcphost/mcphost/internal/testrig/plugintest"
)

// module is what the tests push as a plugin: the wasm magic and version,
// then filler; the puller does not run it.
func module(fill string) []byte {
	return append([]byte("\x00asm\x01\x00\x00\x00"), fill...)
}

// newPuller returns a puller with a fresh cache and lock file.
func newPuller(t *testing.T) *Puller {
	t.Helper()
	dir := t.TempDir()
	return &Puller{CacheDir: filepath.Join(dir, "cache"), Lock: OpenLock(filepath.Join(dir, "mcphost.lock")), MaxBytes: 20 << 20, Timeout: 30 * time.Second,
		Credentials: func(context.Context, string) (auth.Credential, error) { return auth.EmptyCredential, nil }}
}

// pushManifest pushes an image manifest of layers under tag, and returns
// its digest.
func pushManifest(t *testing.T, ref string, layers ...ocispec.Descriptor) string {
	t.Helper()
	repo := plugintest.RepoOf(t, ref)
	cfg := plugintest.PushBlob(t, repo, ocispec.MediaTypeImageConfig, []byte(`{"architecture":"amd64","os":"linux"}`))
	m, err := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest, Config: cfg, Layers: layers})
	if err != nil {
		t.Fatal(err)
	}
	d := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromBytes(m), Size: int64(len(m))}
	r, _ := registry.ParseReference(strings.TrimPrefix(ref, "oci://"))
	if err := repo.PushReference(context.Background(), d, bytes.NewReader(m), r.Reference); err != nil {
		t.Fatal(err)
	}
	return d.Digest.String()
}

// pushImage pushes wasm in hyper-mcp's layout: an image whose one layer is
// a gzipped tar holding /plugin.wasm.
func pushImage(t *testing.T, ref string, wasm []byte) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, b := range map[string][]byte{"README": []byte("a plugin"), ImageWasmPath: wasm} {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(b)
	}
	tw.Close()
	zw.Close()
	layer := plugintest.PushBlob(t, plugintest.RepoOf(t, ref), ocispec.MediaTypeImageLayerGzip, buf.Bytes())
	return pushManifest(t, ref, layer)
}

func TestPullWasmArtifactByTagAndDigestWithKey(t *testing.T) {
	reg := plugintest.StartRegistry(t)
	p, key := newPuller(t), plugintest.NewKeySigner(t)
	ref := "oci://" + reg.Addr + "/plugins/echo:1.0"
	wasm := module("echo")
	dgst, err := p.Push(context.Background(), ref, wasm, map[string]string{AnnotationManifest: `{"abi":1}`})
	if err != nil {
		t.Fatal(err)
	}
	key.Sign(t, ref, dgst)
	pol := Policy{Key: key.Pub}
	got, err := p.Pull(context.Background(), ref, pol)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Wasm, wasm) || got.Digest != dgst || got.Layout != LayoutWasm || !strings.Contains(got.Signer, "key "+key.Pub) ||
		got.Annotations[AnnotationManifest] != `{"abi":1}` {
		t.Errorf("pulled %+v", got)
	}
	if pin, _ := p.Lock.Get(ref); pin != dgst {
		t.Errorf("lock pins %q, want %q", pin, dgst)
	}
	for _, d := range []string{dgst, digest.FromBytes(wasm).String()} {
		if _, err := os.Stat(filepath.Join(p.CacheDir, "plugins", "sha256", strings.TrimPrefix(d, "sha256:"))); err != nil {
			t.Errorf("not in the cache: %v", err)
		}
	}
	byDigest := "oci://" + reg.Addr + "/plugins/echo@" + dgst
	got, err = newPuller(t).Pull(context.Background(), byDigest, pol)
	if err != nil || !bytes.Equal(got.Wasm, wasm) {
		t.Fatalf("by digest: %v", err)
	}
}

func TestPullImageLayout(t *testing.T) {
	reg := plugintest.StartRegistry(t)
	ref := "oci://" + reg.Addr + "/hyper/time-plugin:v2"
	wasm := module("time")
	dgst := pushImage(t, ref, wasm)
	got, err := newPuller(t).Pull(context.Background(), ref, Policy{AllowUnsigned: true})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Wasm, wasm) || got.Digest != dgst || got.Layout != LayoutImage || !strings.Contains(got.Signer, "allow_unsigned") {
		t.Errorf("pulled %+v", got)
	}
}

func TestMovedTagKeepsThePinUntilUpdate(t *testing.T) {
	reg := plugintest.StartRegistry(t)
	var logs bytes.Buffer
	p := newPuller(t)
	p.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	ref := "oci://" + reg.Addr + "/plugins/moving:latest"
	ctx, pol := context.Background(), Policy{AllowUnsigned: true}
	first, _ := p.Push(ctx, ref, module("one"), nil)
	if _, err := p.Pull(ctx, ref, pol); err != nil {
		t.Fatal(err)
	}
	second, _ := p.Push(ctx, ref, module("two"), nil)
	got, err := p.Pull(ctx, ref, pol)
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest != first || !bytes.Equal(got.Wasm, module("one")) {
		t.Errorf("after the tag moved: pulled %s, want the pinned %s", got.Digest, first)
	}
	if !strings.Contains(logs.String(), "tag moved") || !strings.Contains(logs.String(), second) {
		t.Errorf("the move is not logged:\n%s", logs.String())
	}
	if got, err = p.Update(ctx, ref, pol); err != nil || got.Digest != second {
		t.Fatalf("update: %v, %v", got, err)
	}
	if pin, _ := p.Lock.Get(ref); pin != second {
		t.Errorf("lock pins %s after update, want %s", pin, second)
	}
}

func TestRefusals(t *testing.T) {
	reg := plugintest.StartRegistry(t)
	ctx := context.Background()
	key, other := plugintest.NewKeySigner(t), plugintest.NewKeySigner(t)
	push := func(name string) (string, string) {
		ref := "oci://" + reg.Addr + "/bad/" + name + ":1"
		dgst, err := newPuller(t).Push(ctx, ref, module(name), nil)
		if err != nil {
			t.Fatal(err)
		}
		return ref, dgst
	}
	cases := map[string]func() (string, Policy, string){
		"missing signature": func() (string, Policy, string) {
			ref, dgst := push("unsigned")
			return ref, Policy{Key: key.Pub}, "no cosign signature (no tag " + SignatureTag(dgst) + ")"
		},
		"other key": func() (string, Policy, string) {
			ref, dgst := push("otherkey")
			other.Sign(t, ref, dgst)
			return ref, Policy{Key: key.Pub}, "the signature does not verify with the key " + key.Pub
		},
		"tampered payload": func() (string, Policy, string) {
			ref, dgst := push("tampered")
			body := plugintest.SimpleSigning(t, ref, dgst)
			plugintest.PushSignature(t, ref, dgst, append(body, ' '), map[string]string{AnnotationSignature: key.SignatureOf(t, body)})
			return ref, Policy{Key: key.Pub}, "the signature does not verify with the key"
		},
		"signature of another manifest": func() (string, Policy, string) {
			ref, dgst := push("copied")
			body := plugintest.SimpleSigning(t, ref, digest.FromString("another").String())
			plugintest.PushSignature(t, ref, dgst, body, map[string]string{AnnotationSignature: key.SignatureOf(t, body)})
			return ref, Policy{Key: key.Pub}, "signs another manifest"
		},
		"tampered blob": func() (string, Policy, string) {
			ref, _ := push("blob")
			wasm := module("blob")
			file := reg.BlobPath(digest.FromBytes(wasm).String())
			if err := os.WriteFile(file, module("BLOB"), 0o644); err != nil {
				t.Fatal(err)
			}
			return ref, Policy{AllowUnsigned: true}, "does not match its digest (tampered or corrupted); refused"
		},
		"descriptor of 2 GiB": func() (string, Policy, string) {
			ref := "oci://" + reg.Addr + "/bad/huge:1"
			l := plugintest.PushBlob(t, plugintest.RepoOf(t, ref), WasmLayerMediaType, module("huge"))
			l.Size = 2 << 30
			pushManifest(t, ref, l)
			return ref, Policy{AllowUnsigned: true}, "claims 2147483648 bytes, more than the 20 MiB max_module_mib allows; refused before download"
		},
		"blob longer than its descriptor": func() (string, Policy, string) {
			ref := "oci://" + reg.Addr + "/bad/long:1"
			l := plugintest.PushBlob(t, plugintest.RepoOf(t, ref), WasmLayerMediaType, module("long and longer"))
			l.Size -= 6
			pushManifest(t, ref, l)
			return ref, Policy{AllowUnsigned: true}, "is not the 17 bytes its descriptor says (refused)"
		},
		"no module": func() (string, Policy, string) {
			ref := "oci://" + reg.Addr + "/bad/empty:1"
			l := plugintest.PushBlob(t, plugintest.RepoOf(t, ref), "application/json", []byte("{}"))
			pushManifest(t, ref, l)
			return ref, Policy{AllowUnsigned: true}, "no wasm module"
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			ref, pol, want := c()
			got, err := newPuller(t).Pull(ctx, ref, pol)
			if err == nil {
				t.Fatalf("pulled %+v", got)
			}
			if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), ref) {
				t.Errorf("error %q\nwant it to name %s and say %q", err, ref, want)
			}
		})
	}
}

// The identity and issuer the keyless tests sign as.
const (
	keylessIdentity = "https://github.com/owner/repo/.github/workflows/release.yml@refs/tags/v1"
	keylessIssuer   = "https://token.actions.githubusercontent.com"
)

// keylessSetup starts a registry and a keyless signer, and returns them
// with a policy that trusts the signer's root for keylessIdentity's owner and
// keylessIssuer.
func keylessSetup(t *testing.T) (*plugintest.Registry, *plugintest.KeylessSigner, Policy) {
	signer := plugintest.NewKeylessSigner(t)
	return plugintest.StartRegistry(t), signer, Policy{TrustedRoot: signer.Root, IdentityRegexp: "^https://github.com/owner/", Issuer: keylessIssuer}
}

func TestKeyless(t *testing.T) {
	reg, signer, pol := keylessSetup(t)
	push := newPlugins(t, reg, "keyless")
	signed := func(id, iss string, tamper bool) string {
		ref, dgst := push()
		body := plugintest.SimpleSigning(t, ref, dgst)
		ann := signer.Annotations(t, id, iss, body)
		if tamper {
			body = bytes.Replace(body, []byte("cosign container image signature"), []byte("cosign container image signaturE"), 1)
		}
		plugintest.PushSignature(t, ref, dgst, body, ann)
		return ref
	}
	wantSigner(t, signed(keylessIdentity, keylessIssuer, false), pol, keylessIdentity+" (issuer "+keylessIssuer+")")
	wantRefusals(t, "expected a keyless cosign signature", map[string]refusal{
		"other identity":   {signed("https://github.com/mallory/repo/.github/workflows/x.yml@refs/heads/main", keylessIssuer, false), "expected SAN value to match regex", pol},
		"other issuer":     {signed(keylessIdentity, "https://accounts.example.com", false), "expected issuer value", pol},
		"tampered payload": {signed(keylessIdentity, keylessIssuer, true), "does not match artifact", pol},
		"other root":       {signed(keylessIdentity, keylessIssuer, false), "not enough verified log entries", Policy{TrustedRoot: plugintest.NewKeylessSigner(t).Root, IdentityRegexp: ".*", IssuerRegexp: ".*"}},
	})
}

// newPlugins returns a function that pushes a new plugin, each to a
// repository of its own under path in reg, and returns its reference and
// manifest digest.
func newPlugins(t *testing.T, reg *plugintest.Registry, path string) func() (ref, dgst string) {
	n := 0
	return func() (string, string) {
		t.Helper()
		n++
		ref := fmt.Sprintf("oci://%s/%s/p%d:1", reg.Addr, path, n)
		dgst, err := newPuller(t).Push(context.Background(), ref, module(ref), nil)
		if err != nil {
			t.Fatal(err)
		}
		return ref, dgst
	}
}

// wantSigner checks, in a subtest "good", that ref is pulled under pol
// and signed by signer.
func wantSigner(t *testing.T, ref string, pol Policy, signer string) {
	t.Run("good", func(t *testing.T) {
		got, err := newPuller(t).Pull(context.Background(), ref, pol)
		if err != nil {
			t.Fatal(err)
		}
		if got.Signer != signer {
			t.Errorf("signer %q, want %q", got.Signer, signer)
		}
	})
}

// refusal is a pull of ref under pol that must fail with an error holding
// want.
type refusal struct {
	ref, want string
	pol       Policy
}

// wantRefusals checks each refusal in a subtest of its name; every error
// also holds also.
func wantRefusals(t *testing.T, also string, cases map[string]refusal) {
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := newPuller(t).Pull(context.Background(), c.ref, c.pol)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), also) {
				t.Errorf("error %v\nwant %q and %q", err, c.want, also)
			}
		})
	}
}

func TestSlowRegistryIsBoundedByTheTimeout(t *testing.T) {
	reg := plugintest.StartRegistry(t)
	target, _ := url.Parse("http://" + reg.Addr)
	proxy := httputil.NewSingleHostReverseProxy(target)
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(time.Minute):
		case <-r.Context().Done():
			return
		}
		proxy.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(slow)
	t.Cleanup(srv.Close)
	p := newPuller(t)
	p.Timeout = 500 * time.Millisecond
	start := time.Now()
	_, err := p.Pull(context.Background(), "oci://"+strings.TrimPrefix(srv.URL, "http://")+"/plugins/slow:1", Policy{AllowUnsigned: true})
	if err == nil || !strings.Contains(err.Error(), "took longer than pull_timeout (500ms)") {
		t.Errorf("error %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
}

func TestUnreachableRegistry(t *testing.T) {
	_, err := newPuller(t).Pull(context.Background(), "oci://127.0.0.1:1/plugins/none:1", Policy{AllowUnsigned: true})
	if err == nil || !strings.Contains(err.Error(), "oci://127.0.0.1:1/plugins/none:1: resolving the tag") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("error %v", err)
	}
}

// proxy returns a registry address that forwards to reg until the returned
// function closes it: then the registry is unreachable at that address.
func proxy(t *testing.T, reg *plugintest.Registry) (string, func()) {
	t.Helper()
	target, _ := url.Parse("http://" + reg.Addr)
	srv := httptest.NewServer(httputil.NewSingleHostReverseProxy(target))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), srv.Close
}

// hostileRegistry is a real registry but for the requests its hostile
// handler answers.
type hostileRegistry struct {
	addr    string
	hits    atomic.Int64 // requests the hostile handler answered
	written atomic.Int64 // bytes it wrote
}

// startHostile starts a hostileRegistry in front of reg whose hostile
// handler answers the requests that match, n counting them from 1.
func startHostile(t *testing.T, reg *plugintest.Registry, match func(*http.Request) bool,
	answer func(w http.ResponseWriter, r *http.Request, n int64)) *hostileRegistry {
	t.Helper()
	target, _ := url.Parse("http://" + reg.Addr)
	forward := httputil.NewSingleHostReverseProxy(target)
	h := &hostileRegistry{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !match(r) {
			forward.ServeHTTP(w, r)
			return
		}
		answer(countingWriter{w, &h.written}, r, h.hits.Add(1))
	}))
	t.Cleanup(srv.Close)
	h.addr = strings.TrimPrefix(srv.URL, "http://")
	return h
}

// countingWriter counts in n the bytes written to its ResponseWriter.
type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c countingWriter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n.Add(int64(n))
	return n, err
}

// TestHugeManifestIsRefusedBeforeDownload proves a registry that answers
// a manifest with the right digest but a Content-Length of 1 TiB, and
// bytes without end, is refused before its body is read, naming the size,
// rather than read until pull_timeout.
func TestHugeManifestIsRefusedBeforeDownload(t *testing.T) {
	reg := plugintest.StartRegistry(t)
	h := startHostile(t, reg, func(r *http.Request) bool {
		return r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/manifests/sha256:")
	}, func(w http.ResponseWriter, r *http.Request, _ int64) {
		w.Header().Set("Content-Type", ocispec.MediaTypeImageManifest)
		w.Header().Set("Docker-Content-Digest", path.Base(r.URL.Path))
		w.Header().Set("Content-Length", strconv.Itoa(1<<40))
		chunk := bytes.Repeat([]byte(" "), 64<<10)
		for range 1 << 10 { // 64 MiB at most: the puller hangs up well before
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	dgst, err := newPuller(t).Push(context.Background(), "oci://"+reg.Addr+"/hostile/manifest:1", module("manifest"), nil)
	if err != nil {
		t.Fatal(err)
	}
	byDigest := "oci://" + h.addr + "/hostile/manifest@" + dgst
	p := newPuller(t)
	p.Timeout = 10 * time.Second
	start := time.Now()
	_, err = p.Pull(context.Background(), byDigest, Policy{AllowUnsigned: true})
	if want := fmt.Sprintf("%s: manifest %s claims %d bytes, more than %d; refused before download", byDigest, dgst, 1<<40, maxManifestBytes); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v\nwant %q", err, want)
	}
	if got := h.written.Load(); got > 16<<20 {
		t.Errorf("the registry wrote %d bytes of the manifest before the puller hung up, want at most 16 MiB", got)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
}

// TestVerifiedDigestStartsOfflineFromTheCache: once a digest is verified,
// the cache records it with the policy it was verified under, and a pull
// with the registry unreachable serves it from the cache under that same
// policy; under a changed policy (another key, the same key file with
// other content, another keyless identity) it must be verified again, so
// it is refused offline, saying so.
func TestVerifiedDigestStartsOfflineFromTheCache(t *testing.T) {
	reg := plugintest.StartRegistry(t)
	addr, cut := proxy(t, reg)
	ctx := context.Background()
	p, key := newPuller(t), plugintest.NewKeySigner(t)
	var logs bytes.Buffer
	p.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	ref := "oci://" + addr + "/plugins/offline:1"
	wasm := module("offline")
	dgst, err := p.Push(ctx, ref, wasm, nil)
	if err != nil {
		t.Fatal(err)
	}
	key.Sign(t, ref, dgst)
	pol := Policy{Key: key.Pub}
	if _, err := p.Pull(ctx, ref, pol); err != nil {
		t.Fatal(err)
	}
	byDigest := "oci://" + addr + "/plugins/offline@" + dgst
	if _, err := p.Pull(ctx, byDigest, pol); err != nil {
		t.Fatal(err)
	}
	cut()

	for _, src := range []string{ref, byDigest} {
		got, err := p.Pull(ctx, src, pol)
		if err != nil {
			t.Fatalf("%s offline, verified before under the same policy: %v", src, err)
		}
		if !bytes.Equal(got.Wasm, wasm) || got.Digest != dgst || !strings.Contains(got.Signer, "key "+key.Pub) || !strings.Contains(got.Signer, "verified") {
			t.Errorf("%s offline: pulled %+v", src, got)
		}
	}
	if !logHas(logs.String(), "level=WARN", "registry unreachable", dgst) {
		t.Errorf("the offline start is not logged:\n%s", logs.String())
	}

	sameFileOtherKey := plugintest.NewKeySigner(t)
	pem, _ := os.ReadFile(sameFileOtherKey.Pub)
	changedFile := filepath.Join(t.TempDir(), "cosign.Pub")
	old, _ := os.ReadFile(key.Pub)
	os.WriteFile(changedFile, old, 0o644)
	if _, err := p.Pull(ctx, ref, Policy{Key: changedFile}); err == nil {
		t.Error("offline under another key file (same key): want a refusal: the policy names another file")
	}
	os.WriteFile(changedFile, pem, 0o644)
	for name, pol := range map[string]Policy{
		"other key":                  {Key: plugintest.NewKeySigner(t).Pub},
		"key file's content changed": {Key: changedFile},
		"keyless":                    {TrustedRoot: plugintest.NewKeylessSigner(t).Root, Identity: "me", Issuer: "https://issuer"},
	} {
		_, err := p.Pull(ctx, ref, pol)
		if err == nil || !strings.Contains(err.Error(), ref) || !strings.Contains(err.Error(), dgst) ||
			!strings.Contains(err.Error(), "registry unreachable") || !strings.Contains(err.Error(), "verified under another policy; it must be verified again") {
			t.Errorf("%s, offline: error %v", name, err)
		}
	}
	if _, err := p.Pull(ctx, "oci://"+addr+"/plugins/never@"+digest.FromString("x").String(), pol); err == nil ||
		!strings.Contains(err.Error(), "never verified") {
		t.Errorf("a digest never verified, offline: %v", err)
	}
}

// TestReachableRegistryIsBelievedOverTheRecord: a recorded verification
// stands in only for a registry that cannot be asked: one that answers
// that the signature is gone is believed.
func TestReachableRegistryIsBelievedOverTheRecord(t *testing.T) {
	reg := plugintest.StartRegistry(t)
	ctx := context.Background()
	p, key := newPuller(t), plugintest.NewKeySigner(t)
	ref := "oci://" + reg.Addr + "/plugins/revoked:1"
	dgst, err := p.Push(ctx, ref, module("revoked"), nil)
	if err != nil {
		t.Fatal(err)
	}
	key.Sign(t, ref, dgst)
	if _, err := p.Pull(ctx, ref, Policy{Key: key.Pub}); err != nil {
		t.Fatal(err)
	}
	repo := plugintest.RepoOf(t, ref)
	sig, err := repo.Resolve(ctx, SignatureTag(dgst))
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Delete(ctx, sig); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Pull(ctx, ref, Policy{Key: key.Pub}); err == nil || !strings.Contains(err.Error(), "no cosign signature") {
		t.Errorf("the signature deleted: %v", err)
	}
}

// logHas reports whether a line of log holds every part.
func logHas(log string, parts ...string) bool {
	for _, line := range strings.Split(log, "\n") {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(line, p)
		}
		if ok {
			return true
		}
	}
	return false
}

// TestKeylessBundleThroughReferrers proves a plugin signed only as cosign
// v3 signs by default, a sigstore bundle attached through the referrers
// API (here its tag schema: distribution 2.8 has no such API), is verified
// keyless: accepted when it signs this manifest by the right identity;
// refused, each with its own message, by another identity, another issuer,
// or when it signs another manifest; and under a key policy, which it
// cannot satisfy.
func TestKeylessBundleThroughReferrers(t *testing.T) {
	reg, signer, pol := keylessSetup(t)
	push := newPlugins(t, reg, "bundle")
	attached := func(id, iss string, otherSubject bool) string {
		ref, dgst := push()
		subject := dgst
		if otherSubject {
			subject = digest.FromString("another manifest").String()
		}
		signer.AttachBundle(t, ref, dgst, subject, id, iss)
		return ref
	}
	wantSigner(t, attached(keylessIdentity, keylessIssuer, false), pol, keylessIdentity+" (issuer "+keylessIssuer+")")
	wantRefusals(t, "sigstore bundle", map[string]refusal{
		"other identity": {attached("https://github.com/mallory/repo/.github/workflows/x.yml@refs/heads/main", keylessIssuer, false), "expected SAN value to match regex", pol},
		"other issuer":   {attached(keylessIdentity, "https://accounts.example.com", false), "expected issuer value", pol},
		"other manifest": {attached(keylessIdentity, keylessIssuer, true), "provided artifact digest does not match any digest in statement", pol},
		"key policy":     {attached(keylessIdentity, keylessIssuer, false), "its signature is not by the key", Policy{Key: plugintest.NewKeySigner(t).Pub}},
	})
}

// TestKeyBundleThroughReferrers proves a plugin signed only with a sigstore
// bundle made with a key, as `cosign sign --key` v3 attaches it through the
// referrers API, is verified under a key policy: accepted when the key
// signed this manifest; refused, each with its own message, when another
// key signed it, when it signs another manifest, and under a keyless
// policy, which a key cannot satisfy.
func TestKeyBundleThroughReferrers(t *testing.T) {
	reg := plugintest.StartRegistry(t)
	key, other := plugintest.NewKeySigner(t), plugintest.NewKeySigner(t)
	pol := Policy{Key: key.Pub}
	push := newPlugins(t, reg, "keybundle")
	attached := func(by *plugintest.KeySigner, otherSubject bool) string {
		ref, dgst := push()
		subject := dgst
		if otherSubject {
			subject = digest.FromString("another manifest").String()
		}
		by.AttachBundle(t, ref, dgst, subject)
		return ref
	}
	wantSigner(t, attached(key, false), pol, keySigner(t, key))
	wantRefusals(t, "sigstore bundle", map[string]refusal{
		"other key":      {attached(other, false), "its signature is not by the key " + key.Pub + ": failed to verify signature", pol},
		"other manifest": {attached(key, true), "provided artifact digest does not match any digest in statement", pol},
		"keyless policy": {attached(key, false), "does not verify", Policy{TrustedRoot: plugintest.NewKeylessSigner(t).Root, IdentityRegexp: ".*", IssuerRegexp: ".*"}},
	})
}

// keySigner is how a pull names a signature by k's key.
func keySigner(t *testing.T, k *plugintest.KeySigner) string {
	t.Helper()
	pub, err := k.SV.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	der, err := cryptoutils.MarshalPublicKeyToDER(pub)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("key %s (sha256:%x)", k.Pub, sha256.Sum256(der))
}
