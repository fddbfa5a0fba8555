package wal

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func write(s string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	require.NoError(t, WriteFileAtomic(dir, "f", write("old")))
	require.NoError(t, WriteFileAtomic(dir, "f", write("new")))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "new", string(b))

	boom := errors.New("boom")
	err = WriteFileAtomic(dir, "f", func(w io.Writer) error {
		io.WriteString(w, "partial")
		return boom
	})
	require.Same(t, boom, err)
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "new", string(b))
	require.Equal(t, []string{"f"}, dirNames(t, dir))

	// A failed first write leaves nothing.
	require.Same(t, boom, WriteFileAtomic(dir, "g", func(io.Writer) error { return boom }))
	require.Equal(t, []string{"f"}, dirNames(t, dir))

	require.ErrorIs(t, WriteFileAtomic(dir, "../f", write("x")), os.ErrInvalid)
	require.ErrorIs(t, WriteFileAtomic(filepath.Join(dir, "missing"), "f", write("x")), fs.ErrNotExist)
}

func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"MANIFEST.123.tmp", "a.tmp", "keep.log", "tmp", "x.tmp.log"} {
		writeFile(t, dir, name, nil)
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "dir.tmp"), 0o700))
	require.NoError(t, RemoveTemps(dir))
	require.Equal(t, []string{"dir.tmp", "keep.log", "tmp", "x.tmp.log"}, dirNames(t, dir))
	require.ErrorIs(t, RemoveTemps(filepath.Join(dir, "missing")), fs.ErrNotExist)
}

func TestSyncDir(t *testing.T) {
	require.NoError(t, SyncDir(t.TempDir()))
	require.ErrorIs(t, SyncDir(filepath.Join(t.TempDir(), "missing")), fs.ErrNotExist)
}
