package wasmpass

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/wasmtest"
)

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
		{"custom name past section", wasmtest.Module(wasmtest.Section(0, []byte{0x05, 'a'})), ErrSectionOverrun},
		{"custom name not UTF-8", wasmtest.Module(wasmtest.Section(0, []byte{0x01, 0xff})), ErrMalformed},
		{"import count past section", wasmtest.Module(wasmtest.Section(2, []byte{0x02})), ErrSectionOverrun},
		{"huge import count", wasmtest.Module(wasmtest.Section(2, wasmtest.ULEB(1<<31))), ErrSectionOverrun},
		{"unknown import kind", wasmtest.Module(wasmtest.Section(2, wasmtest.Vec(slices.Concat(wasmtest.Name("m"), wasmtest.Name("n"), []byte{0x09})))), ErrMalformed},
		{"bad limits", wasmtest.Module(wasmtest.Section(2, wasmtest.Vec(slices.Concat(wasmtest.Name("m"), wasmtest.Name("n"), []byte{0x02, 0x08, 0x00})))), ErrMalformed},
		{"bad value type", wasmtest.Module(wasmtest.Section(2, wasmtest.Vec(slices.Concat(wasmtest.Name("m"), wasmtest.Name("n"), []byte{0x03, 0x40, 0x00})))), ErrMalformed},
		{"export past section", wasmtest.Module(wasmtest.Section(7, wasmtest.Vec(slices.Concat(wasmtest.Name("run"), []byte{0x00})))), ErrSectionOverrun},
		{"bytes after exports", wasmtest.Module(wasmtest.Section(7, append(wasmtest.Vec(slices.Concat(wasmtest.Name("run"), []byte{0x00, 0x00})), 0x00))), ErrMalformed},
	} {
		exports, imports, custom, err := Inspect(tc.wasm)
		if !errors.Is(err, tc.want) || exports != nil || imports != nil || custom != nil {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
}

// TestInspectTruncated checks every prefix of a module: those ending at a
// section boundary are modules too, all others must be rejected.
func TestInspectTruncated(t *testing.T) {
	t.Parallel()
	wasm := wasmtest.ImportsModule()
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
		_, _, _, err := Inspect(wasm[:n])
		if (err == nil) != boundaries[n] {
			t.Errorf("prefix of %d bytes: %v", n, err)
		}
	}
}

func FuzzInspect(f *testing.F) {
	for _, seed := range [][]byte{
		nil,
		[]byte("\x00asm\x01\x00\x00\x00"),
		wasmtest.RunModule(),
		wasmtest.SpinModule(),
		wasmtest.ImportsModule(),
		abi.AppendCustomSection(wasmtest.RunModule(), abi.ManifestSection, []byte(`{"abi":1}`)),
		wasmtest.Module(wasmtest.Section(2, wasmtest.ULEB(1<<31))),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, wasm []byte) {
		exports, imports, custom, err := Inspect(wasm)
		if err != nil {
			if exports != nil || imports != nil || custom != nil {
				t.Fatal("a module's contents returned with an error")
			}
			return
		}
		// Appending a custom section keeps a module valid and adds it.
		_, _, custom, err = Inspect(abi.AppendCustomSection(wasm, "fuzz", wasm))
		if err != nil || !bytes.Equal(custom["fuzz"], wasm) {
			t.Fatalf("appending a custom section: %v", err)
		}
	})
}
