package pdk

import (
	"encoding/binary"
	"encoding/json"
)

// Memory moves between the plugin and the Extism kernel eight bytes at a
// time, with a byte-wise tail.

// readInput returns the input of the current call.
func readInput() []byte {
	n := extInputLength()
	buf := make([]byte, n)
	words := n &^ 7
	for i := uint64(0); i < words; i += 8 {
		binary.LittleEndian.PutUint64(buf[i:i+8], extInputLoadU64(i))
	}
	for i := words; i < n; i++ {
		buf[i] = byte(extInputLoadU8(i))
	}
	return buf
}

// load copies the kernel memory at offset into buf.
func load(offset uint64, buf []byte) {
	n := uint64(len(buf))
	words := n &^ 7
	for i := uint64(0); i < words; i += 8 {
		binary.LittleEndian.PutUint64(buf[i:i+8], extLoadU64(offset+i))
	}
	for i := words; i < n; i++ {
		buf[i] = byte(extLoadU8(offset + i))
	}
}

// store copies data into the kernel memory at offset.
func store(offset uint64, data []byte) {
	n := uint64(len(data))
	words := n &^ 7
	for i := uint64(0); i < words; i += 8 {
		extStoreU64(offset+i, binary.LittleEndian.Uint64(data[i:i+8]))
	}
	for i := words; i < n; i++ {
		extStoreU8(offset+i, uint32(data[i]))
	}
}

// allocBytes copies data into a new kernel memory block and returns its
// offset; 0 for empty data (the kernel does not allocate empty blocks).
func allocBytes(data []byte) uint64 {
	if len(data) == 0 {
		return 0
	}
	offset := extAlloc(uint64(len(data)))
	if offset == 0 {
		panic("pdk: Extism kernel out of memory")
	}
	store(offset, data)
	return offset
}

// allocJSON marshals v into a new kernel memory block.
func allocJSON(v any) (uint64, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return 0, err
	}
	return allocBytes(b), nil
}

// readBlock returns a copy of the kernel memory block at offset (nil for 0).
func readBlock(offset uint64) []byte {
	if offset == 0 {
		return nil
	}
	buf := make([]byte, extLength(offset))
	load(offset, buf)
	return buf
}

// takeBlock reads the kernel memory block at offset and frees it.
func takeBlock(offset uint64) []byte {
	b := readBlock(offset)
	if offset != 0 {
		extFree(offset)
	}
	return b
}

// setOutput sets the output of the current call. The block is not freed:
// the host reads it after the export returns.
func setOutput(data []byte) {
	extOutputSet(allocBytes(data), uint64(len(data)))
}

// setError sets the Extism error of the current call.
func setError(msg string) {
	if msg == "" {
		msg = "error"
	}
	extErrorSet(allocBytes([]byte(msg)))
}

// Config returns the value of the plugin configuration key (Extism
// config_get) and whether it is set. The operator sets configuration for the
// plugin; declare the keys a plugin reads in its manifest's needs.config.
// An empty value cannot be told apart from an unset key.
func Config(key string) (string, bool) {
	k := allocBytes([]byte(key))
	if k == 0 {
		return "", false
	}
	offset := extConfigGet(k)
	extFree(k)
	if offset == 0 {
		return "", false
	}
	v := takeBlock(offset)
	if len(v) == 0 {
		return "", false
	}
	return string(v), true
}
