package sandbox

import "testing"

// TestInstancesAreNotSharedBetweenOwners: what one owner's call leaves in
// an instance (here an Extism var) is never seen by another owner's call,
// while the same owner finds its instance again; calls without an owner
// share instances as before.
func TestInstancesAreNotSharedBetweenOwners(t *testing.T) {
	t.Parallel()
	p := load(t, "guest", Options{Limits: Limits{MaxInstances: 2}})
	callAs := func(owner, export, input string) (string, error) {
		out, err := p.CallAs(t.Context(), owner, export, []byte(input))
		return string(out), err
	}
	if _, err := callAs("user:alice", "setvar", "secret=alice-secret"); err != nil {
		t.Fatal(err)
	}
	if got, err := callAs("user:bob", "getvar", "secret"); err == nil {
		t.Fatalf("bob read alice's var: %q", got)
	}
	if got, err := callAs("user:alice", "getvar", "secret"); err != nil || got != "alice-secret" {
		t.Fatalf("alice lost her own instance: %q %v", got, err)
	}
	if _, err := callAs("", "setvar", "shared=1"); err != nil {
		t.Fatal(err)
	}
	if got, err := callAs("", "getvar", "shared"); err != nil || got != "1" {
		t.Fatalf("calls without an owner no longer share their instance: %q %v", got, err)
	}
}
