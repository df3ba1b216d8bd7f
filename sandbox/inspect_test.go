package sandbox

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// Helpers assembling wasm binaries.

func uleb(v uint32) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		if v >>= 7; v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func wasmName(s string) []byte { return append(uleb(uint32(len(s))), s...) }

func wasmVec(items ...[]byte) []byte {
	return slices.Concat(append([][]byte{uleb(uint32(len(items)))}, items...)...)
}

func wasmSection(id byte, body []byte) []byte {
	return slices.Concat([]byte{id}, uleb(uint32(len(body))), body)
}

func wasmModule(sections ...[]byte) []byte {
	return slices.Concat(append([][]byte{[]byte("\x00asm\x01\x00\x00\x00")}, sections...)...)
}

// runModule exports "run", which returns 0.
func runModule() []byte {
	return wasmModule(
		wasmSection(1, wasmVec([]byte{0x60, 0x00, 0x01, 0x7f})), // type 0: () -> i32
		wasmSection(3, wasmVec([]byte{0x00})),                   // function 0 of type 0
		wasmSection(7, wasmVec(slices.Concat(wasmName("run"), []byte{0x00, 0x00}))),
		wasmSection(10, wasmVec([]byte{0x04, 0x00, 0x41, 0x00, 0x0b})), // i32.const 0
	)
}

// spinModule has a start function that never returns.
func spinModule() []byte {
	return wasmModule(
		wasmSection(1, wasmVec([]byte{0x60, 0x00, 0x00})), // type 0: () -> ()
		wasmSection(3, wasmVec([]byte{0x00})),
		wasmSection(8, []byte{0x00}),                                                     // start: function 0
		wasmSection(10, wasmVec([]byte{0x07, 0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b})), // loop br 0 end
	)
}

// importsModule imports and exports one item of every kind.
func importsModule() []byte {
	imp := func(module, name string, desc ...byte) []byte {
		return slices.Concat(wasmName(module), wasmName(name), desc)
	}
	exp := func(name string, kind byte) []byte { return slices.Concat(wasmName(name), []byte{kind, 0x00}) }
	return wasmModule(
		wasmSection(1, wasmVec([]byte{0x60, 0x00, 0x00})),
		wasmSection(2, wasmVec(
			imp(abi.HostModule, "notify", 0x00, 0x00),
			imp("env", "table", 0x01, 0x70, 0x00, 0x01),
			imp("env", "memory", 0x02, 0x01, 0x01, 0x80, 0x02),
			imp("env", "global", 0x03, 0x7f, 0x00),
			imp("env", "ref", 0x03, 0x63, 0x70, 0x01),
			imp("env", "tag", 0x04, 0x00, 0x00),
			imp("wasi_snapshot_preview1", "fd_write", 0x00, 0x00),
		)),
		wasmSection(0, slices.Concat(wasmName("note"), []byte("payload"))),
		wasmSection(7, wasmVec(exp("run", 0x00), exp("memory", 0x02), exp("g", 0x03))),
	)
}

