//go:build !race

package tui

// raceEnabled says the test binary was built with -race.
const raceEnabled = false
