package wal

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
)

// filePerm is the permission of every file this package creates: the
// data is the user's, so only its owner may read it.
const filePerm = 0o600

// nameDigits is the width of the zero-padded number in file names, enough
// for any uint64, so names sort as their numbers do.
const nameDigits = 20

// SegmentName returns the file name of the log segment whose first record
// has sequence number base: 20 zero-padded digits and ".log".
func SegmentName(base uint64) string { return numberedName(base, ".log") }

// ParseSegmentName returns the base of a file name SegmentName made, and
// false for any other name.
func ParseSegmentName(name string) (base uint64, ok bool) { return parseNumberedName(name, ".log") }

// SnapshotName returns the file name of the snapshot covering the log up
// to sequence number base: 20 zero-padded digits and ".snap".
func SnapshotName(base uint64) string { return numberedName(base, ".snap") }

// ParseSnapshotName returns the base of a file name SnapshotName made, and
// false for any other name.
func ParseSnapshotName(name string) (base uint64, ok bool) { return parseNumberedName(name, ".snap") }

func numberedName(n uint64, ext string) string {
	return fmt.Sprintf("%0*d%s", nameDigits, n, ext)
}

func parseNumberedName(name, ext string) (uint64, bool) {
	if len(name) != nameDigits+len(ext) || name[nameDigits:] != ext {
		return 0, false
	}
	for _, c := range name[:nameDigits] {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(name[:nameDigits], 10, 64)
	return n, err == nil
}

// Segment is a log segment open for appending. Its methods are not safe
// for concurrent use.
//
// Write hands bytes to the kernel and Sync makes them durable; a record is
// safe from a crash of the machine only once a Sync after its Write
// returned nil. A killed process loses nothing that Write accepted.
type Segment struct {
	f     *os.File
	path  string
	base  uint64
	size  int64 // the header and the bytes written
	alloc int64 // the file's size: size, plus zeros written by Preallocate
	dir   string
	err   error // set by a failure that leaves the file in doubt; every later call returns it
	// marked: a sync mark (mark.go) may follow the bytes written, within
	// alloc; set by Sync (and by OpenSegmentForAppend keeping one), reset
	// by the Write that overwrites it.
	marked bool
	mark   [MarkSize + 4]byte // room for the last sync mark, so that writing it does not allocate (appendMark)

	faults atomic.Pointer[Faults] // failures injected by tests (SetFaults); nil otherwise
}

// Faults makes a segment's writes and syncs fail as a failing disk's do,
// for the tests of the layers above: Write, when not nil, is asked before
// each Write of n bytes and may return k < n with an error (ENOSPC, say):
// the segment then writes only the first k bytes and fails as a write cut
// short by the disk. Sync, when not nil, is asked before each Sync and
// may return an error, which fails it as fdatasync would. Both may be
// called from any goroutine that writes the segment.
type Faults struct {
	Write func(n int) (int, error)
	Sync  func() error
}

// SetFaults injects f's failures into the segment's later writes and
// syncs (nil: none). Tests only; safe to call while the segment is
// written.
func (s *Segment) SetFaults(f *Faults) { s.faults.Store(f) }

// CreateSegment creates the log segment dir/SegmentName(base), which must
// not exist, writes its header and syncs the file and dir, so the new
// segment survives a crash once CreateSegment returns. On error no file is
// left behind.
func CreateSegment(dir string, base uint64) (*Segment, error) {
	s, err := CreateSegmentUnsynced(dir, base)
	if err != nil {
		return nil, err
	}
	if err := s.SyncCreated(); err != nil {
		s.f.Close()
		os.Remove(s.path)
		return nil, err
	}
	return s, nil
}

// CreateSegmentUnsynced is CreateSegment without the syncs, for a caller
// that must not wait for the disk where it creates the segment (a log
// switching segments under its lock); it calls SyncCreated before the new
// segment is named anywhere. On error no file is left behind.
func CreateSegmentUnsynced(dir string, base uint64) (*Segment, error) {
	path := filepath.Join(dir, SegmentName(base))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
	if err != nil {
		return nil, err
	}
	if _, err = f.Write(AppendHeader(nil, KindLog, base)); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return &Segment{f: f, path: path, base: base, size: HeaderSize, alloc: HeaderSize, dir: dir}, nil
}

// SyncCreated syncs a segment made by CreateSegmentUnsynced, and its
// directory, so that it survives a crash.
func (s *Segment) SyncCreated() error {
	if err := s.f.Sync(); err != nil {
		return err
	}
	return SyncDir(s.dir)
}

// OpenSegmentForAppend opens the existing log segment at path for
// appending, first cutting it to size bytes, as ScanSegment's
// ScanResult.End says after a torn tail; the cut is synced before it
// returns. A valid sync mark at size is kept (the cut is just after it),
// so that the records before it stay known as synced. size must be at
// least HeaderSize and at most the file's size (an error wrapping
// os.ErrInvalid otherwise); a bad header is ErrNotOurs or ErrVersion.
func OpenSegmentForAppend(path string, size int64) (*Segment, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	s, err := openSegment(f, path, size)
	if err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

func openSegment(f *os.File, path string, size int64) (*Segment, error) {
	var b [HeaderSize]byte
	n, err := f.ReadAt(b[:], 0)
	if err != nil && err != io.EOF {
		return nil, err
	}
	h, err := parseHeader(b[:n], KindLog, path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if size < HeaderSize || size > fi.Size() {
		return nil, fmt.Errorf("xstream: %s: cannot cut a segment of %d bytes to %d bytes: %w", path, fi.Size(), size, os.ErrInvalid)
	}
	keep := size
	var m [MarkSize]byte
	if n, _ := f.ReadAt(m[:], size); n == MarkSize && IsMark(m[:], size, h.Base) {
		keep += MarkSize
	}
	if keep < fi.Size() {
		if err := f.Truncate(keep); err != nil {
			return nil, err
		}
		if err := f.Sync(); err != nil {
			return nil, err
		}
	}
	return &Segment{f: f, path: path, base: h.Base, size: size, alloc: keep, dir: filepath.Dir(path), marked: keep > size}, nil
}

// Write appends p, which should be whole frames (see AppendFrame and
// BeginFrame), with one write system call and no buffering. If the write
// fails the segment is cut back to its size before the call, so a later
// Write does not follow a partial frame; if even that fails, the segment
// refuses every later Write and Sync. It writes over the sync mark that
// the last Sync wrote, all of it: p shorter than MarkSize is written
// followed by zeros.
func (s *Segment) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	w := p
	if s.marked && len(p) < MarkSize {
		w = s.mark[:MarkSize] // a part of the mark left after p would read as a torn record
		clear(w[copy(w, p):])
	}
	var injected error // a failure of Faults.Write, after w is written
	if f := s.faults.Load(); f != nil && f.Write != nil {
		if k, ferr := f.Write(len(p)); ferr != nil {
			w, injected = w[:min(max(k, 0), len(p))], ferr
		}
	}
	n, err := s.f.WriteAt(w, s.size)
	if err == nil && injected != nil {
		err = &os.PathError{Op: "write", Path: s.path, Err: injected}
	}
	if err == nil {
		n = len(p)
		s.marked = false
		s.size += int64(n)
		s.alloc = max(s.alloc, s.size)
		return n, nil
	}
	if n > 0 {
		s.marked = false
		if terr := s.f.Truncate(s.size); terr != nil {
			s.err = fmt.Errorf("xstream: %s: cutting a failed write back: %w (write: %v)", s.path, terr, err)
			return 0, s.err
		}
		s.alloc = s.size
	}
	return 0, err
}

// Err returns the error that makes the segment refuse every Write and
// Sync (a failed Sync, or a failed write it could not cut back), or nil.
func (s *Segment) Err() error { return s.err }

// Room returns how many bytes Write can add before the file grows: what
// Preallocate made beyond the bytes written.
func (s *Segment) Room() int64 { return s.alloc - s.size }

// Preallocate makes the file at least n bytes longer than the bytes
// written, with zeros written and synced, so that later Writes fill
// blocks the file already has: an fdatasync after them then has no file
// size to record (on ext4 about a quarter faster here). A scan takes the
// zeros after the last record for a torn tail (ScanSegment), and Close
// cuts them off. It costs writing the zeros and one fdatasync.
func (s *Segment) Preallocate(n int64) error {
	if s.err != nil {
		return s.err
	}
	want := s.size + n
	if s.alloc >= want {
		return nil
	}
	zeros := make([]byte, min(want-s.alloc, 1<<20))
	for off := s.alloc; off < want; {
		k := min(int64(len(zeros)), want-off)
		n, err := s.f.WriteAt(zeros[:k], off)
		if err != nil {
			// The zeros written so far do no harm, and are not written
			// again: on a full disk, each later Preallocate would
			// otherwise write them all before it fails.
			s.alloc = off + int64(n)
			return err
		}
		off += k
	}
	if err := datasync(s.f); err != nil {
		return err
	}
	s.alloc = want
	return nil
}

// Sync makes everything written durable, with fdatasync where the system
// has it. After a failed Sync the segment refuses every later Write and
// Sync: the kernel may have dropped the unsynced data, and a later
// successful sync would not bring it back, so every record since the last
// successful Sync must be taken as lost. After a successful one it writes
// a sync mark after the last record (mark.go), which the next Write
// overwrites: one more write system call of MarkSize bytes, not synced.
func (s *Segment) Sync() error {
	if s.err != nil {
		return s.err
	}
	err := datasync(s.f)
	if f := s.faults.Load(); err == nil && f != nil && f.Sync != nil {
		if ferr := f.Sync(); ferr != nil {
			err = &os.PathError{Op: "fdatasync", Path: s.path, Err: ferr}
		}
	}
	if err != nil {
		s.err = fmt.Errorf("xstream: %s: sync failed, unsynced records may be lost: %w", s.path, err)
		return s.err
	}
	if s.size > HeaderSize {
		s.writeMark() // best effort: without it the records are just not known as synced
	}
	return nil
}

// writeMark writes the sync mark for the bytes written, which must be on
// disk, after them. Even when the write fails s.marked is set, so that
// the next Write covers whatever part of the mark it left.
func (s *Segment) writeMark() error {
	n, err := s.f.WriteAt(appendMark(s.mark[:0], s.size, s.base), s.size)
	s.marked = true // even in part: the next Write overwrites it whole
	s.alloc = max(s.alloc, s.size+int64(n))
	return err
}

// Size returns the segment's size in bytes: the header and every byte
// written.
func (s *Segment) Size() int64 { return s.size }

// Base returns the sequence number of the segment's first record, from
// its header.
func (s *Segment) Base() uint64 { return s.base }

// Path returns the segment's file path.
func (s *Segment) Path() string { return s.path }

// Close closes the file. First it makes the file end where its records
// do, and syncs that: it cuts off the zeros Preallocate wrote and, in the
// newest segment of its directory, writes a sync mark after the last
// record (mark.go), syncing the records first if they were written since
// the last Sync, so that a scan can tell that they all reached the disk.
// A segment that a newer one follows ends at its last record, as builds
// without marks expect. A segment whose Write or Sync failed is closed as
// it is; call Sync first to keep what was written safe from a crash.
func (s *Segment) Close() error {
	if s.err == nil {
		if err := s.finish(); err != nil {
			s.f.Close()
			return err
		}
	}
	return s.f.Close()
}

// finish makes the file end as Close documents.
func (s *Segment) finish() error {
	keep := s.size
	cut := s.alloc > keep
	if s.size > HeaderSize && s.newest() {
		if !s.marked {
			if err := datasync(s.f); err != nil {
				return err
			}
		}
		if s.writeMark() == nil {
			keep += MarkSize
		}
		cut = s.alloc > keep // after a failed write, to cut what it left
	} else if !cut {
		return nil
	}
	if cut {
		if err := s.f.Truncate(keep); err != nil {
			return err
		}
	}
	s.alloc = keep
	return datasync(s.f)
}

// newest reports whether the segment's directory holds no log segment
// with a later base, as it does once a log has gone on to a new segment.
// It is false when the directory cannot be read.
func (s *Segment) newest() bool {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if base, ok := ParseSegmentName(e.Name()); ok && base > s.base {
			return false
		}
	}
	return true
}
