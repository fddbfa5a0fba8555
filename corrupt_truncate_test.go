package xstream

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream/internal/wal"
)

// WithTruncateCorrupt: a damaged record in the middle of the log, valid
// records after it, is refused without the option and opens with the
// prefix before it with the option, the rest moved aside.

// TestTruncateCorruptOneSegment damages records in the middle of the last
// segment, one at a time.
func TestTruncateCorruptOneSegment(t *testing.T) {
	calls, pre := historyCalls()
	for _, snapAt := range []int{-1, pre} {
		h := buildHistory(t, calls, snapAt)
		segName, base := h.lastSegment()
		seg := h.files[segName]
		ends := frameEnds(t, seg)
		for _, rec := range []int{0, len(ends) / 3, len(ends) - 5, len(ends) - 2} {
			rec = knownPrefix(h, base, rec)
			start := wal.HeaderSize
			if rec > 0 {
				start = ends[rec-1]
			}
			records := base - 1 + uint64(rec)
			msg := fmt.Sprintf("snapshot at %d, record %d %q damaged", snapAt, records+1, h.kinds[records+1])
			damaged := bytes.Clone(seg)
			damaged[start+wal.FrameHeaderSize] ^= 0x10 // in the payload
			dir := h.copyTo(t, filepath.Join(t.TempDir(), "db"), map[string][]byte{segName: damaged})
			files := readDirFiles(t, dir)
			segPath := filepath.Join(dir, segName)

			_, err := openSafe(t, dir, msg, WithClock(h.clk.now))
			requireErr(t, err, ErrCorrupt, segPath, "offset "+strconv.Itoa(start))
			requireSameFiles(t, files, dir, msg+": refused")

			db, err := h.openAt(t, dir, records, WithTruncateCorrupt())
			require.NoError(t, err, msg)
			require.Equal(t, h.dumps[records], dumpState(t, db), msg)
			checkAllStreams(t, db)
			want := maps.Clone(files)
			want[segName] = damaged[:start]
			want[segName+".corrupt"] = damaged[start:]
			want[wal.ManifestName] = readDirFiles(t, dir)[wal.ManifestName] // rewritten, naming the same files
			requireSameFiles(t, want, dir, msg+": with WithTruncateCorrupt")
			m, err := wal.ReadManifest(dir)
			require.NoError(t, err)
			require.Equal(t, h.m, m, msg)

			// The DB goes on: new records, and a reopen without the option.
			_, err = db.Add("s", AddArgs{}, Fields("after", "truncation")...)
			require.NoError(t, err)
			after := dumpState(t, db)
			require.NoError(t, db.Close())
			db, err = h.openAt(t, dir, records)
			require.NoError(t, err, msg)
			require.Equal(t, after, dumpState(t, db), msg+": reopened")
			require.NoError(t, db.Close())
		}
	}
}

// knownPrefix returns the first index of a record of the segment at base,
// from rec on, before which the state is known (the end of a call).
func knownPrefix(h *history, base uint64, rec int) int {
	for {
		if _, ok := h.dumps[base-1+uint64(rec)]; ok {
			return rec
		}
		rec++
	}
}

// twoSegments returns the directory of a DB whose snapshot was cut short
// by a crash after the switch to a new segment: the manifest names no
// snapshot and the two segments, the first holding the history up to the
// snapshot and the second the rest. Replaying both gives the whole
// history.
func twoSegments(t *testing.T) (h *history, files map[string][]byte, seg1, seg2 string) {
	t.Helper()
	calls, pre := historyCalls()
	h = buildHistory(t, calls, pre)
	require.NotNil(t, h.beforeSnap)
	m, err := wal.ReadManifest(h.dir)
	require.NoError(t, err)
	seg1, seg2 = wal.SegmentName(1), m.Logs[0]
	files = map[string][]byte{
		seg1:         h.beforeSnap[seg1],
		seg2:         h.files[seg2],
		wal.LockName: h.files[wal.LockName],
	}
	dir := t.TempDir()
	require.NoError(t, wal.WriteManifest(dir, wal.Manifest{Logs: []string{seg1, seg2}}))
	files[wal.ManifestName] = readDirFiles(t, dir)[wal.ManifestName]
	return h, files, seg1, seg2
}

