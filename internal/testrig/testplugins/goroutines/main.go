//go:build wasip1

// Command goroutines is a test plugin whose tools block on goroutines:
// internal/tinygo checks that they work when built with TinyGo's asyncify
// scheduler, whose exports pdk/go runs on a worker goroutine
// (pdk/go/exports_asyncify.go), as with standard Go.
package main

import (
	"runtime"
	"sync"
	"time"

	pdk "github.com/mcphost/mcphost/pdk/go"
)

func main() {}

type fanoutArgs struct {
	N int `json:"n" description:"How many goroutines to start."`
}

// Sums is the result of fanout.
type Sums struct {
	Squares int `json:"squares"` // the sum of i*i for i < n, collected over a channel
	Count   int `json:"count"`   // how many goroutines ran, counted under a mutex
}

// fanout starts n goroutines that each sleep a millisecond, then send i*i
// on a channel and count themselves under a mutex; it waits for all.
func fanout(_ *pdk.Context, a fanoutArgs) (Sums, error) {
	results := make(chan int)
	var (
		mu sync.Mutex
		wg sync.WaitGroup
		s  Sums
	)
	for i := range a.N {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Millisecond)
			mu.Lock()
			s.Count++
			mu.Unlock()
			results <- i * i
		}()
	}
	go func() {
		wg.Wait()
		close(results)
	}()
	for r := range results {
		s.Squares += r
	}
	return s, nil
}

// ticks counts the ticks of the goroutine start_ticker starts.
var (
	tickMu sync.Mutex
	ticks  int
	ticker bool
)

type none struct{}

// startTicker starts, once, a goroutine that counts a tick every
// millisecond for as long as the plugin lives; readTicks (the tool ticks)
// sleeps for the given milliseconds, then returns the count.
func startTicker(_ *pdk.Context, _ none) (string, error) {
	tickMu.Lock()
	defer tickMu.Unlock()
	if !ticker {
		ticker = true
		go func() {
			for {
				time.Sleep(time.Millisecond)
				tickMu.Lock()
				ticks++
				tickMu.Unlock()
			}
		}()
	}
	return "started", nil
}

type sleepArgs struct {
	Ms int `json:"ms"`
}

// Ticks is the result of ticks.
type Ticks struct {
	Ticks int `json:"ticks"`
}

func readTicks(_ *pdk.Context, a sleepArgs) (Ticks, error) {
	time.Sleep(time.Duration(a.Ms) * time.Millisecond)
	tickMu.Lock()
	defer tickMu.Unlock()
	return Ticks{ticks}, nil
}

// The keeper goroutine holds blocks that nothing but its own stack
// references, and is parked on a channel between checks: collections
// that run meanwhile (churn) must find the blocks through the parked
// goroutine's stack, which TinyGo's patched collector scans only where it
// is in use (internal/tinygo/runtime.patch).
var (
	keeping bool
	check   = make(chan struct{})
	intact  = make(chan int)
)

// keep starts the keeper once: it fills 64 blocks of 4 KiB, block i with
// the byte i, then answers each check with how many blocks still hold
// their pattern.
func keep(_ *pdk.Context, _ none) (string, error) {
	if !keeping {
		keeping = true
		go func() {
			blocks := make([][]byte, 64)
			for i := range blocks {
				blocks[i] = make([]byte, 4096)
				for j := range blocks[i] {
					blocks[i][j] = byte(i)
				}
			}
			for range check {
				n := 0
				for i, b := range blocks {
					whole := true
					for _, c := range b {
						whole = whole && c == byte(i)
					}
					if whole {
						n++
					}
				}
				intact <- n
			}
		}()
	}
	return "keeping", nil
}

// Churn is the result of churn.
type Churn struct {
	Collections int `json:"collections"` // runtime.GC calls so far
}

// churned holds churn's garbage while it writes it, so that it is on the
// heap.
var churned [][]byte

// collections counts churn's runtime.GC calls (TinyGo's MemStats has no
// NumGC).
var collections int

// churn collects three times, each followed by 1 MiB of garbage in 1 KiB
// pieces filled with 0xee, which overwrites whatever a collection freed.
func churn(_ *pdk.Context, _ none) (Churn, error) {
	for range 3 {
		runtime.GC()
		collections++
		for range 1024 {
			b := make([]byte, 1024)
			for j := range b {
				b[j] = 0xee
			}
			churned = append(churned, b)
		}
		churned = nil
	}
	return Churn{collections}, nil
}

// Intact is the result of intact.
type Intact struct {
	Blocks int `json:"blocks"`
}

func checkKept(_ *pdk.Context, _ none) (Intact, error) {
	check <- struct{}{}
	return Intact{<-intact}, nil
}

func init() {
	pdk.Tool("keep", "Start the goroutine that keeps 64 blocks on its stack.", keep)
	pdk.Tool("churn", "Allocate garbage and collect.", churn)
	pdk.Tool("intact", "How many of the kept blocks hold their pattern.", checkKept)
	pdk.Tool("fanout", "Start n goroutines and collect what they send.", fanout)
	pdk.Tool("start_ticker", "Start a goroutine that ticks every millisecond.", startTicker)
	pdk.Tool("ticks", "Sleep, then return the ticker's count.", readTicks)
}
