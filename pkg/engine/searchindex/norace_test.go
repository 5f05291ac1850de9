//go:build !race

package searchindex

const raceEnabled = false
