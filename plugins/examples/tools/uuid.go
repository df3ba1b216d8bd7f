//go:build wasip1

package main

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"time"

	pdk "github.com/mcphost/mcphost/pdk/go"
)

type uuidArgs struct {
	Count   int `json:"count,omitempty" jsonschema:"minimum=1,maximum=100,default=1"`
	Version int `json:"version,omitempty" jsonschema:"enum=4|7,default=4,description=4 for random UUIDs; 7 for time-ordered ones"`
}

// UUIDs is the structured output of uuid.
type UUIDs struct {
	Version int      `json:"version"`
	UUIDs   []string `json:"uuids"`
}

func newUUIDs(_ *pdk.Context, a uuidArgs) (UUIDs, error) {
	out := UUIDs{Version: a.Version, UUIDs: []string{}}
	if out.Version == 0 {
		out.Version = 4
	}
	n := max(a.Count, 1)
	for i := 0; i < n; i++ {
		var u [16]byte
		if _, err := rand.Read(u[:]); err != nil {
			return out, err
		}
		if out.Version == 7 {
			var ms [8]byte
			binary.BigEndian.PutUint64(ms[:], uint64(time.Now().UnixMilli()))
			copy(u[:6], ms[2:])
		}
		u[6] = u[6]&0x0f | byte(out.Version)<<4
		u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
		out.UUIDs = append(out.UUIDs, format(u))
	}
	return out, nil
}

func format(u [16]byte) string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}
