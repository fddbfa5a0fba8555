//go:build !unix

package server

// openFileLimit reports that the limit on open files is not known here.
func openFileLimit() (uint64, bool) { return 0, false }
