//go:build !race

package plugintest

// raceEnabled selects wazero's interpreter under the race detector.
const raceEnabled = false
