// Package ociplugin fetches plugins from where the operator's config says
// they come from instead of the plugins folder: OCI registries
// (oci://REGISTRY/REPOSITORY:TAG or @sha256:DIGEST) and https URLs. It
// keeps what it fetched in a content-addressed cache
// (<cache>/plugins/sha256/HEX), pins tags to digests in a lock file
// (mcphost.lock), checks cosign signatures (a public key, or keyless under
// a sigstore trusted root) with sigstore's libraries before returning a
// byte, and pushes plugins as Wasm OCI artifacts. It returns the wasm
// module; package pluginhost checks and loads it as it would a file of the
// folder.
package ociplugin

import (
	"archive/tar"
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
)

// Media types and names of the two layouts of plugins found in registries.
const (
	// WasmLayerMediaType is the layer of a CNCF Wasm OCI artifact: the
	// module itself (as pushed by oras, wkg and mcphost plugin push).
	WasmLayerMediaType = "application/vnd.wasm.content.layer.v1+wasm"
	// WasmConfigMediaType is the config of a CNCF Wasm OCI artifact.
	WasmConfigMediaType = "application/vnd.wasm.config.v0+json"
	// ImageWasmPath is the file an image layer (a tar, usually gzipped)
	// holds the module in, as hyper-mcp's plugins are published.
	ImageWasmPath = "plugin.wasm"

	// LayoutWasm and LayoutImage name the layouts in Pulled.Layout.
	LayoutWasm  = "wasm artifact"
	LayoutImage = "image (plugin.wasm in a tar layer)"
	// LayoutHTTPS is the layout of a plugin downloaded from an https URL.
	LayoutHTTPS = "https file"

	// maxManifestBytes caps a manifest or an index.
	maxManifestBytes = 4 << 20
	// tarSlack is what a tar layer may hold beyond the module: headers,
	// other small files.
	tarSlack = 1 << 20
)

// Puller fetches plugins from their sources into a cache.
type Puller struct {
	// CacheDir is the plugin cache directory: manifests and blobs are kept
	// in CacheDir/plugins/sha256/HEX.
	CacheDir string
	// Lock pins tags to digests; nil pins nothing.
	Lock *Lock
	// MaxBytes caps the module (max_module_mib); a layer that claims more
	// is refused before it is downloaded.
	MaxBytes int64
	// Timeout bounds one Pull (pull_timeout); 0 means no bound.
	Timeout time.Duration
	// Logger receives what the puller does; nil discards it.
	Logger *slog.Logger
	// Transport is the HTTP transport; nil means http.DefaultTransport.
	Transport http.RoundTripper
	// Credentials returns registry credentials; nil means the Docker
	// configuration file and its credential helpers.
	Credentials auth.CredentialFunc
}

// Pulled is a plugin fetched from its source.
type Pulled struct {
	// Source is the source as configured.
	Source string
	// Digest is what was pulled: the manifest digest of an OCI source, the
	// file's sha256 of an https source.
	Digest string
	// Wasm is the module.
	Wasm []byte
	// Layout is how the module was packed (LayoutWasm, LayoutImage,
	// LayoutHTTPS).
	Layout string
	// Signer says who signed it, or why nobody had to.
	Signer string
	// Annotations are the manifest's annotations.
	Annotations map[string]string
}

func (p *Puller) logger() *slog.Logger {
	if p.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.Logger
}

// Pull fetches the plugin at source, checks its signature under pol and
// returns it. A tag is resolved to a digest and pinned in the lock file
// the first time; later, the pinned digest is pulled, and a tag that has
// moved is logged. Content already in the cache is not downloaded again.
// Signatures are checked against the registry, and each verification is
// recorded in the cache with the exact policy; when the registry cannot be
// asked (no connection, no answer in time), a digest recorded as verified
// under the same policy is served from the cache, and any other refused.
func (p *Puller) Pull(ctx context.Context, source string, pol Policy) (*Pulled, error) {
	return p.pull(ctx, source, pol, false)
}

// Update is Pull that resolves the tag of source anew and moves its pin
// in the lock file to the digest it points to now, once that is verified.
func (p *Puller) Update(ctx context.Context, source string, pol Policy) (*Pulled, error) {
	return p.pull(ctx, source, pol, true)
}

func (p *Puller) pull(ctx context.Context, source string, pol Policy, update bool) (*Pulled, error) {
	if p.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, p.Timeout,
			fmt.Errorf("fetching %s took longer than pull_timeout (%v)", source, p.Timeout))
		defer cancel()
	}
	pulled, err := p.pullOnce(ctx, source, pol, update)
	if err != nil && ctx.Err() != nil {
		if cause := context.Cause(ctx); cause != nil && !errors.Is(err, cause) {
			err = fmt.Errorf("%w (%v)", cause, err)
		}
	}
	return pulled, err
}