// writeFiles makes a directory holding files.
func writeFiles(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "db")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for n, b := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), b, 0o600))
	}
	return dir
}

// TestTruncateCorruptTwoSegments damages a record in the middle of the
// first of two segments: refused without the option; with it, the prefix
// of the first segment, its rest in "<segment>.corrupt" and the second
// segment moved aside whole, the manifest naming the first alone.
func TestTruncateCorruptTwoSegments(t *testing.T) {
	h, files, seg1, seg2 := twoSegments(t)
	last := h.marks[len(h.marks)-1]

	// Sound, the two segments replay to the whole history.
	dir := writeFiles(t, files)
	db, err := h.openAt(t, dir, last)
	require.NoError(t, err)
	require.Equal(t, h.dumps[last], dumpState(t, db), "both segments replayed")
	require.NoError(t, db.Close())

	ends := frameEnds(t, files[seg1])
	rec := knownPrefix(h, 1, len(ends)/2)
	start := ends[rec-1]
	damaged := bytes.Clone(files[seg1])
	damaged[start+wal.FrameHeaderSize+1] ^= 0x01
	bad := maps.Clone(files)
	bad[seg1] = damaged
	dir = writeFiles(t, bad)
	seg1Path := filepath.Join(dir, seg1)
	_, err = openSafe(t, dir, "damaged", WithClock(h.clk.now))
	requireErr(t, err, ErrCorrupt, seg1Path, "offset "+strconv.Itoa(start))
	requireSameFiles(t, bad, dir, "refused")

	records := uint64(rec)
	db, err = h.openAt(t, dir, records, WithTruncateCorrupt())
	require.NoError(t, err)
	require.Equal(t, h.dumps[records], dumpState(t, db))
	checkAllStreams(t, db)
	m, err := wal.ReadManifest(dir)
	require.NoError(t, err)
	require.Equal(t, wal.Manifest{Logs: []string{seg1}}, m)
	want := maps.Clone(bad)
	delete(want, seg2)
	want[seg1] = damaged[:start]
	want[seg1+".corrupt"] = damaged[start:]
	want[seg2+".corrupt"] = files[seg2]
	want[wal.ManifestName] = readDirFiles(t, dir)[wal.ManifestName]
	requireSameFiles(t, want, dir, "with WithTruncateCorrupt")
	_, err = db.Add("s", AddArgs{}, Fields("after", "truncation")...)
	require.NoError(t, err)
	after := dumpState(t, db)
	require.NoError(t, db.Close())
	db, err = h.openAt(t, dir, records)
	require.NoError(t, err)
	require.Equal(t, after, dumpState(t, db), "reopened")
	require.NoError(t, db.Close())
}

// TestTornSegmentBeforeAnother cuts the first of two segments short: a
// torn tail with a log after it is damage, not a crash (the first is
// synced before the second takes a record), and Open refuses it.
func TestTornSegmentBeforeAnother(t *testing.T) {
	h, files, seg1, _ := twoSegments(t)
	ends := frameEnds(t, files[seg1])
	bad := maps.Clone(files)
	bad[seg1] = files[seg1][:ends[len(ends)-1]-3]
	dir := writeFiles(t, bad)
	_, err := openSafe(t, dir, "torn", WithClock(h.clk.now))
	requireErr(t, err, ErrCorrupt, filepath.Join(dir, seg1))
	requireSameFiles(t, bad, dir, "refused")

	// WithTruncateCorrupt keeps the records before the tear and moves
	// the later segment aside.
	db, err := openSafe(t, dir, "torn", WithClock(h.clk.now), WithTruncateCorrupt())
	require.NoError(t, err)
	defer db.Close()
	checkAllStreams(t, db)
	left := readDirFiles(t, dir)
	for name := range bad {
		if name != seg1 && name != wal.ManifestName && name != wal.LockName {
			if _, isLog := wal.ParseSegmentName(name); isLog {
				require.Contains(t, left, name+".corrupt", "the segment after the tear is moved aside")
			}
		}
	}
}
