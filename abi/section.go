package abi

import (
	"encoding/json"
	"fmt"
)

// AppendCustomSection returns wasm with a custom section named name holding
// payload appended. Custom sections may appear after any other section, so
// appending one to a valid module keeps it valid; build tools use this to
// embed a Manifest into a plugin compiled by a toolchain that cannot emit
// custom sections itself (standard Go).
func AppendCustomSection(wasm []byte, name string, payload []byte) []byte {
	body := appendULEB128(nil, uint32(len(name)))
	body = append(body, name...)
	body = append(body, payload...)
	out := append([]byte(nil), wasm...)
	out = append(out, 0) // section id 0: custom
	out = appendULEB128(out, uint32(len(body)))
	return append(out, body...)
}

func appendULEB128(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			c |= 0x80
		}
		b = append(b, c)
		if v == 0 {
			return b
		}
	}
}

// EmbedManifest checks that manifestJSON is a Manifest for this ABI version
// and returns wasm with it appended as the ManifestSection custom section.
func EmbedManifest(wasm, manifestJSON []byte) ([]byte, error) {
	var m Manifest
	if err := json.Unmarshal(manifestJSON, &m); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	if m.ABI != Version {
		return nil, fmt.Errorf("manifest: \"abi\" is %d, want %d", m.ABI, Version)
	}
	compact, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return AppendCustomSection(wasm, ManifestSection, compact), nil
}
