//go:build !wasm

package pdk

import (
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// fakeKernel is an in-memory Extism kernel: a bump-allocated arena of
// blocks, the call's input, output and error, configuration, and recorded
// host function calls.
type fakeKernel struct {
	t      reporter
	arena  []byte
	blocks map[uint64]uint64 // offset -> length of live blocks
	freed  map[uint64]bool

	input    []byte
	output   []byte
	outSet   bool
	errText  string
	errSet   bool
	config   map[string]string
	replies  map[string]string // host function -> JSON reply
	calls    []hostCall
	inputU64 int
	inputU8  int
	loadU64  int
	storeU64 int
	storeU8  int

	httpStatus  int32
	httpBody    string
	httpHeaders string
	httpReq     string
	httpReqBody string
}

type hostCall struct {
	name  string
	input string
}

// reporter is what the fake kernel needs of a test: a testing.TB, or the
// examples' panicking stand-in (export_test.go).
type reporter interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// newFakeKernel installs a fake kernel for the test.
func newFakeKernel(t testing.TB) *fakeKernel {
	k := makeFakeKernel(t)
	t.Cleanup(useKernel(k))
	return k
}

// makeFakeKernel returns a fake kernel reporting to t, not installed.
func makeFakeKernel(t reporter) *fakeKernel {
	return &fakeKernel{
		t:       t,
		arena:   make([]byte, 64), // offsets below 64 are never handed out
		blocks:  map[uint64]uint64{},
		freed:   map[uint64]bool{},
		config:  map[string]string{},
		replies: map[string]string{},
	}
}

func (k *fakeKernel) bounds(offset, n uint64) {
	if offset < 64 || offset+n > uint64(len(k.arena)) {
		k.t.Fatalf("kernel access out of bounds: %d+%d (arena %d)", offset, n, len(k.arena))
	}
}

func (k *fakeKernel) InputLength() uint64 { return uint64(len(k.input)) }

func (k *fakeKernel) InputLoadU64(offset uint64) uint64 {
	k.inputU64++
	if offset+8 > uint64(len(k.input)) {
		k.t.Fatalf("input_load_u64 past the input: %d", offset)
	}
	return binary.LittleEndian.Uint64(k.input[offset:])
}

func (k *fakeKernel) InputLoadU8(offset uint64) uint32 {
	k.inputU8++
	return uint32(k.input[offset])
}

func (k *fakeKernel) Alloc(n uint64) uint64 {
	if n == 0 {
		return 0
	}
	offset := uint64(len(k.arena))
	k.arena = append(k.arena, make([]byte, n)...)
	k.blocks[offset] = n
	return offset
}

func (k *fakeKernel) Free(offset uint64) {
	if _, ok := k.blocks[offset]; ok {
		delete(k.blocks, offset)
		k.freed[offset] = true
	}
}

func (k *fakeKernel) Length(offset uint64) uint64 { return k.blocks[offset] }

func (k *fakeKernel) LoadU64(offset uint64) uint64 {
	k.loadU64++
	k.bounds(offset, 8)
	return binary.LittleEndian.Uint64(k.arena[offset:])
}

func (k *fakeKernel) LoadU8(offset uint64) uint32 {
	k.bounds(offset, 1)
	return uint32(k.arena[offset])
}

func (k *fakeKernel) StoreU64(offset, v uint64) {
	k.storeU64++
	k.bounds(offset, 8)
	binary.LittleEndian.PutUint64(k.arena[offset:], v)
}

func (k *fakeKernel) StoreU8(offset uint64, v uint32) {
	k.storeU8++
	k.bounds(offset, 1)
	k.arena[offset] = byte(v)
}

// block returns the content of a live block.
func (k *fakeKernel) block(offset uint64) []byte {
	n, ok := k.blocks[offset]
	if !ok {
		k.t.Fatalf("no live block at %d", offset)
	}
	return append([]byte(nil), k.arena[offset:offset+n]...)
}

// put allocates a block holding s.
func (k *fakeKernel) put(s string) uint64 {
	offset := k.Alloc(uint64(len(s)))
	if offset != 0 {
		copy(k.arena[offset:], s)
	}
	return offset
}

func (k *fakeKernel) OutputSet(offset, length uint64) {
	k.outSet = true
	if offset == 0 {
		k.output = nil
		return
	}
	k.output = k.block(offset)[:length]
}

func (k *fakeKernel) ErrorSet(offset uint64) {
	k.errSet = true
	k.errText = string(k.block(offset))
}

func (k *fakeKernel) ConfigGet(offset uint64) uint64 {
	v, ok := k.config[string(k.block(offset))]
	if !ok {
		return 0
	}
	return k.put(v)
}

func (k *fakeKernel) HTTPRequest(req, body uint64) uint64 {
	k.httpReq = string(k.block(req))
	if body != 0 {
		k.httpReqBody = string(k.block(body))
	}
	k.Free(req)
	k.Free(body)
	return k.put(k.httpBody)
}

func (k *fakeKernel) HTTPStatusCode() int32 { return k.httpStatus }

func (k *fakeKernel) HTTPHeaders() uint64 {
	if k.httpHeaders == "" {
		return 0
	}
	return k.put(k.httpHeaders)
}

func (k *fakeKernel) HostCall(name string, input uint64) uint64 {
	c := hostCall{name: name}
	if input != 0 {
		c.input = string(k.block(input))
	}
	k.calls = append(k.calls, c)
	if r, ok := k.replies[name]; ok {
		return k.put(r)
	}
	return 0
}

// call runs export handler h with input (marshalled unless it is a string
// or []byte) and returns its status, output and error text.
func (k *fakeKernel) call(h handler, input any) (int32, string, string) {
	k.t.Helper()
	switch in := input.(type) {
	case string:
		k.input = []byte(in)
	case []byte:
		k.input = in
	default:
		b, err := json.Marshal(in)
		if err != nil {
			k.t.Fatal(err)
		}
		k.input = b
	}
	k.output, k.outSet, k.errText, k.errSet = nil, false, "", false
	rc := run(h)
	if rc == 0 && (!k.outSet || k.errSet) {
		k.t.Fatalf("status 0 but output set %v, error set %v", k.outSet, k.errSet)
	}
	if rc != 0 && !k.errSet {
		k.t.Fatalf("status %d without an error", rc)
	}
	return rc, string(k.output), k.errText
}

// ok runs h and decodes its output into out, failing on an error.
func (k *fakeKernel) ok(h handler, input any, out any) {
	k.t.Helper()
	rc, output, errText := k.call(h, input)
	if rc != 0 {
		k.t.Fatalf("export failed (%d): %s", rc, errText)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(output), out); err != nil {
			k.t.Fatalf("output %s: %v", output, err)
		}
	}
}

