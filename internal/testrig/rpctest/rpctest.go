// Package rpctest reads the JSON-RPC responses that tests of the engine
// and its transports receive, decoded as maps.
package rpctest

import "testing"

// ErrCode returns the error code of response m, failing the test when m
// is not an error response.
func ErrCode(t testing.TB, m map[string]any) int {
	t.Helper()
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("expected an error response, got %v", m)
	}
	return int(e["code"].(float64))
}

// Result returns the result of response m, failing the test when m has
// none.
func Result(t testing.TB, m map[string]any) map[string]any {
	t.Helper()
	r, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("expected a result, got %v", m)
	}
	return r
}

// Names returns the key (name or uri) of each item of the list field of
// response m's result.
func Names(t testing.TB, m map[string]any, field, key string) []string {
	t.Helper()
	var names []string
	for _, it := range Result(t, m)[field].([]any) {
		names = append(names, it.(map[string]any)[key].(string))
	}
	return names
}
