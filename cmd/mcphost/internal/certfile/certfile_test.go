package certfile

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/plugintest"
)

func serial(t *testing.T, r *Files) int64 {
	t.Helper()
	c, err := r.GetCertificate(&tls.ClientHelloInfo{})
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return leaf.SerialNumber.Int64()
}

func TestACertificateIsReadAgainWhenItsFilesChange(t *testing.T) {
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	plugintest.WriteCert(t, cert, key, 1)
	r, err := Load(cert, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.every = 0 // look at the files at every handshake
	if got := serial(t, r); got != 1 {
		t.Fatalf("serial %d, want 1", got)
	}
	plugintest.WriteCert(t, cert, key, 2)
	future := time.Now().Add(time.Minute) // a new modification time, whatever the clock's resolution
	_ = os.Chtimes(cert, future, future)
	if got := serial(t, r); got != 2 {
		t.Errorf("after the files changed: serial %d, want 2", got)
	}
	// A broken replacement keeps the certificate that works.
	if err := os.WriteFile(key, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	later := future.Add(time.Minute)
	_ = os.Chtimes(key, later, later)
	if got := serial(t, r); got != 2 {
		t.Errorf("after a broken replacement: serial %d, want the working 2", got)
	}
}

func TestABadPairIsRefusedAtLoad(t *testing.T) {
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	plugintest.WriteCert(t, cert, key, 1)
	if err := os.WriteFile(key, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(cert, key, nil); err == nil {
		t.Fatal("a key that does not parse was accepted")
	}
}

// TestCAPoolAddsTheFilesCertificates reads a CA file into a new pool and
// into a pool given: a file without a certificate and a missing file are
// errors naming the file.
func TestCAPoolAddsTheFilesCertificates(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem") // a self-signed certificate, its own CA
	plugintest.WriteCert(t, ca, filepath.Join(dir, "key.pem"), 1)
	pool, err := CAPool(ca, nil)
	if err != nil || pool == nil {
		t.Fatalf("a new pool: %v, %v", pool, err)
	}
	base := x509.NewCertPool()
	if got, err := CAPool(ca, base); err != nil || got != base || !got.Equal(pool) {
		t.Errorf("adding to a pool given: %v, %v; want the same pool with the certificate", got, err)
	}
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("nothing\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := CAPool(notPEM, nil); err == nil || err.Error() != notPEM+" holds no PEM certificate" {
		t.Errorf("a file without a certificate: %v", err)
	}
	if _, err := CAPool(filepath.Join(dir, "missing.pem"), nil); err == nil || !strings.Contains(err.Error(), "missing.pem") {
		t.Errorf("a missing file: %v", err)
	}
}
