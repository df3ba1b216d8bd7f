package abi

import "testing"

// TestHostSignatures: every host function has a signature, and only those.
func TestHostSignatures(t *testing.T) {
	for _, name := range HostFunctions {
		if _, ok := HostSignatures[name]; !ok {
			t.Errorf("%s has no entry in HostSignatures", name)
		}
	}
	if len(HostSignatures) != len(HostFunctions) {
		t.Errorf("HostSignatures has %d entries, HostFunctions %d names", len(HostSignatures), len(HostFunctions))
	}
}
