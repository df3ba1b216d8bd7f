//go:build wasip1

// Command goroutines is a test plugin whose tools block on goroutines:
// internal/tinygo checks that they work when built with TinyGo's asyncify
// scheduler, whose exports pdk/go runs on a worker goroutine
// (pdk/go/exports_asyncify.go), as with standard Go.
package main

import (
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

func init() {
	pdk.Tool("fanout", "Start n goroutines and collect what they send.", fanout)
	pdk.Tool("start_ticker", "Start a goroutine that ticks every millisecond.", startTicker)
	pdk.Tool("ticks", "Sleep, then return the ticker's count.", readTicks)
}
