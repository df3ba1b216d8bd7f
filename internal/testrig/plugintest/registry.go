package plugintest

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/testenv"
)

// Registry is a real OCI registry for a test: Debian's docker-registry (the
// CNCF distribution registry) on a loopback port, storing into a
// temporary folder.
type Registry struct {
	// Addr is its host:port on 127.0.0.1.
	Addr string
	// Storage is the folder of its filesystem storage driver, where blobs
	// live in docker/registry/v2/blobs/sha256/XX/HEX/data.
	Storage string
}

// BlobPath is the file where the registry stores the blob of a digest
// "sha256:HEX".
func (r *Registry) BlobPath(digest string) string {
	hex := digest[len("sha256:"):]
	return filepath.Join(r.Storage, "docker", "registry", "v2", "blobs", "sha256", hex[:2], hex, "data")
}

// StartRegistry starts a registry that stops when the test ends. Without
// the docker-registry binary it skips the test, unless CI is set: then it
// fails it (scripts/setup-registry.sh installs it).
func StartRegistry(t testing.TB) *Registry {
	t.Helper()
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		testenv.Missing(t, "docker-registry is not installed (scripts/setup-registry.sh installs it)")
	}
	dir := t.TempDir()
	storage := filepath.Join(dir, "storage")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := filepath.Join(dir, "config.yml")
	yml := fmt.Sprintf("version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: %s\n  delete:\n    enabled: true\nhttp:\n  addr: %s\n", storage, addr)
	if err := os.WriteFile(cfg, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(bin, "serve", cfg)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err == nil {
			resp.Body.Close()
			break
		}
		select {
		case <-done:
			t.Fatalf("docker-registry exited:\n%s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("docker-registry does not answer on %s:\n%s", addr, out.String())
		}
	}
	return &Registry{Addr: addr, Storage: storage}
}
