package fulldisk

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Mount mounts a tmpfs of size bytes on a new directory, which it returns,
// and unmounts it when the test ends. It skips the test when the process
// may not mount (not root).
func Mount(t TB, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("fulldisk: mounting a small tmpfs needs root (as in CI); the full-disk test is skipped")
	}
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("fulldisk: %v", err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("fulldisk: mounting a tmpfs on %s: %v; the full-disk test is skipped", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Logf("fulldisk: unmounting %s: %v", dir, err)
		}
	})
	return dir
}

// Free returns the bytes free on the file system of dir.
func Free(t TB, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatalf("fulldisk: statfs %s: %v", dir, err)
	}
	return int64(st.Bavail) * st.Bsize
}

// Fill writes a ballast file in dir that leaves about leave bytes of its
// file system free (none when less is free), and returns the function
// that removes it, freeing the space again.
func Fill(t TB, dir string, leave int64) (release func()) {
	t.Helper()
	path := filepath.Join(dir, "ballast")
	f, err := os.Create(path)
	if err != nil {
		t.Fatalf("fulldisk: %v", err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for left := Free(t, dir) - leave; left > 0; {
		n := min(left, int64(len(buf)))
		if _, err := f.Write(buf[:n]); err != nil {
			break // full already
		}
		left -= n
	}
	return func() {
		if err := os.Remove(path); err != nil {
			t.Fatalf("fulldisk: %v", err)
		}
	}
}
