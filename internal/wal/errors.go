package wal

import (
	"errors"
	"strconv"
)

// Sentinel errors. Every error returned by this package wraps one of these
// or an error of package os (a missing file wraps os.ErrNotExist, a bad
// argument os.ErrInvalid), or is the error of a caller's function
// (ScanSegment's fn, WriteFileAtomic's write) returned unchanged; so
// callers test for a kind of failure with errors.Is. The message says
// which file, and where in it, when that is known.
var (
	// ErrNotOurs reports a file that is not an xstream file of the kind
	// expected: too short for a header, a wrong magic, a bad header
	// checksum, a wrong kind, or (for the manifest) a malformed line.
	ErrNotOurs = errors.New("xstream: not an xstream file")

	// ErrVersion reports a file whose format version is newer than
	// Version: it was written by a newer xstream and this build cannot
	// read it. Nothing in the file is touched.
	ErrVersion = errors.New("xstream: written by a newer xstream")

	// ErrCorrupt reports damaged data inside a file of ours: a record
	// that does not check out with valid records after it in a log
	// segment, or any defect at all in a snapshot. The error is a
	// *CorruptError naming the file and the byte offset (or, from
	// DecodeFrame, a FrameError).
	ErrCorrupt = errors.New("xstream: corrupt data")

	// ErrLocked reports a directory already locked by another process or
	// by another LockDir in this process; the message names the directory
	// and, when it could be read, the PID of the holder.
	ErrLocked = errors.New("xstream: directory is locked")
)

// CorruptError describes damaged data in a file. It wraps ErrCorrupt.
type CorruptError struct {
	Kind   Kind   // the kind of file: KindLog or KindSnapshot
	Path   string // the file, or "" when read from a stream with no name
	Offset int64  // the byte offset of the first damaged frame
	Reason string // what is wrong, for example "bad checksum (valid records follow)"
}

// Error returns, for example,
// "xstream: corrupt log: /d/00000000000000000001.log at offset 4711: bad checksum (valid records follow)".
func (e *CorruptError) Error() string {
	s := "xstream: corrupt " + e.Kind.noun()
	if e.Path != "" {
		s += ": " + e.Path
	}
	return s + " at offset " + strconv.FormatInt(e.Offset, 10) + ": " + e.Reason
}

// Unwrap returns ErrCorrupt.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }
