package xstream

import (
	"bytes"
	"fmt"
	"os"
	"slices"

	"github.com/xstreamgo/xstream/internal/wal"
)

// LogCut is a part of a durable DB's log that Open dropped: the end of
// the last log segment, cut off as a write that a crash interrupted (see
// Open), or, with WithTruncateCorrupt, a damaged record and everything
// after it. The changes it held, if any, are not in the DB.
type LogCut struct {
	File    string // the log segment
	Offset  int64  // where the dropped bytes start: the end of the last whole record kept (or of a 16-byte sync mark after it)
	Bytes   int64  // how many bytes were dropped, up to the last non-zero one
	Reason  string // why the bytes at Offset are not a record, e.g. "incomplete payload", "bad checksum"
	MovedTo string // the file WithTruncateCorrupt moved them to; "" when they were cut off and discarded
}

// String describes the cut in one line, for a log: for example
// "xstream: dropped 57 bytes at offset 4711 of /d/00000000000000000001.log
// (bad checksum), the end of a write cut short by a crash or damaged".
func (c LogCut) String() string {
	what := "the end of a write cut short by a crash or damaged"
	if c.MovedTo != "" {
		what = "moved to " + c.MovedTo
	}
	return fmt.Sprintf("xstream: dropped %d bytes at offset %d of %s (%s), %s", c.Bytes, c.Offset, c.File, c.Reason, what)
}

// LogCuts returns what Open dropped from the log of a durable DB, in the
// order of the log, or nil when it dropped nothing (always for a DB made
// by NewDB). A program should log each; nothing else reports them.
func (db *DB) LogCuts() []LogCut {
	if db.dur == nil {
		return nil
	}
	return slices.Clone(db.dur.cuts)
}

// cutTail records that recovery drops the tail of the segment at path
// that res found bad, from offset at.
func (r *replayer) cutTail(path string, at int64, res wal.ScanResult, movedTo string) {
	r.db.dur.cuts = append(r.db.dur.cuts, LogCut{File: path, Offset: at, Bytes: res.Cut, Reason: res.Reason.String(), MovedTo: movedTo})
}

// cutFrom returns where recovery cuts the segment that res describes:
// after its last record, and after the sync mark that follows it, if
// one does (OpenSegmentForAppend keeps it).
func cutFrom(res wal.ScanResult) int64 {
	if res.Marked {
		return res.End + wal.MarkSize
	}
	return res.End
}

// cutSegment records that recovery drops all of the log segment at
// path, to be moved to movedTo, because it follows a corrupt record.
func (r *replayer) cutSegment(path, movedTo string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	n := int64(len(bytes.TrimRight(b[min(len(b), wal.HeaderSize):], "\x00")))
	r.db.dur.cuts = append(r.db.dur.cuts, LogCut{File: path, Offset: wal.HeaderSize, Bytes: n, Reason: "after a corrupt record", MovedTo: movedTo})
	return nil
}
