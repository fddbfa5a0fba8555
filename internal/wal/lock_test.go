package wal

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLockDir(t *testing.T) {
	dir := t.TempDir()
	l, err := LockDir(dir)
	require.NoError(t, err)

	// flock belongs to the open file, so a second LockDir in this same
	// process is refused.
	_, err = LockDir(dir)
	require.ErrorIs(t, err, ErrLocked)
	require.EqualError(t, err, fmt.Sprintf("xstream: directory is locked: %s (held by pid %d)", dir, os.Getpid()))

	require.NoError(t, l.Unlock())
	require.ErrorIs(t, l.Unlock(), os.ErrClosed)

	l, err = LockDir(dir)
	require.NoError(t, err)
	b, err := os.ReadFile(dir + "/" + LockName)
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(os.Getpid())+"\n", string(b))
	require.NoError(t, l.Unlock())

	_, err = LockDir(dir + "/missing")
	require.ErrorIs(t, err, os.ErrNotExist)
}

// lockChildEnv names the directory a child process of
// TestLockDirOtherProcess tries to lock.
const lockChildEnv = "XSTREAM_WAL_LOCK_CHILD_DIR"

// The test binary is run again as a child process that tries to lock the
// directory the parent holds.
func TestLockDirOtherProcess(t *testing.T) {
	if dir := os.Getenv(lockChildEnv); dir != "" {
		l, err := LockDir(dir)
		switch {
		case errors.Is(err, ErrLocked):
			fmt.Printf("child: %v\n", err)
			os.Exit(3)
		case err != nil:
			fmt.Printf("child: unexpected error: %v\n", err)
			os.Exit(4)
		}
		l.Unlock()
		fmt.Println("child: locked")
		os.Exit(0)
	}

	dir := t.TempDir()
	child := func() (string, int) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLockDirOtherProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), lockChildEnv+"="+dir)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode()
		}
		require.NoError(t, err)
		return string(out), 0
	}

	l, err := LockDir(dir)
	require.NoError(t, err)
	out, code := child()
	require.Equal(t, 3, code, out)
	require.Contains(t, out, fmt.Sprintf("child: xstream: directory is locked: %s (held by pid %d)", dir, os.Getpid()))

	require.NoError(t, l.Unlock())
	out, code = child()
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "child: locked")
}
