package abi

import (
	"os"
	"regexp"
	"slices"
	"testing"
)

// TestHostFunctionsMatchABIDoc: the host functions and their signatures are
// those of the table in ABI.md section 3, in its order.
func TestHostFunctionsMatchABIDoc(t *testing.T) {
	doc, err := os.ReadFile("ABI.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| `\\((i64)?\\) -> (i64|\\(\\))` \\|").FindAllStringSubmatch(string(doc), -1)
	if len(rows) == 0 {
		t.Fatal("ABI.md has no host function table")
	}
	var documented []string
	for _, row := range rows {
		name, want := row[1], HostSignature{Input: row[2] != "", Output: row[3] == "i64"}
		documented = append(documented, name)
		if sig, ok := HostSignatureOf(name); !ok || sig != want {
			t.Errorf("HostSignatureOf(%q) = %+v, %v; ABI.md says %+v", name, sig, ok, want)
		}
	}
	if names := HostFunctionNames(); !slices.Equal(names, documented) {
		t.Errorf("HostFunctionNames() = %q\nABI.md lists %q", names, documented)
	}
	if sig, ok := HostSignatureOf("config_get"); ok {
		t.Errorf("HostSignatureOf(config_get), an Extism kernel function, = %+v, true", sig)
	}
}

// TestHostFunctionNamesIsACopy: changing the returned slice changes nothing
// for the next caller.
func TestHostFunctionNamesIsACopy(t *testing.T) {
	names := HostFunctionNames()
	names[0] = "changed"
	if HostFunctionNames()[0] != HostCreateMessage {
		t.Error("a caller changed the host function names of the next")
	}
}
