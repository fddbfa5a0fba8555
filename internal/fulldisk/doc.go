// Package fulldisk makes small file systems that fill up for real, for
// the tests of what a durable DB (and the server over it) does when its
// disk is full: Mount mounts a tmpfs of a few MiB, Fill leaves only a
// little of it free. Mounting needs root (as in CI) on Linux; elsewhere,
// or without the right, Mount skips the test and says why.
package fulldisk

// TB is the part of testing.TB that the package uses, so that it need
// not import package testing.
type TB interface {
	Helper()
	Skipf(format string, args ...any)
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
	Cleanup(func())
	TempDir() string
}
