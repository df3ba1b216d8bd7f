package sandbox

import (
	"slices"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/wasmtest"
)

func TestInspectModule(t *testing.T) {
	t.Parallel()
	info, err := Inspect(wasmtest.ImportsModule())
	if err != nil {
		t.Fatal(err)
	}
	wantImports := []Import{{abi.HostModule, "notify"}, {"wasi_snapshot_preview1", "fd_write"}}
	if !slices.Equal(info.Imports, wantImports) {
		t.Errorf("imports %v, want %v", info.Imports, wantImports)
	}
	if !slices.Equal(info.Exports, []string{"run"}) || !info.HasExport("run") || info.HasExport("memory") {
		t.Errorf("exports %v", info.Exports)
	}
	if !slices.Equal(info.HostImports(), []string{"notify"}) {
		t.Errorf("host imports %v", info.HostImports())
	}
	if string(info.CustomSections["note"]) != "payload" || len(info.CustomSections) != 1 {
		t.Errorf("custom sections %q", info.CustomSections)
	}
}

func TestInspectPlugins(t *testing.T) {
	t.Parallel()
	guest, err := Inspect(testWasm(t, "guest"))
	if err != nil {
		t.Fatal(err)
	}
	for _, export := range []string{"_initialize", "echo", "fail", "trap"} {
		if !guest.HasExport(export) {
			t.Errorf("guest does not export %s", export)
		}
	}
	for _, imp := range []Import{{"extism:host/env", "input_length"}, {"wasi_snapshot_preview1", "fd_write"}} {
		if !slices.Contains(guest.Imports, imp) {
			t.Errorf("guest does not import %v", imp)
		}
	}
	if _, ok := guest.CustomSections["go:buildid"]; !ok {
		t.Errorf("no go:buildid section among %d", len(guest.CustomSections))
	}
	if guest.HostImports() != nil {
		t.Errorf("guest imports host functions %v", guest.HostImports())
	}

	hostcall, err := Inspect(testWasm(t, "hostcall"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := slices.Sorted(slices.Values(hostcall.HostImports())), []string{"ask", "notify", "roundtrip", "wait"}; !slices.Equal(got, want) {
		t.Errorf("host imports %v, want %v", got, want)
	}
}

func TestInspectManifest(t *testing.T) {
	t.Parallel()
	wasm := wasmtest.RunModule()
	info, err := Inspect(wasm)
	if m, merr := info.Manifest(); err != nil || m != nil || merr != nil {
		t.Errorf("module without a manifest: %v, %v, %v", err, m, merr)
	}

	wasm = abi.AppendCustomSection(wasm, abi.ManifestSection, []byte(`{"abi":1,"name":"old"}`))
	wasm = abi.AppendCustomSection(wasm, abi.ManifestSection,
		[]byte(`{"abi":1,"name":"demo","needs":{"host_functions":["list_roots"],"hosts":["api.example.com"]}}`))
	info, err = Inspect(wasm)
	if err != nil {
		t.Fatal(err)
	}
	m, err := info.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.ABI != 1 || m.Name != "demo" || !slices.Equal(m.Needs.HostFunctions, []string{"list_roots"}) ||
		!slices.Equal(m.Needs.Hosts, []string{"api.example.com"}) {
		t.Errorf("got %+v", m)
	}
	if !info.HasExport("run") {
		t.Error("appending a section lost the exports")
	}

	info, err = Inspect(abi.AppendCustomSection(wasmtest.RunModule(), abi.ManifestSection, []byte(`{"abi":`)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := info.Manifest(); err == nil {
		t.Error("malformed manifest accepted")
	}
}
