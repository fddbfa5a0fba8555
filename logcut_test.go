package xstream

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream/internal/wal"
)

// What Open cuts off the end of the log is reported (LogCuts), and a
// damaged last record that had reached the disk is refused.

const logCutEntries = 200

// logCutDir makes a DB of logCutEntries entries of stream "s" under
// policy and returns its files as a crash would leave them: with close,
// as Close leaves them; without, copied while the DB is open, as a kill
// of the process leaves them. It returns the files, the name of the log
// segment and the offsets where its records start, followed by the end
// of the last.
func logCutDir(t *testing.T, policy SyncPolicy, close bool) (map[string][]byte, string, []int) {
	t.Helper()
	dir := t.TempDir()
	db, err := Open(dir, WithSync(policy), WithAutoSnapshot(-1))
	require.NoError(t, err)
	for i := range logCutEntries {
		_, err := db.Add("s", AddArgs{}, Fields("n", strconv.Itoa(i), "pad", "0123456789")...)
		require.NoError(t, err)
	}
	require.NoError(t, db.Flush())
	if close {
		require.NoError(t, db.Close())
	} else {
		defer db.Close()
	}
	files := readDirFiles(t, dir)
	seg := wal.SegmentName(1)
	return files, seg, recordStarts(files[seg])
}

// recordStarts returns the offsets of the frames of a log segment's bytes
// up to the first that is not a valid frame, and that offset.
func recordStarts(seg []byte) []int {
	offs := []int{wal.HeaderSize}
	for {
		off := offs[len(offs)-1]
		_, n, err := wal.DecodeFrame(seg[off:])
		if err != nil {
			return offs
		}
		offs = append(offs, off+n)
	}
}

