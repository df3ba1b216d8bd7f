//go:build !race

package plugintest

// raceEnabled selects wazero's interpreter under the race detector.
const raceEnabled = false

// RaceEnabled reports whether the test binary has the race detector.
const RaceEnabled = raceEnabled
