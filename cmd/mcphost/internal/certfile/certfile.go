// Package certfile serves a TLS certificate from PEM files, reading them
// again when they change, so that a renewed certificate (certbot, a
// Kubernetes secret) is served without a restart, and reads the CA files
// a client trusts (CAPool).
package certfile

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// Files is a certificate read from a certificate file and a key file.
type Files struct {
	cert, key string
	logger    *slog.Logger
	every     time.Duration // how often, at most, the files are looked at

	mu      sync.Mutex
	current *tls.Certificate
	stamp   string    // the files' sizes and modification times when read
	checked time.Time // when the files were last looked at
}

// Load reads the certificate chain in cert and its key in key, PEM, and
// returns them; it fails when they do not make a pair. logger (nil for
// none) hears of later reloads.
func Load(cert, key string, logger *slog.Logger) (*Files, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	f := &Files{cert: cert, key: key, logger: logger, every: time.Second}
	c, stamp, err := f.read()
	if err != nil {
		return nil, err
	}
	f.current, f.stamp, f.checked = c, stamp, time.Now()
	return f, nil
}

// TLSConfig returns a server TLS configuration that serves the current
// certificate.
func (f *Files) TLSConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: f.GetCertificate}
}

// GetCertificate returns the current certificate, first reading the files
// again if they changed (looked at once a second at most). A change that
// does not make a good pair is logged and the previous certificate kept.
func (f *Files) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if time.Since(f.checked) < f.every {
		return f.current, nil
	}
	f.checked = time.Now()
	if stamp, err := f.stampNow(); err != nil || stamp == f.stamp {
		return f.current, nil
	}
	c, stamp, err := f.read()
	if err != nil {
		f.logger.Error("TLS certificate not reloaded; the previous one is served", "cert", f.cert, "key", f.key, "err", err)
		f.stamp = stamp // not again until the files change again
		return f.current, nil
	}
	f.current, f.stamp = c, stamp
	f.logger.Info("TLS certificate reloaded", "cert", f.cert)
	return f.current, nil
}

// read reads the pair and the stamp of the files read.
func (f *Files) read() (*tls.Certificate, string, error) {
	stamp, err := f.stampNow()
	if err != nil {
		return nil, "", err
	}
	c, err := tls.LoadX509KeyPair(f.cert, f.key)
	if err != nil {
		return nil, stamp, fmt.Errorf("TLS certificate %s and key %s: %w", f.cert, f.key, err)
	}
	return &c, stamp, nil
}

// stampNow describes the files' sizes and modification times.
func (f *Files) stampNow() (string, error) {
	var stamp string
	for _, name := range []string{f.cert, f.key} {
		fi, err := os.Stat(name)
		if err != nil {
			return "", err
		}
		stamp += fmt.Sprintf("%d:%d;", fi.Size(), fi.ModTime().UnixNano())
	}
	return stamp, nil
}

// CAPool returns base (a new pool when nil) with the certificates of the
// PEM file at path added: the roots a client trusts. A file without a
// certificate is an error.
func CAPool(path string, base *x509.CertPool) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if base == nil {
		base = x509.NewCertPool()
	}
	if !base.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return base, nil
}
