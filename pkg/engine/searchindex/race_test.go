//go:build race

package searchindex

// raceEnabled: the race detector makes the property test ten times
// slower, so it runs fewer rounds.
const raceEnabled = true
