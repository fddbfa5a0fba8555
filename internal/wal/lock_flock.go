//go:build linux || darwin || dragonfly || freebsd || illumos || netbsd || openbsd

package wal

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockFile opens dir/LOCK and takes an exclusive flock on it without
// waiting. The file is not truncated before the lock is held.
func lockFile(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, LockName), os.O_RDWR|os.O_CREATE, filePerm)
	if err != nil {
		return nil, err
	}
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if err == syscall.EWOULDBLOCK {
			err = lockedError(dir, f)
		} else {
			err = &os.PathError{Op: "flock", Path: f.Name(), Err: err}
		}
		f.Close()
		return nil, err
	}
	return f, nil
}

// unlockFile releases the flock and closes f.
func unlockFile(f *os.File) error {
	err := flock(f, syscall.LOCK_UN)
	if cerr := f.Close(); err == nil {
		err = cerr
	} else {
		err = &os.PathError{Op: "flock", Path: f.Name(), Err: err}
	}
	return err
}

func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			if ferr = syscall.Flock(int(fd), how); ferr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}
