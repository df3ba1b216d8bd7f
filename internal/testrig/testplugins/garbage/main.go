//go:build wasip1

// Command garbage is a test plugin that measures the garbage a tools/call
// leaves in a TinyGo plugin: the tool "digest" is the tools example's hash
// in miniature (structured arguments and result), and "memstats" answers
// the runtime's allocation counters. internal/tinygo checks with it that a
// call stays within its garbage ceiling (TestACallsGarbageStaysUnderItsCeiling):
// garbage is what makes TinyGo's collector run, and its pauses are the tail
// of a plugin's latency.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"runtime"

	pdk "github.com/mcphost/mcphost/pdk/go"
)

func main() {}

type digestArgs struct {
	Text      string `json:"text"`
	Algorithm string `json:"algorithm,omitempty" jsonschema:"enum=sha256,default=sha256"`
}

// Digest is the structured result of digest.
type Digest struct {
	Algorithm string `json:"algorithm"`
	Digest    string `json:"digest"`
	Bits      int    `json:"bits"`
}

// Counters are the runtime's allocation counters.
type Counters struct {
	Bytes   uint64 `json:"bytes"`
	Objects uint64 `json:"objects"`
}

func init() {
	pdk.Tool("digest", "The SHA-256 digest of a text.", func(_ *pdk.Context, a digestArgs) (Digest, error) {
		sum := sha256.Sum256([]byte(a.Text))
		return Digest{Algorithm: "sha256", Digest: hex.EncodeToString(sum[:]), Bits: 256}, nil
	})
	pdk.Tool("memstats", "The runtime's allocation counters.", func(_ *pdk.Context, _ struct{}) (Counters, error) {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return Counters{Bytes: m.TotalAlloc, Objects: m.Mallocs}, nil
	})
}
