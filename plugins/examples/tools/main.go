//go:build wasip1

// Command tools is an mcphost plugin with everyday utility tools that
// return structured output: text statistics, hashing, JSON queries, UUIDs
// and a prime counter that reports progress.
package main

import pdk "github.com/mcphost/mcphost/pdk/go"

// main is required by Go but never runs: the host calls the exports after
// _initialize has run the init functions.
func main() {}

func init() {
	pure := []pdk.ToolOption{pdk.ReadOnly(), pdk.Idempotent(), pdk.OpenWorld(false)}

	pdk.Tool("text_stats", "Count the lines, words, characters and sentences of a text and find its most frequent words.",
		textStats, append(pure, pdk.WithTitle("Text statistics"))...)
	pdk.Tool("hash", "Compute a cryptographic digest (sha256, sha512, sha1 or md5) of a text.",
		hashText, append(pure, pdk.WithTitle("Hash text"))...)
	pdk.Tool("json_query", "Extract a value from a JSON document by a dotted path (items[0].name) or a JSON Pointer (/items/0/name).",
		jsonQuery, append(pure, pdk.WithTitle("Query JSON"))...)
	pdk.Tool("uuid", "Generate random (version 4) or time-ordered (version 7) UUIDs.",
		newUUIDs, pdk.WithTitle("Generate UUIDs"), pdk.ReadOnly(), pdk.OpenWorld(false))
	pdk.Tool("count_primes", "Count the prime numbers up to a limit (at most 100,000,000), reporting progress as it goes.",
		countPrimes, append(pure, pdk.WithTitle("Count primes"))...)
}
