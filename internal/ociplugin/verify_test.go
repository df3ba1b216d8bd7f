package ociplugin

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/mcphost/mcphost/internal/testrig/plugintest"
)

// lastPage is the page after which referrersPages stops linking: a safety
// net that ends the walk of a puller that would not stop by itself.
const lastPage = 100

// isReferrers reports whether r asks for a manifest's referrers.
func isReferrers(r *http.Request) bool { return strings.Contains(r.URL.Path, "/referrers/sha256:") }

// referrersPages answers the referrers API with pages written by page,
// page n (from 1) linking to page n+1 (rel="next") up to lastPage.
func referrersPages(page func(w io.Writer, n int64)) func(http.ResponseWriter, *http.Request, int64) {
	return func(w http.ResponseWriter, r *http.Request, n int64) {
		w.Header().Set("Content-Type", ocispec.MediaTypeImageIndex)
		if n < lastPage {
			w.Header().Set("Link", fmt.Sprintf(`<%s?page=%d>; rel="next"`, r.URL.Path, n+1))
		}
		page(w, n)
	}
}

// referrer is the JSON of the i-th referrer of page n, of artifactType,
// a manifest that claims 1 MiB (more than a signature manifest may be, so
// that none is fetched).
func referrer(n int64, i int, artifactType string) string {
	return fmt.Sprintf(`{"mediaType":%q,"digest":%q,"size":1048576,"artifactType":%q}`,
		ocispec.MediaTypeImageManifest, digest.FromString(fmt.Sprint(n, i)), artifactType)
}

// indexOf writes an image index of 20 referrers of artifactType.
func indexOf(artifactType string) func(io.Writer, int64) {
	return func(w io.Writer, n int64) {
		refs := make([]string, 20)
		for i := range refs {
			refs[i] = referrer(n, i, artifactType)
		}
		fmt.Fprintf(w, `{"schemaVersion":2,"mediaType":%q,"manifests":[%s]}`, ocispec.MediaTypeImageIndex, strings.Join(refs, ","))
	}
}

// TestHostileReferrersAreBounded proves a registry whose referrers API
// answers page after page forever is bounded by count and bytes, not by
// pull_timeout, and refused with an error that names what it did, not as
// unreachable: pages full of sigstore bundles stop the walk at the first
// page, once maxSignatures of them are found, and only those are tried;
// pages without any stop it after maxReferrerPages; a page that never
// ends is read up to maxManifestBytes.
func TestHostileReferrersAreBounded(t *testing.T) {
	reg := plugintest.StartRegistry(t)
	key := plugintest.NewKeySigner(t)
	cases := map[string]struct {
		page           func(io.Writer, int64)
		pages, bundles int64  // referrers pages fetched, sigstore bundles tried
		want           string // in the error; DIGEST is the plugin's
	}{
		"pages full of bundles": {indexOf(BundleArtifactType), 1, maxSignatures,
			"its manifest claims 1048576 bytes, more than 65536"},
		"pages without bundles": {indexOf("application/spdx+json"), maxReferrerPages, 0,
			fmt.Sprintf("the registry's referrers of DIGEST run past %d pages", maxReferrerPages)},
		"a page without end": {func(w io.Writer, n int64) {
			fmt.Fprintf(w, `{"schemaVersion":2,"mediaType":%q,"manifests":[`, ocispec.MediaTypeImageIndex)
			ref := referrer(n, 0, BundleArtifactType) + ","
			for range 1 << 20 { // 256 MiB at most: the puller hangs up well before
				if _, err := io.WriteString(w, ref); err != nil {
					return
				}
			}
		}, 1, 0, fmt.Sprintf("the registry's referrers of DIGEST: a page is cut off or longer than %d bytes", maxManifestBytes)},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			h := startHostile(t, reg, isReferrers, referrersPages(c.page))
			ref := "oci://" + h.addr + "/hostile/plugin:1"
			dgst, err := newPuller(t).Push(context.Background(), ref, module(name), nil)
			if err != nil {
				t.Fatal(err)
			}
			p := newPuller(t)
			p.Timeout = 10 * time.Second
			start := time.Now()
			_, err = p.Pull(context.Background(), ref, Policy{Key: key.Pub})
			took := time.Since(start)
			want := strings.ReplaceAll(c.want, "DIGEST", dgst)
			if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "unreachable") {
				t.Errorf("error %v\nwant it to say %q, and not that the registry is unreachable", err, want)
			}
			if got := int64(strings.Count(fmt.Sprint(err), "the sigstore bundle sha256:")); got != c.bundles {
				t.Errorf("%d sigstore bundles tried, want %d", got, c.bundles)
			}
			if got := h.hits.Load(); got != c.pages {
				t.Errorf("%d referrers pages fetched, want %d", got, c.pages)
			}
			if got := h.written.Load(); got > 32<<20 {
				t.Errorf("the registry wrote %d bytes of referrers before the puller hung up, want at most 32 MiB", got)
			}
			if took > 5*time.Second {
				t.Errorf("took %v, want the walk stopped by its bounds, not by pull_timeout", took)
			}
		})
	}
}
