package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sandbox/internal/wasmpass"
)

// Errors Inspect wraps to say why a binary was rejected.
var (
	// ErrBadMagic means the input does not start with the wasm magic number.
	ErrBadMagic = wasmpass.ErrBadMagic
	// ErrBadVersion means the binary is not a version 1 core module (a
	// component, for example).
	ErrBadVersion = wasmpass.ErrBadVersion
	// ErrTruncated means the input ends in the middle of a section or value.
	ErrTruncated = wasmpass.ErrTruncated
	// ErrSectionOverrun means a section's declared size runs past the end of
	// the input, or its contents run past its declared size.
	ErrSectionOverrun = wasmpass.ErrSectionOverrun
	// ErrMalformed means a value inside a section is invalid: an over-long
	// LEB128 number, a name that is not UTF-8, an unknown import kind, or a
	// section whose contents are shorter than its declared size.
	ErrMalformed = wasmpass.ErrMalformed
	// ErrInvalidModule means wazero, which compiles the module, finds it
	// invalid (an index out of range, code that does not type-check): it
	// is refused as it is, before the sandbox rewrites any of it.
	ErrInvalidModule = errors.New("invalid module")
)

// Info describes a wasm module as read by Inspect.
type Info struct {
	// Exports are the names of the exported functions, in binary order.
	Exports []string
	// Imports are the imported functions, in binary order.
	Imports []Import
	// CustomSections maps each custom section name to its payload. When a
	// name occurs more than once the last section wins, so a section
	// appended with abi.AppendCustomSection overrides an earlier one.
	CustomSections map[string][]byte
}

// Import is a function a module imports.
type Import struct {
	Module string
	Name   string
}

// HasExport reports whether the module exports a function called name.
func (i *Info) HasExport(name string) bool {
	return slices.Contains(i.Exports, name)
}

// Manifest decodes the abi.ManifestSection custom section. It returns nil and
// no error when the module has no such section.
func (i *Info) Manifest() (*abi.Manifest, error) {
	raw, ok := i.CustomSections[abi.ManifestSection]
	if !ok {
		return nil, nil
	}
	var m abi.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("sandbox: custom section %s: %w", abi.ManifestSection, err)
	}
	return &m, nil
}

// HostImports returns the names of the functions imported from
// abi.HostModule, in binary order.
func (i *Info) HostImports() []string {
	var names []string
	for _, imp := range i.Imports {
		if imp.Module == abi.HostModule {
			names = append(names, imp.Name)
		}
	}
	return names
}

// Inspect parses the structure of a wasm binary without compiling or running
// it: its function exports and imports and its custom sections. It reads only
// the sections it needs, checks that every section stays within its declared
// size and never panics, whatever the input.
func Inspect(wasm []byte) (*Info, error) {
	exports, imported, custom, err := wasmpass.Inspect(wasm)
	if err != nil {
		return nil, fmt.Errorf("sandbox: inspect: %w", err)
	}
	var imports []Import // nil when there are none, as before
	for _, imp := range imported {
		imports = append(imports, Import(imp))
	}
	return &Info{Exports: exports, Imports: imports, CustomSections: custom}, nil
}
