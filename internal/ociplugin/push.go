package ociplugin

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/registry"
)

// AnnotationManifest is the manifest annotation that holds the plugin's
// mcphost manifest (JSON), so that registries and `mcphost plugin pull`
// show what it needs before anything runs.
const AnnotationManifest = "dev.mcphost.plugin.manifest"

// Push publishes wasm at ref (oci://REGISTRY/REPOSITORY:TAG) as a CNCF Wasm
// OCI artifact: a config of WasmConfigMediaType and one layer of
// WasmLayerMediaType, with annotations on the manifest. It returns the
// manifest's digest.
func (p *Puller) Push(ctx context.Context, ref string, wasm []byte, annotations map[string]string) (string, error) {
	r, err := registry.ParseReference(strings.TrimPrefix(ref, "oci://"))
	if err != nil {
		return "", fmt.Errorf("%s: %w", ref, err)
	}
	if r.Reference == "" || r.ValidateReferenceAsDigest() == nil {
		return "", fmt.Errorf("%s: push needs a tag (oci://REGISTRY/REPOSITORY:TAG)", ref)
	}
	repo, err := p.repository(r)
	if err != nil {
		return "", err
	}
	layer := ocispec.Descriptor{MediaType: WasmLayerMediaType, Digest: digest.FromBytes(wasm), Size: int64(len(wasm))}
	if err := repo.Push(ctx, layer, bytes.NewReader(wasm)); err != nil {
		return "", fmt.Errorf("%s: pushing the module: %w", ref, err)
	}
	cfg := []byte("{}")
	config := ocispec.Descriptor{MediaType: WasmConfigMediaType, Digest: digest.FromBytes(cfg), Size: int64(len(cfg))}
	if err := repo.Push(ctx, config, bytes.NewReader(cfg)); err != nil {
		return "", fmt.Errorf("%s: pushing the config: %w", ref, err)
	}
	desc, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "", oras.PackManifestOptions{
		Layers: []ocispec.Descriptor{layer}, ConfigDescriptor: &config, ManifestAnnotations: annotations,
	})
	if err != nil {
		return "", fmt.Errorf("%s: pushing the manifest: %w", ref, err)
	}
	if err := repo.Tag(ctx, desc, r.Reference); err != nil {
		return "", fmt.Errorf("%s: tagging: %w", ref, err)
	}
	return desc.Digest.String(), nil
}
