//go:build !wasm

package pdk

import (
	"reflect"
	"testing"
)

func TestURITemplateMatch(t *testing.T) {
	for _, c := range []struct {
		tmpl string
		uri  string
		want map[string]string // nil: no match
	}{
		{"file:///{+path}", "file:///notes/todo.md", map[string]string{"path": "notes/todo.md"}},
		{"file:///{+path}", "file:///a%20b/c.txt", map[string]string{"path": "a b/c.txt"}},
		{"file:///{+path}", "file:///", nil},
		{"file:///{+path}", "http:///x", nil},
		{"weather://{city}/current", "weather://paris/current", map[string]string{"city": "paris"}},
		{"weather://{city}/current", "weather://New%20York/current", map[string]string{"city": "New York"}},
		{"weather://{city}/current", "weather://a/b/current", nil},
		{"weather://{city}/current", "weather:///current", nil},
		{"weather://{city}/current", "weather://paris/forecast", nil},
		{"repo://{owner}/{repo}/issues/{id}", "repo://acme/app/issues/42", map[string]string{"owner": "acme", "repo": "app", "id": "42"}},
		{"list://{items*}", "list://a,b,c", map[string]string{"items": "a,b,c"}},
		{"pair://{x,y}", "pair://1,2", map[string]string{"x": "1", "y": "2"}},
		{"path:/{/segments*}", "path://a/b/c", map[string]string{"segments": "a/b/c"}},
		{"api{/version}/users", "api/v1/users", map[string]string{"version": "v1"}},
		{"api{/version}/users", "api/users", map[string]string{}},
		{"search://docs{?q,limit}", "search://docs?q=go&limit=5", map[string]string{"q": "go", "limit": "5"}},
		{"search://docs{?q,limit}", "search://docs", map[string]string{}},
		{"search://docs{?q}{&page}", "search://docs?q=a%2Bb&page=2", map[string]string{"q": "a+b", "page": "2"}},
		{"doc://{name}{.ext}", "doc://readme.md", map[string]string{"name": "readme", "ext": "md"}},
		{"doc://x{#frag}", "doc://x#top", map[string]string{"frag": "top"}},
		{"code://{lang:2}", "code://go", map[string]string{"lang": "go"}},
		{"code://{lang:2}", "code://rust", nil},
		{"static://exact", "static://exact", map[string]string{}},
		{"static://exact", "static://exactly", nil},
	} {
		tmpl, err := parseURITemplate(c.tmpl)
		if err != nil {
			t.Fatalf("%s: %v", c.tmpl, err)
		}
		got, ok := tmpl.match(c.uri)
		if c.want == nil {
			if ok {
				t.Errorf("%s matched %s: %v", c.tmpl, c.uri, got)
			}
			continue
		}
		if !ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s on %s = %v, %v; want %v", c.tmpl, c.uri, got, ok, c.want)
		}
	}
}

func TestURITemplateParse(t *testing.T) {
	for _, bad := range []string{"file:///{path", "file:///path}", "x://{}", "x://{a:0}", "x://{a:b}", "x://{+}", "x://{a b}"} {
		if _, err := parseURITemplate(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	tmpl, err := parseURITemplate("repo://{owner}/{repo}{?q,page}")
	if err != nil {
		t.Fatal(err)
	}
	if got := tmpl.varNames(); !reflect.DeepEqual(got, []string{"owner", "repo", "q", "page"}) {
		t.Errorf("varNames = %v", got)
	}
}

func TestPercentDecode(t *testing.T) {
	for in, want := range map[string]string{
		"plain": "plain", "a%20b": "a b", "%E2%82%AC": "€", "bad%2": "bad%2", "bad%zz": "bad%zz",
	} {
		if got := percentDecode(in); got != want {
			t.Errorf("percentDecode(%q) = %q, want %q", in, got, want)
		}
	}
}