// fail runs h, expects it to fail and returns the ABI error.
func (k *fakeKernel) fail(h handler, input any) abi.Error {
	k.t.Helper()
	rc, output, errText := k.call(h, input)
	if rc == 0 {
		k.t.Fatalf("export succeeded: %s", output)
	}
	var e abi.Error
	if err := json.Unmarshal([]byte(errText), &e); err != nil {
		k.t.Fatalf("error text %q is not an abi.Error: %v", errText, err)
	}
	return e
}

// request builds an abi.Input.
func request(params any, ctx abi.Context) abi.Input {
	b, err := json.Marshal(params)
	if err != nil {
		panic(err)
	}
	return abi.Input{Request: b, Context: ctx}
}

// freshRegistry gives the test an empty registry.
func freshRegistry(t testing.TB) {
	old := reg
	reg = newRegistry()
	t.Cleanup(func() { reg = old })
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMemoryTransfer(t *testing.T) {
	k := newFakeKernel(t)
	for _, n := range []int{0, 1, 7, 8, 9, 16, 1003} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i*7 + 3)
		}
		k.input = data
		k.inputU64, k.inputU8 = 0, 0
		got := readInput()
		if string(got) != string(data) {
			t.Fatalf("readInput(%d) differs", n)
		}
		if k.inputU64 != n/8 || k.inputU8 != n%8 {
			t.Errorf("readInput(%d): %d u64 and %d u8 loads, want %d and %d", n, k.inputU64, k.inputU8, n/8, n%8)
		}
		k.storeU64, k.storeU8 = 0, 0
		off := allocBytes(data)
		if n == 0 {
			if off != 0 {
				t.Errorf("allocBytes(empty) = %d", off)
			}
			continue
		}
		if k.storeU64 != n/8 || k.storeU8 != n%8 {
			t.Errorf("store(%d): %d u64 and %d u8 stores", n, k.storeU64, k.storeU8)
		}
		if back := takeBlock(off); string(back) != string(data) {
			t.Fatalf("round trip of %d bytes differs", n)
		}
		if !k.freed[off] {
			t.Errorf("takeBlock did not free")
		}
	}
}

func TestConfig(t *testing.T) {
	k := newFakeKernel(t)
	k.config["api_key"] = "s3cret"
	if v, ok := Config("api_key"); !ok || v != "s3cret" {
		t.Errorf("Config(api_key) = %q, %v", v, ok)
	}
	if v, ok := Config("missing"); ok || v != "" {
		t.Errorf("Config(missing) = %q, %v", v, ok)
	}
	if len(k.blocks) != 0 {
		t.Errorf("Config leaked %d blocks", len(k.blocks))
	}
}

func TestFetch(t *testing.T) {
	k := newFakeKernel(t)
	k.httpStatus, k.httpBody, k.httpHeaders = 201, `{"ok":true}`, `{"content-type":"application/json"}`
	resp, err := Fetch(HTTPRequest{Method: "POST", URL: "https://api.example.com/x", Headers: map[string]string{"A": "b"}, Body: []byte("hello")})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 201 || string(resp.Body) != `{"ok":true}` || resp.Headers["content-type"] != "application/json" {
		t.Errorf("response = %+v", resp)
	}
	if k.httpReq != `{"method":"POST","url":"https://api.example.com/x","headers":{"A":"b"}}` || k.httpReqBody != "hello" {
		t.Errorf("request = %s body %q", k.httpReq, k.httpReqBody)
	}
	k.httpStatus = 0
	if _, err := Fetch(HTTPRequest{URL: "https://api.example.com/"}); err == nil {
		t.Error("Fetch without status succeeded")
	}
	// mcphost answers a request that failed with status 0 and why as the
	// body (abi.ExportHTTPErrors): an error the plugin can handle.
	k.httpBody = `HTTP request to 'https://api.example.org/' is not allowed: host api.example.org is not in the allowed_hosts of plugin p (add "api.example.org" to allowed_hosts in [plugins.p])`
	if _, err := Fetch(HTTPRequest{URL: "https://api.example.org/"}); err == nil || err.Error() != k.httpBody {
		t.Errorf("Fetch refused by the host: error %v, want %q", err, k.httpBody)
	}
	k.httpBody = ""
	if _, err := Fetch(HTTPRequest{URL: "https://api.example.com/"}); err == nil || err.Error() != "pdk: Fetch: no response from https://api.example.com/" {
		t.Errorf("Fetch without status or message: error %v", err)
	}
	if len(k.blocks) != 0 {
		t.Errorf("Fetch leaked %d blocks", len(k.blocks))
	}
	if _, err := Fetch(HTTPRequest{}); err == nil {
		t.Error("Fetch without URL succeeded")
	}
}
