package wal

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// LockName is the name of the lock file in a data directory.
const LockName = "LOCK"

// DirLock is an exclusive lock on a data directory, held from LockDir to
// Unlock, so that one process (and one open directory in it) at a time
// writes there.
type DirLock struct {
	f   *os.File
	dir string
}

// LockDir takes the lock of dir, creating dir/LOCK if needed, and writes
// this process's PID into the lock file. It does not wait: if another
// process, or another LockDir in this process, holds the lock, the error
// wraps ErrLocked and names dir and, when the lock file says, the PID of
// the holder.
//
// Where the system has flock (Linux, the BSDs, macOS, illumos) the lock is
// an flock on the lock file: it belongs to the open file, is released by
// Unlock or when the process ends in any way, and is advisory (it keeps
// out only others who take it). Elsewhere the lock is the existence of
// the lock file, created exclusively and removed by Unlock; a process that
// dies holding it leaves the file behind, and it must be removed by hand
// once that process is known to be gone.
func LockDir(dir string) (*DirLock, error) {
	f, err := lockFile(dir)
	if err != nil {
		return nil, err
	}
	if err := writePID(f); err != nil {
		unlockFile(f)
		return nil, err
	}
	return &DirLock{f: f, dir: dir}, nil
}

// Unlock releases the lock. The lock file is left in place where the lock
// is an flock.
func (l *DirLock) Unlock() error {
	if l.f == nil {
		return fmt.Errorf("xstream: %s: unlock: %w", l.dir, os.ErrClosed)
	}
	f := l.f
	l.f = nil
	return unlockFile(f)
}

// writePID replaces the content of the lock file, which this process
// holds, by its PID.
func writePID(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// lockedError returns the ErrLocked error for dir, naming the PID in the
// lock file f if it holds one.
func lockedError(dir string, f *os.File) error {
	var b [32]byte
	n, _ := f.ReadAt(b[:], 0)
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n]))); err == nil && pid > 0 {
		return fmt.Errorf("%w: %s (held by pid %d)", ErrLocked, dir, pid)
	}
	return fmt.Errorf("%w: %s", ErrLocked, dir)
}
