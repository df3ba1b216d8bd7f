package ociplugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"

	"github.com/opencontainers/go-digest"
)

// FetchURL downloads the plugin at an https source (or http on a loopback
// address), which must have the SHA-256 sum (hex); the cache keeps it by
// that digest, so that it is downloaded once.
func (p *Puller) FetchURL(ctx context.Context, source, sum string) (*Pulled, error) {
	if p.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, p.Timeout,
			fmt.Errorf("fetching %s took longer than pull_timeout (%v)", source, p.Timeout))
		defer cancel()
	}
	d := digest.NewDigestFromEncoded(digest.SHA256, sum)
	out := &Pulled{Source: source, Digest: d.String(), Layout: LayoutHTTPS, Signer: "pinned by sha256"}
	if b, ok := p.cached(d, p.MaxBytes); ok {
		out.Wasm = b
		return out, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, source, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	client := &http.Client{Transport: p.Transport}
	resp, err := client.Do(req)
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
			return nil, fmt.Errorf("%s: %w", source, cause)
		}
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", source, resp.Status)
	}
	if resp.ContentLength > p.MaxBytes {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d MiB max_module_mib allows; refused before download", source, resp.ContentLength, p.MaxBytes>>20)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, p.MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if int64(len(b)) > p.MaxBytes {
		return nil, fmt.Errorf("%s: longer than the %d MiB max_module_mib allows; cut off and refused", source, p.MaxBytes>>20)
	}
	got := sha256.Sum256(b)
	if actual := hex.EncodeToString(got[:]); actual != sum {
		return nil, fmt.Errorf("%s does not match its sha256 pin: expected %s, actual %s", source, sum, actual)
	}
	p.store(d, b)
	out.Wasm = b
	return out, nil
}