func TestInspectModule(t *testing.T) {
	t.Parallel()
	info, err := Inspect(importsModule())
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
	wasm := runModule()
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

	info, err = Inspect(abi.AppendCustomSection(runModule(), abi.ManifestSection, []byte(`{"abi":`)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := info.Manifest(); err == nil {
		t.Error("malformed manifest accepted")
	}
}

func TestInspectMalformed(t *testing.T) {
	t.Parallel()
	header := []byte("\x00asm\x01\x00\x00\x00")
	for _, tc := range []struct {
		name string
		wasm []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"short magic", []byte("\x00as"), ErrTruncated},
		{"no version", []byte("\x00asm\x01"), ErrTruncated},
		{"ELF", []byte("\x7fELF\x02\x01\x01\x00"), ErrBadMagic},
		{"text", []byte("hello"), ErrBadMagic},
		{"component", []byte("\x00asm\x0d\x00\x01\x00"), ErrBadVersion},
		{"section without size", append(header, 0x01), ErrTruncated},
		{"unterminated size", append(header, 0x01, 0x80), ErrTruncated},
		{"size past the end", append(header, 0x01, 0x05, 0x00), ErrSectionOverrun},
		{"huge size", append(header, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f), ErrSectionOverrun},
		{"size over 32 bits", append(header, 0x00, 0xff, 0xff, 0xff, 0xff, 0x1f), ErrMalformed},
		{"LEB128 too long", append(header, 0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00), ErrMalformed},
		{"custom name past section", wasmModule(wasmSection(0, []byte{0x05, 'a'})), ErrSectionOverrun},
		{"custom name not UTF-8", wasmModule(wasmSection(0, []byte{0x01, 0xff})), ErrMalformed},
		{"import count past section", wasmModule(wasmSection(2, []byte{0x02})), ErrSectionOverrun},
		{"huge import count", wasmModule(wasmSection(2, uleb(1<<31))), ErrSectionOverrun},
		{"unknown import kind", wasmModule(wasmSection(2, wasmVec(slices.Concat(wasmName("m"), wasmName("n"), []byte{0x09})))), ErrMalformed},
		{"bad limits", wasmModule(wasmSection(2, wasmVec(slices.Concat(wasmName("m"), wasmName("n"), []byte{0x02, 0x08, 0x00})))), ErrMalformed},
		{"bad value type", wasmModule(wasmSection(2, wasmVec(slices.Concat(wasmName("m"), wasmName("n"), []byte{0x03, 0x40, 0x00})))), ErrMalformed},
		{"export past section", wasmModule(wasmSection(7, wasmVec(slices.Concat(wasmName("run"), []byte{0x00})))), ErrSectionOverrun},
		{"bytes after exports", wasmModule(wasmSection(7, append(wasmVec(slices.Concat(wasmName("run"), []byte{0x00, 0x00})), 0x00))), ErrMalformed},
	} {
		info, err := Inspect(tc.wasm)
		if !errors.Is(err, tc.want) || info != nil {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
}

// TestInspectTruncated checks every prefix of a module: those ending at a
// section boundary are modules too, all others must be rejected.
func TestInspectTruncated(t *testing.T) {
	t.Parallel()
	wasm := importsModule()
	boundaries := map[int]bool{8: true}
	for r := (&reader{buf: wasm, off: 8, end: ErrTruncated}); r.off < len(wasm); {
		if _, err := r.byte(); err != nil {
			t.Fatal(err)
		}
		size, err := r.u32()
		if err != nil {
			t.Fatal(err)
		}
		r.off += int(size)
		boundaries[r.off] = true
	}
	for n := range len(wasm) + 1 {
		_, err := Inspect(wasm[:n])
		if (err == nil) != boundaries[n] {
			t.Errorf("prefix of %d bytes: %v", n, err)
		}
	}
}

func FuzzInspect(f *testing.F) {
	for _, seed := range [][]byte{
		nil,
		[]byte("\x00asm\x01\x00\x00\x00"),
		runModule(),
		spinModule(),
		importsModule(),
		abi.AppendCustomSection(runModule(), abi.ManifestSection, []byte(`{"abi":1}`)),
		wasmModule(wasmSection(2, uleb(1<<31))),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, wasm []byte) {
		info, err := Inspect(wasm)
		if err != nil {
			if info != nil {
				t.Fatal("info returned with an error")
			}
			return
		}
		info.HostImports()
		_, _ = info.Manifest()
		// Appending a custom section keeps a module valid and adds it.
		info, err = Inspect(abi.AppendCustomSection(wasm, "fuzz", wasm))
		if err != nil || !bytes.Equal(info.CustomSections["fuzz"], wasm) {
			t.Fatalf("appending a custom section: %v", err)
		}
	})
}
