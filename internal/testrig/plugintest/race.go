//go:build race

package plugintest

// raceEnabled selects wazero's interpreter: the race detector slows its
// compiler down tenfold, and the interpreter starts much faster.
const raceEnabled = true

// RaceEnabled reports whether the test binary has the race detector.
const RaceEnabled = raceEnabled
