//go:build race

package examples_test

// The race detector slows wazero's compiler down tenfold; the interpreter
// starts much faster and runs these tests quickly enough.
func init() { raceEnabled = true }
