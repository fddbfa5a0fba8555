//go:build !linux

package fulldisk

// Mount skips the test: small file systems are made on Linux only.
func Mount(t TB, size int64) string {
	t.Helper()
	t.Skipf("fulldisk: a small tmpfs is mounted on Linux only; the full-disk test is skipped")
	return ""
}

// Free is not reached: Mount skips the test.
func Free(t TB, dir string) int64 { return 0 }

// Fill is not reached: Mount skips the test.
func Fill(t TB, dir string, leave int64) (release func()) { return func() {} }