func (p *Puller) pullOnce(ctx context.Context, source string, pol Policy, update bool) (*Pulled, error) {
	if !strings.HasPrefix(source, "oci://") {
		return nil, fmt.Errorf("%s: not an oci:// source (https sources are fetched with FetchURL)", source)
	}
	ref, err := registry.ParseReference(strings.TrimPrefix(source, "oci://"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	repo, err := p.repository(ref)
	if err != nil {
		return nil, err
	}
	dgst, err := p.digestOf(ctx, repo, source, ref, update)
	if err != nil {
		return nil, err
	}
	out := &Pulled{Source: source, Digest: dgst}
	if pol.AllowUnsigned {
		out.Signer = "unsigned (allow_unsigned = true)"
	} else {
		out.Signer, err = verifySignature(ctx, repo, source, dgst, pol)
		switch {
		case err == nil:
			p.record(source, dgst, pol, out.Signer)
		case isUnreachable(err):
			if out.Signer, err = p.verifiedBefore(source, dgst, pol, err); err != nil {
				return nil, err
			}
		default:
			return nil, err
		}
	}
	out.Wasm, out.Layout, out.Annotations, err = p.fetchModule(ctx, repo, source, dgst)
	if err != nil {
		return nil, err
	}
	if update || ref.ValidateReferenceAsDigest() != nil {
		if err := p.pin(source, dgst); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// digestOf returns the manifest digest to pull: the reference's own, the
// lock file's pin of a tag (unless update), or what the tag resolves to.
func (p *Puller) digestOf(ctx context.Context, repo *remote.Repository, source string, ref registry.Reference, update bool) (string, error) {
	if ref.ValidateReferenceAsDigest() == nil {
		return ref.Reference, nil
	}
	var pinned string
	if p.Lock != nil && !update {
		var err error
		if pinned, err = p.Lock.Get(source); err != nil {
			return "", err
		}
	}
	desc, err := repo.Resolve(ctx, ref.Reference)
	switch {
	case err != nil && pinned != "":
		p.logger().Warn("tag not resolved; pulling the pinned digest", "source", source, "digest", pinned, "err", err)
		return pinned, nil
	case err != nil:
		return "", fmt.Errorf("%s: resolving the tag: %w", source, err)
	case pinned != "" && desc.Digest.String() != pinned:
		p.logger().Warn("tag moved; serving the digest mcphost.lock pins (mcphost plugin update NAME follows the tag)",
			"source", source, "pinned", pinned, "tag_now", desc.Digest.String())
		return pinned, nil
	case pinned == "":
		p.logger().Info("tag resolved", "source", source, "digest", desc.Digest.String())
	}
	return desc.Digest.String(), nil
}

// pin records source's digest in the lock file, if any.
func (p *Puller) pin(source, dgst string) error {
	if p.Lock == nil {
		return nil
	}
	old, err := p.Lock.Get(source)
	if err != nil || old == dgst {
		return err
	}
	if err := p.Lock.Set(source, dgst); err != nil {
		return err
	}
	p.logger().Info("tag pinned", "source", source, "digest", dgst, "previous", old, "lock", p.Lock.Path())
	return nil
}

// repository returns the remote repository of ref: over plain HTTP on a
// loopback address, over HTTPS elsewhere, with the Docker credentials.
func (p *Puller) repository(ref registry.Reference) (*remote.Repository, error) {
	creds := p.Credentials
	if creds == nil {
		store, err := credentials.NewStoreFromDocker(credentials.StoreOptions{})
		if err != nil {
			p.logger().Warn("docker credentials not read; pulling anonymously", "err", err)
		} else {
			creds = credentials.Credential(store)
		}
	}
	repo := &remote.Repository{
		Reference: ref,
		PlainHTTP: IsLoopback(ref.Registry),
		Client: &auth.Client{
			Client:     &http.Client{Transport: cmp.Or[http.RoundTripper](p.Transport, http.DefaultTransport)},
			Cache:      auth.NewCache(),
			Credential: creds,
		},
		MaxMetadataBytes:     maxManifestBytes,
		ReferrerListMaxPages: maxReferrerPages,
	}
	return repo, nil
}

// IsLoopback reports whether a registry host[:port] is on this machine.
func IsLoopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// fetchModule fetches the manifest dgst (choosing in an index the manifest
// of a wasm or linux/amd64 platform) and returns the module it packs.
func (p *Puller) fetchModule(ctx context.Context, repo *remote.Repository, source, dgst string) ([]byte, string, map[string]string, error) {
	desc := ocispec.Descriptor{Digest: digest.Digest(dgst)}
	raw, mediaType, err := p.manifest(ctx, repo, source, desc)
	if err != nil {
		return nil, "", nil, err
	}
	if mediaType == ocispec.MediaTypeImageIndex || mediaType == "application/vnd.docker.distribution.manifest.list.v2+json" {
		var idx ocispec.Index
		if err := json.Unmarshal(raw, &idx); err != nil {
			return nil, "", nil, fmt.Errorf("%s (%s): the index is not valid JSON: %v", source, dgst, err)
		}
		chosen, ok := choosePlatform(idx.Manifests)
		if !ok {
			return nil, "", nil, fmt.Errorf("%s (%s): the index lists no manifest", source, dgst)
		}
		if raw, _, err = p.manifest(ctx, repo, source, chosen); err != nil {
			return nil, "", nil, err
		}
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, "", nil, fmt.Errorf("%s (%s): the manifest is not valid JSON: %v", source, dgst, err)
	}
	for _, l := range m.Layers {
		if l.MediaType == WasmLayerMediaType || l.MediaType == "application/wasm" {
			wasm, err := p.blob(ctx, repo, source, l, p.MaxBytes)
			return wasm, LayoutWasm, m.Annotations, err
		}
	}
	for i := len(m.Layers) - 1; i >= 0; i-- { // the top layer first, as an image's file system
		l := m.Layers[i]
		if !strings.Contains(l.MediaType, "tar") {
			continue
		}
		blob, err := p.blob(ctx, repo, source, l, p.MaxBytes+tarSlack)
		if err != nil {
			return nil, "", nil, err
		}
		wasm, found, err := extractWasm(blob, strings.Contains(l.MediaType, "gzip"), p.MaxBytes)
		if err != nil {
			return nil, "", nil, fmt.Errorf("%s (%s): layer %s: %w", source, dgst, l.Digest, err)
		}
		if found {
			return wasm, LayoutImage, m.Annotations, nil
		}
	}
	return nil, "", nil, fmt.Errorf("%s (%s): no wasm module: no %s layer, and no tar layer holding /%s",
		source, dgst, WasmLayerMediaType, ImageWasmPath)
}

// choosePlatform picks the manifest of an index to pull: a wasm platform,
// else linux/amd64 (what hyper-mcp resolves to), else the first.
func choosePlatform(ms []ocispec.Descriptor) (ocispec.Descriptor, bool) {
	for _, want := range []func(*ocispec.Platform) bool{
		func(pl *ocispec.Platform) bool { return pl.Architecture == "wasm" || strings.HasPrefix(pl.OS, "wasi") },
		func(pl *ocispec.Platform) bool { return pl.OS == "linux" && pl.Architecture == "amd64" },
	} {
		for _, m := range ms {
			if m.Platform != nil && want(m.Platform) {
				return m, true
			}
		}
	}
	if len(ms) == 0 {
		return ocispec.Descriptor{}, false
	}
	return ms[0], true
}

// manifest returns the manifest desc (by its digest; from the cache when
// it is there) and its media type, refusing one that its descriptor or
// the registry's answer says is longer than maxManifestBytes before
// reading it.
func (p *Puller) manifest(ctx context.Context, repo *remote.Repository, source string, desc ocispec.Descriptor) ([]byte, string, error) {
	tooLarge := func(size int64) ([]byte, string, error) {
		return nil, "", fmt.Errorf("%s: manifest %s claims %d bytes, more than %d; refused before download", source, desc.Digest, size, maxManifestBytes)
	}
	raw, ok := p.cached(desc.Digest, maxManifestBytes)
	if !ok {
		if desc.Size > maxManifestBytes {
			return tooLarge(desc.Size)
		}
		got, rc, err := repo.Manifests().FetchReference(ctx, desc.Digest.String())
		if err != nil {
			return nil, "", fmt.Errorf("%s: fetching manifest %s: %w", source, desc.Digest, err)
		}
		if got.Size > maxManifestBytes { // oras-go reads as much as Content-Length says
			rc.Close()
			return tooLarge(got.Size)
		}
		raw, err = content.ReadAll(rc, got)
		rc.Close()
		if err != nil {
			return nil, "", fmt.Errorf("%s: manifest %s: %w", source, desc.Digest, err)
		}
		if digest.FromBytes(raw) != desc.Digest {
			return nil, "", fmt.Errorf("%s: manifest %s: content does not match its digest", source, desc.Digest)
		}
		p.store(desc.Digest, raw)
	}
	var head struct {
		MediaType string `json:"mediaType"`
	}
	_ = json.Unmarshal(raw, &head) // a bad manifest fails its own decoding
	return raw, cmp.Or(head.MediaType, desc.MediaType), nil
}

// blob returns the blob desc (from the cache when it is there), refusing
// one whose descriptor claims more than limit bytes before downloading
// it, and one that does not have the size and digest its descriptor says.
func (p *Puller) blob(ctx context.Context, repo *remote.Repository, source string, desc ocispec.Descriptor, limit int64) ([]byte, error) {
	if desc.Size > limit {
		return nil, fmt.Errorf("%s: layer %s claims %d bytes, more than the %d MiB max_module_mib allows; refused before download",
			source, desc.Digest, desc.Size, p.MaxBytes>>20)
	}
	if b, ok := p.cached(desc.Digest, desc.Size); ok && int64(len(b)) == desc.Size {
		return b, nil
	}
	rc, err := repo.Blobs().Fetch(ctx, desc)
	if err != nil {
		if strings.Contains(err.Error(), "mismatch Content-Length") {
			return nil, fmt.Errorf("%s: layer %s is not the %d bytes its descriptor says (refused): %w", source, desc.Digest, desc.Size, err)
		}
		return nil, fmt.Errorf("%s: fetching layer %s: %w", source, desc.Digest, err)
	}
	defer rc.Close()
	b, err := content.ReadAll(io.LimitReader(rc, desc.Size+1), desc)
	switch {
	case errors.Is(err, content.ErrTrailingData):
		return nil, fmt.Errorf("%s: layer %s is longer than the %d bytes its descriptor says; cut off and refused", source, desc.Digest, desc.Size)
	case errors.Is(err, content.ErrMismatchedDigest):
		return nil, fmt.Errorf("%s: layer %s: the content downloaded does not match its digest (tampered or corrupted); refused", source, desc.Digest)
	case err != nil:
		return nil, fmt.Errorf("%s: layer %s: %w", source, desc.Digest, err)
	}
	p.store(desc.Digest, b)
	return b, nil
}

// cachePath is where the cache keeps the content of d.
func (p *Puller) cachePath(d digest.Digest) (string, bool) {
	if p.CacheDir == "" || d.Validate() != nil || d.Algorithm() != digest.SHA256 {
		return "", false
	}
	return filepath.Join(p.CacheDir, "plugins", "sha256", d.Encoded()), true
}

// cached returns the cached content of d, if it is there, no longer than
// limit and matches d.
func (p *Puller) cached(d digest.Digest, limit int64) ([]byte, bool) {
	file, ok := p.cachePath(d)
	if !ok {
		return nil, false
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil || int64(len(b)) > limit || digest.FromBytes(b) != d {
		return nil, false // re-fetched, and rewritten
	}
	return b, true
}

// store writes b, the content of d, into the cache; a failure only costs
// a download next time, and is logged.
func (p *Puller) store(d digest.Digest, b []byte) {
	file, ok := p.cachePath(d)
	if !ok {
		return
	}
	if err := writeAtomic(file, b); err != nil {
		p.logger().Warn("plugin cache not written", "digest", d.String(), "err", err)
	}
}

// writeAtomic writes b to file through a temporary file beside it.
func writeAtomic(file string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// extractWasm returns the module /plugin.wasm of a tar layer (gzipped when
// gz), reading at most limit bytes of it and a bounded amount of the rest.
func extractWasm(layer []byte, gz bool, limit int64) ([]byte, bool, error) {
	var r io.Reader = bytes.NewReader(layer)
	if gz {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, false, fmt.Errorf("not gzip: %v", err)
		}
		defer zr.Close()
		r = zr
	}
	// However well the rest compresses, reading it is bounded.
	budget := &limitedReader{r: r, n: limit + 4*tarSlack}
	tr := tar.NewReader(budget)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, false, nil
		}
		if err != nil {
			if budget.n <= 0 {
				return nil, false, fmt.Errorf("the layer unpacks to more than %d bytes", limit+4*tarSlack)
			}
			return nil, false, fmt.Errorf("not a tar: %v", err)
		}
		if h.Typeflag != tar.TypeReg || path.Clean("/"+h.Name) != "/"+ImageWasmPath {
			continue
		}
		if h.Size > limit {
			return nil, false, fmt.Errorf("/%s is %d bytes, more than the %d MiB max_module_mib allows", ImageWasmPath, h.Size, limit>>20)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, false, fmt.Errorf("reading /%s: %v", ImageWasmPath, err)
		}
		return b, true, nil
	}
}

// limitedReader reads at most n bytes, then fails.
type limitedReader struct {
	r io.Reader
	n int64
}

func (l *limitedReader) Read(b []byte) (int, error) {
	if l.n <= 0 {
		return 0, errors.New("size limit reached")
	}
	if int64(len(b)) > l.n {
		b = b[:l.n]
	}
	n, err := l.r.Read(b)
	l.n -= int64(n)
	return n, err
}

// fetchJSON fetches the manifest desc and decodes it into v.
func fetchJSON(ctx context.Context, repo *remote.Repository, desc ocispec.Descriptor, v any) error {
	rc, err := repo.Manifests().Fetch(ctx, desc)
	if err != nil {
		return err
	}
	defer rc.Close()
	b, err := content.ReadAll(rc, desc)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
