//go:build race && !wasip1

package conformance_test

func init() { raceEnabled = true }
