//go:build race

package testbin

// race: the tests run under the race detector, so the wagraph they run
// does too, and a data race in it fails them (its report on stderr).
const race = true
