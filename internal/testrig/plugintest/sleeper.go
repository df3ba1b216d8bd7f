package plugintest

import (
	"encoding/binary"
	"slices"
	"time"
)

// PollSleeper is a module, assembled by hand, whose export (of type
// () -> i32) never returns: it calls WASI's poll_oneoff, asking to sleep
// an hour, in an endless loop, through a table that holds poll_oneoff
// when indirect, else directly. It is R2 of issue 23: through a table,
// the sandbox once looked at the call's context once in 1,024 sleeps. Its
// memory holds one clock subscription at 0, whose events go to 64 and
// their count to 128.
func PollSleeper(export string, indirect bool) []byte {
	call := []byte{0x10, 0x00} // call poll_oneoff
	if indirect {
		call = []byte{0x41, 0x00, 0x11, 0x00, 0x00} // call_indirect type 0 table 0 (elem 0)
	}
	spin := slices.Concat([]byte{0x00, 0x03, 0x40, // loop
		0x41, 0x00, 0x41, 0xc0, 0x00, 0x41, 0x01, 0x41, 0x80, 0x01}, // poll_oneoff(0, 64, 1, 128)
		call, []byte{0x1a, 0x0c, 0x00, 0x0b, // drop; br 0; end
			0x41, 0x00, 0x0b}) // i32.const 0
	sub := make([]byte, 48)
	sub[16] = 1                                                // clock: monotonic
	binary.LittleEndian.PutUint64(sub[24:], uint64(time.Hour)) // timeout, relative
	vec := func(items ...[]byte) []byte {
		return slices.Concat(append([][]byte{uleb(uint32(len(items)))}, items...)...)
	}
	name := func(s string) []byte { return slices.Concat(uleb(uint32(len(s))), []byte(s)) }
	return slices.Concat(
		[]byte("\x00asm\x01\x00\x00\x00"),
		section(1, vec([]byte{0x60, 0x04, 0x7f, 0x7f, 0x7f, 0x7f, 0x01, 0x7f}, []byte{0x60, 0x00, 0x01, 0x7f})),
		section(2, vec(slices.Concat(name("wasi_snapshot_preview1"), name("poll_oneoff"), []byte{0x00, 0x00}))),
		section(3, vec([]byte{0x01})),
		section(4, vec([]byte{0x70, 0x00, 0x01})),
		section(5, vec([]byte{0x00, 0x01})),
		section(7, vec(slices.Concat(name(export), []byte{0x00, 0x01}))),
		section(9, vec([]byte{0x00, 0x41, 0x00, 0x0b, 0x01, 0x00})), // table[0] = poll_oneoff
		section(10, vec(slices.Concat(uleb(uint32(len(spin))), spin))),
		section(11, vec(slices.Concat([]byte{0x00, 0x41, 0x00, 0x0b}, uleb(uint32(len(sub))), sub))),
	)
}
