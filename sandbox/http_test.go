package sandbox

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

func TestHTTPGrants(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		io.WriteString(w, "pong")
	}))
	defer server.Close()
	// The server under its other name, and a redirect to it by that name.
	byName := strings.Replace(server.URL, "127.0.0.1", "localhost", 1)
	redirect := httptest.NewServer(http.RedirectHandler(byName, http.StatusFound))
	defer redirect.Close()
	get := func(p *Plugin, url string) (string, error) {
		out, err := p.Call(t.Context(), "http", []byte(`{"url":"`+url+`"}`))
		return string(out), err
	}

	for _, hosts := range [][]string{nil, {"example.com"}, {"localhost"}, {"127.0.0.2"}} {
		_, err := get(load(t, "guest", Options{Grants: Grants{AllowedHosts: hosts}}), server.URL)
		if ce := wantKind(t, err, KindTrap); !strings.Contains(ce.Message, "not allowed") {
			t.Errorf("allowed hosts %q: got %q", hosts, ce.Message)
		}
	}
	if hits.Load() != 0 {
		t.Fatal("a denied request reached the server")
	}

	p := load(t, "guest", Options{Grants: Grants{AllowedHosts: []string{"127.0.0.*"}}})
	if got, err := get(p, server.URL); got != "pong" || err != nil {
		t.Errorf("allowed request: got %q, %v", got, err)
	}
	_, err := get(p, redirect.URL)
	if ce := wantKind(t, err, KindTrap); !strings.Contains(ce.Message, "redirect to "+byName+" is not allowed") {
		t.Errorf("redirect to a denied host: got %q", ce.Message)
	}
	if hits.Load() != 1 {
		t.Fatal("a redirect to a denied host reached the server")
	}
	p = load(t, "guest", Options{Grants: Grants{AllowedHosts: []string{"127.0.0.1", "localhost"}}})
	if got, err := get(p, redirect.URL); got != "pong" || err != nil {
		t.Errorf("redirect to an allowed host: got %q, %v", got, err)
	}

	if _, err := engine.Load(t.Context(), "guest", testWasm(t, "guest"), Options{Grants: Grants{AllowedHosts: []string{"[a-"}}}); err == nil {
		t.Error("invalid host pattern accepted")
	}
}
