//go:build !race

package host

// raceDetector is true when the tests run with the race detector, which
// allocates on its own.
const raceDetector = false
