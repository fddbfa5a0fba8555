//go:build !(linux || darwin || dragonfly || freebsd || illumos || netbsd || openbsd)

package wal

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// lockFile creates dir/LOCK exclusively: whoever created it holds the
// lock.
func lockFile(dir string) (*os.File, error) {
	path := filepath.Join(dir, LockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, filePerm)
	if errors.Is(err, fs.ErrExist) {
		if g, oerr := os.Open(path); oerr == nil {
			err = lockedError(dir, g)
			g.Close()
			return nil, err
		}
		return nil, lockedError(dir, nil)
	}
	return f, err
}

// unlockFile closes and removes the lock file.
func unlockFile(f *os.File) error {
	err := f.Close()
	if rerr := os.Remove(f.Name()); err == nil {
		err = rerr
	}
	return err
}
