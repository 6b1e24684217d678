//go:build race

package store

// raceEnabled: the race detector slows SQLite's translated C code several
// times, so the process tests scale their counts down.
const raceEnabled = true