// openCut opens the DB of files written to a new directory, and checks
// that it holds the first n entries and reports the cut want (its reason
// aside), with the segment's path for File; it returns the DB and the
// directory.
func openCut(t *testing.T, files map[string][]byte, seg string, n int, want *LogCut, opts ...Option) (*DB, string) {
	t.Helper()
	dir := writeFiles(t, files)
	db, err := Open(dir, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	require.Equal(t, int64(n), db.Stream("s").Len())
	var cuts []LogCut
	if want != nil {
		c := *want
		c.File = filepath.Join(dir, seg)
		if c.MovedTo != "" {
			c.MovedTo = c.File + ".corrupt"
		}
		cuts = []LogCut{c}
	}
	requireCuts(t, db, cuts, "cut")
	return db, dir
}

// A byte flipped in the last record of the log, acknowledged under
// SyncAlways, is refused as corruption naming the file and the record's
// offset, whether the DB was closed or its process killed: the sync mark
// after the record shows it was on disk. WithTruncateCorrupt then opens
// without it and reports the cut, the bytes moved aside.
func TestLogCutDamagedLastRecord(t *testing.T) {
	for _, closed := range []bool{true, false} {
		t.Run("closed="+strconv.FormatBool(closed), func(t *testing.T) {
			files, seg, offs := logCutDir(t, SyncAlways, closed)
			last, end := offs[len(offs)-2], offs[len(offs)-1]
			require.True(t, wal.IsMark(files[seg][end:], int64(end), 1), "no sync mark after the last record")
			bad := maps.Clone(files)
			bad[seg] = bytes.Clone(files[seg])
			bad[seg][end-3] ^= 0x40
			dir := writeFiles(t, bad)
			_, err := Open(dir)
			requireErr(t, err, ErrCorrupt, filepath.Join(dir, seg), "offset "+strconv.Itoa(last), "sync mark")
			requireSameFiles(t, bad, dir, "refused")

			n := int64(len(bytes.TrimRight(bad[seg][last:], "\x00")))
			openCut(t, bad, seg, logCutEntries-1, &LogCut{Offset: int64(last), Bytes: n, MovedTo: "yes"}, WithTruncateCorrupt())
		})
	}
}

// A write torn by a crash: the last record cut short, with zeros after
// it (space written ahead of the log) or nothing, and no mark. Open keeps
// the records before it, cuts the file there and reports the bytes it
// dropped, up to the last non-zero one; a reopen reports nothing more.
// A record entirely of zeros leaves nothing to report. After a sync mark,
// the cut starts after the mark, which stays.
func TestLogCutTornWrite(t *testing.T) {
	for _, closed := range []bool{true, false} {
		t.Run("closed="+strconv.FormatBool(closed), func(t *testing.T) {
			files, seg, offs := logCutDir(t, SyncAlways, closed)
			last, end := offs[len(offs)-2], offs[len(offs)-1]
			for _, keep := range []int{1, wal.FrameHeaderSize, wal.FrameHeaderSize + 5, end - last - 1} {
				torn := maps.Clone(files)
				torn[seg] = bytes.Clone(files[seg])
				clear(torn[seg][last+keep:]) // the rest of the write, and the mark, never reached the disk
				if closed {
					torn[seg] = torn[seg][:end] // the file grew by the write, and no further
				}
				n := len(bytes.TrimRight(torn[seg][last:last+keep], "\x00"))
				db, dir := openCut(t, torn, seg, logCutEntries-1, &LogCut{Offset: int64(last), Bytes: int64(n)})
				fi, err := os.Stat(filepath.Join(dir, seg))
				require.NoError(t, err)
				require.Equal(t, int64(last), fi.Size(), "the file is not cut at the end of the last whole record")
				_, err = db.Add("s", AddArgs{}, Fields("after", "the cut")...)
				require.NoError(t, err)
				require.NoError(t, db.Close())
				db, err = Open(dir)
				require.NoError(t, err)
				require.Equal(t, int64(logCutEntries), db.Stream("s").Len())
				require.Nil(t, db.LogCuts())
				require.NoError(t, db.Close())
			}

			// Nothing of the last write reached the disk: zeros only.
			zeros := maps.Clone(files)
			zeros[seg] = bytes.Clone(files[seg])
			clear(zeros[seg][last:])
			openCut(t, zeros, seg, logCutEntries-1, nil)

			// A later write of which only a part after its start reached
			// the disk: the sync mark it was to overwrite stays, and the
			// cut starts after it.
			later := maps.Clone(files)
			later[seg] = append(bytes.Clone(files[seg][:end+wal.MarkSize]), make([]byte, 40)...)
			copy(later[seg][end+wal.MarkSize+20:], "the end of a write")
			db, dir := openCut(t, later, seg, logCutEntries, &LogCut{Offset: int64(end + wal.MarkSize), Bytes: 38})
			require.NoError(t, db.Close())
			b, err := os.ReadFile(filepath.Join(dir, seg))
			require.NoError(t, err)
			require.Equal(t, files[seg][:end+wal.MarkSize], b, "not cut after the mark")
		})
	}
}

// Under SyncNo nothing marks the records written since the last Sync:
// damage to the last of them cannot be told from a torn write, and is
// cut and reported, while the same damage before a Sync is refused.
func TestLogCutAfterLastSync(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, WithSync(SyncNo), WithAutoSnapshot(-1))
	require.NoError(t, err)
	defer db.Close()
	for i := range 10 {
		_, err := db.Add("s", AddArgs{}, Fields("n", strconv.Itoa(i))...)
		require.NoError(t, err)
	}
	require.NoError(t, db.Sync())
	synced := readDirFiles(t, dir)
	_, err = db.Add("s", AddArgs{}, Fields("n", "written, not synced")...)
	require.NoError(t, err)
	require.NoError(t, db.Flush())
	written := readDirFiles(t, dir)
	seg := wal.SegmentName(1)

	for _, files := range []map[string][]byte{synced, written} {
		offs := recordStarts(files[seg])
		last, end := offs[len(offs)-2], offs[len(offs)-1]
		bad := maps.Clone(files)
		bad[seg] = bytes.Clone(files[seg])
		bad[seg][end-1] ^= 1
		if len(offs) == 11 {
			_, err := Open(writeFiles(t, bad))
			requireErr(t, err, ErrCorrupt, "offset "+strconv.Itoa(last))
			continue
		}
		require.Len(t, offs, 12)
		require.Len(t, bad[seg], end, "a sync mark after the unsynced record")
		openCut(t, bad, seg, 10, &LogCut{Offset: int64(last), Bytes: int64(end - last)})
	}
}

// LogCut.String says it all in one line; a DB opened whole, or made by
// NewDB, reports no cut.
func TestLogCutString(t *testing.T) {
	c := LogCut{File: "/d/00000000000000000001.log", Offset: 4711, Bytes: 57, Reason: "bad checksum"}
	require.Equal(t, "xstream: dropped 57 bytes at offset 4711 of /d/00000000000000000001.log (bad checksum), the end of a write cut short by a crash or damaged", c.String())
	c.MovedTo = "/d/00000000000000000001.log.corrupt"
	require.Equal(t, "xstream: dropped 57 bytes at offset 4711 of /d/00000000000000000001.log (bad checksum), moved to /d/00000000000000000001.log.corrupt", c.String())

	require.Nil(t, NewDB().LogCuts())
	files, seg, _ := logCutDir(t, SyncEverySecond, true)
	openCut(t, files, seg, logCutEntries, nil)
}
