//go:build race

package xstream

// crashRace is true when the tests run with the race detector, which makes
// the crash tests' children and checks several times slower.
const crashRace = true
