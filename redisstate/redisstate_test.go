package redisstate_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/redistest"
	"github.com/mcphost/mcphost/redisstate"
)

// TestRedissTrustsItsCAOnly connects to a Redis that takes only TLS: with
// the server's CA (as [state] ca_file gives it) records go in and out; with
// the system's roots the connection is refused, with an error naming the
// server and the certificate; a wrong password is refused, naming the
// server and never showing the password.
func TestRedissTrustsItsCAOnly(t *testing.T) {
	r := redistest.StartTLS(t)
	pem, err := os.ReadFile(r.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	store, err := redisstate.Open(redisstate.Options{URL: r.URL(), Password: r.Password, Prefix: "tls:", TLS: &tls.Config{RootCAs: roots}})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := store.Save(ctx, "s1", []byte("record"), time.Minute); err != nil {
		t.Fatalf("saving over rediss://: %v", err)
	}
	if got, ok, err := store.Load(ctx, "s1"); err != nil || !ok || string(got) != "record" {
		t.Errorf("loading over rediss://: %q, %v, %v", got, ok, err)
	}
	if ok, err := store.Touch(ctx, "s1", time.Minute); !ok || err != nil {
		t.Errorf("touching the record: %v, %v", ok, err)
	}
	if err := store.Delete(ctx, "s1"); err != nil {
		t.Errorf("deleting the record: %v", err)
	}
	if ok, err := store.Touch(ctx, "s1", time.Minute); ok || err != nil {
		t.Errorf("touching a deleted record: %v, %v; want false", ok, err)
	}

	for name, opts := range map[string]redisstate.Options{
		"the system's roots": {URL: r.URL(), Password: r.Password},
		"a wrong password":   {URL: r.URL(), Password: "not-" + r.Password, TLS: &tls.Config{RootCAs: roots}},
	} {
		s, err := redisstate.Open(opts)
		if err != nil {
			t.Fatal(err)
		}
		err = s.Ping(ctx)
		s.Close()
		switch {
		case err == nil:
			t.Errorf("with %s: connected", name)
		case !strings.Contains(err.Error(), "redis at "+r.Addr):
			t.Errorf("with %s: %v, want an error naming the server", name, err)
		case strings.Contains(err.Error(), r.Password):
			t.Errorf("with %s: the error shows the password: %v", name, err)
		}
	}
}
