//go:build wasip1

package main

import (
	"fmt"

	pdk "github.com/mcphost/mcphost/pdk/go"
)

type countPrimesArgs struct {
	Limit int `json:"limit" jsonschema:"minimum=2,maximum=100000000,description=Count the primes <= limit"`
}

// PrimeCount is the structured output of count_primes.
type PrimeCount struct {
	Limit   int `json:"limit"`
	Count   int `json:"count" description:"Number of primes <= limit"`
	Largest int `json:"largest" description:"The largest prime <= limit"`
}

// segment is how many numbers the sieve handles at a time.
const segment = 1 << 18

// countPrimes runs a segmented sieve of Eratosthenes, reporting progress
// each time another 5% of the range is done (when the client asked for
// progress).
func countPrimes(ctx *pdk.Context, a countPrimesArgs) (PrimeCount, error) {
	n := a.Limit
	// Base primes up to sqrt(n).
	root := 1
	for (root+1)*(root+1) <= n {
		root++
	}
	composite := make([]bool, root+1)
	var base []int
	for i := 2; i <= root; i++ {
		if !composite[i] {
			base = append(base, i)
			for j := i * i; j <= root; j += i {
				composite[j] = true
			}
		}
	}

	r := PrimeCount{Limit: n}
	mark := make([]bool, segment)
	nextReport := 5
	for low := 2; low <= n; low += segment {
		high := min(low+segment-1, n)
		seg := mark[:high-low+1]
		clear(seg)
		for _, p := range base {
			if p*p > high {
				break
			}
			start := max(p*p, (low+p-1)/p*p)
			for j := start; j <= high; j += p {
				seg[j-low] = true
			}
		}
		for i, c := range seg {
			if !c {
				r.Count++
				r.Largest = low + i
			}
		}
		if pct := int(int64(high-1) * 100 / int64(n-1)); pct >= nextReport && high < n {
			ctx.Progress(float64(high), float64(n), fmt.Sprintf("sieved %d of %d (%d%%), %d primes so far", high, n, pct, r.Count))
			nextReport = pct - pct%5 + 5
		}
	}
	ctx.Progress(float64(n), float64(n), fmt.Sprintf("done: %d primes", r.Count))
	return r, nil
}
