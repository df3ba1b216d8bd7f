//go:build wasip1

// Command jobs is an mcphost plugin with a long-running tool, crunch,
// that does real CPU work in steps and tells the client how it is going:
// a progress notification after every step (notify_progress, when the
// client sent a progressToken) and log messages (notify_logging_message).
// crunch declares taskSupport "optional", so a client that speaks MCP
// tasks (2025-11-25) may run it as a task and poll for the result instead
// of holding the request open.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	pdk "github.com/mcphost/mcphost/pdk/go"
)

// main is required by Go but never runs: the host calls the exports after
// _initialize has run the init functions.
func main() {}

func init() {
	pdk.Tool("crunch", "Run a CPU-bound job: a SHA-256 hash chain of steps × rounds hashes, starting from a seed. "+
		"Reports progress after each step and logs as it goes; may run as a task. "+
		"The result is deterministic, so it doubles as a proof of work.",
		crunch, pdk.WithTitle("Crunch numbers"), pdk.ReadOnly(), pdk.Idempotent(), pdk.OpenWorld(false),
		pdk.TaskSupport("optional"))
}

type crunchArgs struct {
	Steps  int    `json:"steps,omitempty" jsonschema:"minimum=1,maximum=1000,default=20" description:"Number of steps; progress is reported after each"`
	Rounds int    `json:"rounds,omitempty" jsonschema:"minimum=1,maximum=5000000,default=50000" description:"SHA-256 hashes per step"`
	Seed   string `json:"seed,omitempty" jsonschema:"maxLength=1024,default=mcphost" description:"Text the chain starts from"`
}

// Crunched is the structured result of crunch.
type Crunched struct {
	Steps  int    `json:"steps"`
	Rounds int    `json:"rounds"`
	Hashes int64  `json:"hashes" description:"steps × rounds"`
	Digest string `json:"digest" description:"Hex SHA-256 at the end of the chain"`
	Millis int64  `json:"millis" description:"Wall time the work took, in milliseconds"`
}

// chain hashes h rounds times: h = SHA-256(h).
func chain(h [sha256.Size]byte, rounds int) [sha256.Size]byte {
	for range rounds {
		h = sha256.Sum256(h[:])
	}
	return h
}

func crunch(ctx *pdk.Context, a crunchArgs) (Crunched, error) {
	steps, rounds, seed := a.Steps, a.Rounds, a.Seed
	if steps == 0 {
		steps = 20
	}
	if rounds == 0 {
		rounds = 50000
	}
	if seed == "" {
		seed = "mcphost"
	}
	start := time.Now()
	ctx.Log(pdk.LevelInfo, fmt.Sprintf("crunch started: %d steps of %d hashes", steps, rounds),
		map[string]any{"steps": steps, "rounds": rounds})
	h := sha256.Sum256([]byte(seed))
	for step := 1; step <= steps; step++ {
		h = chain(h, rounds)
		prefix := hex.EncodeToString(h[:4])
		ctx.Progress(float64(step), float64(steps), fmt.Sprintf("step %d of %d done (%s…)", step, steps, prefix))
		ctx.Log(pdk.LevelDebug, fmt.Sprintf("step %d of %d", step, steps), map[string]any{"step": step, "digest": prefix})
	}
	r := Crunched{
		Steps: steps, Rounds: rounds, Hashes: int64(steps) * int64(rounds),
		Digest: hex.EncodeToString(h[:]), Millis: time.Since(start).Milliseconds(),
	}
	ctx.Log(pdk.LevelNotice, fmt.Sprintf("crunch finished: %d hashes in %d ms", r.Hashes, r.Millis),
		map[string]any{"digest": r.Digest})
	return r, nil
}
