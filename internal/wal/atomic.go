package wal

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// tempSuffix ends the name of every temporary file WriteFileAtomic
// makes; RemoveTemps removes files so named.
const tempSuffix = ".tmp"

// WriteFileAtomic replaces dir/name with what write writes, so that after
// a crash at any moment dir/name is either the old file, or missing if
// there was none, or the new file whole; never a mix.
//
// It writes to a new temporary file dir/name.<random>.tmp, syncs and
// closes it, renames it over dir/name and syncs dir. If write or any step
// before the rename fails, the temporary file is removed and dir/name is
// untouched. If only the final sync of dir fails, the new file is in
// place but the switch may not survive a crash. name must be a plain file
// name (see Manifest); write must not keep w.
func WriteFileAtomic(dir, name string, write func(w io.Writer) error) (err error) {
	if !validName(name) {
		return fmt.Errorf("xstream: bad file name %q: %w", name, os.ErrInvalid)
	}
	f, err := os.CreateTemp(dir, name+".*"+tempSuffix)
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close() // may already be closed; the error does not matter
			os.Remove(tmp)
		}
	}()
	if err = write(f); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	return SyncDir(dir)
}

// SyncDir makes the entries of dir (files created, renamed or removed in
// it) durable with fsync of the directory. Where directories cannot be
// synced (Windows) it does nothing.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// RemoveTemps removes from dir every regular file whose name ends in
// ".tmp": what a WriteFileAtomic interrupted by a crash left behind. Call
// it when opening a directory, holding its lock, and only on a directory
// that belongs to xstream. It returns the first error but tries every
// file.
func RemoveTemps(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var first error
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), tempSuffix) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
			first = err
		}
	}
	return first
}
