package metrics

import (
	"reflect"
	"strings"
	"testing"
)

// tiny loads testdata/tiny, whose measures its files' comments explain.
func tiny(t *testing.T) *Package {
	t.Helper()
	p, err := LoadDir("testdata", "tiny")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLayering(t *testing.T) {
	got := LayeringOf(tiny(t))
	want := Layering{
		Dir: "tiny", Files: 3, Refs: 8, Pairs: 4, Backward: 1, BackRefs: 3, Mutual: 1,
		Order: []string{"a.go", "b.go", "c.go"},
		Back:  []string{"c.go -> a.go"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LayeringOf(tiny) = %+v, want %+v", got, want)
	}
}

// TestImproveFindsTheBestOrder checks that the local moves undo a bad
// start: a chain d → c → b → a listed bottom up has three backward pairs,
// and none once improved.
func TestImproveFindsTheBestOrder(t *testing.T) {
	g := &graph{files: []string{"a", "b", "c", "d"}, edges: map[edge]int{{3, 2}: 1, {2, 1}: 1, {1, 0}: 1}}
	order := []int{0, 1, 2, 3}
	if n := backward(g, order); n != 3 {
		t.Fatalf("backward = %d, want 3", n)
	}
	if got := improve(g, order); backward(g, got) != 0 {
		t.Errorf("improve = %v, with %d backward pairs, want 0", got, backward(g, got))
	}
}

func TestSize(t *testing.T) {
	got := SizeOf(tiny(t))
	want := Size{Dir: "tiny", Files: 4, Lines: 79, TestFiles: 1, TestLines: 3}
	if got != want {
		t.Errorf("SizeOf(tiny) = %+v, want %+v", got, want)
	}
}

func TestEraTests(t *testing.T) {
	got := EraTestsOf(tiny(t))
	want := EraTests{Dir: "tiny", EraNil: 4, Modern: 3}
	if got != want {
		t.Errorf("EraTestsOf(tiny) = %+v, want %+v", got, want)
	}
}

func TestMethods(t *testing.T) {
	got := MethodsOf(tiny(t))
	want := []Methods{{Type: "task", Methods: 2, Files: 2}, {Type: "Gamma", Methods: 1, Files: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MethodsOf(tiny) = %+v, want %+v", got, want)
	}
}

func TestAPI(t *testing.T) {
	got := strings.Join(API(tiny(t)), "\n")
	want := strings.Join([]string{
		"const A Kind",
		"func Alpha(s string) string",
		"const B Kind",
		"type Gamma struct",
		"field Gamma.Name string `json:\"name\"`",
		"type Kind int",
		"func Map[T any, U comparable](xs []T, f func(T) U) []U",
		"type Runner interface",
		"embed Runner fmtStringer",
		"method Runner.Run(n int) error",
	}, "\n")
	if got != want {
		t.Errorf("API(tiny):\n%s\nwant:\n%s", got, want)
	}
}
