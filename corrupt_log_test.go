package xstream

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream/internal/wal"
)

// Damaged logs: "cut the log at every byte offset of its last records and
// flip bits in it: the DB opens with a prefix of the changes, or refuses
// with the corruption error; never a panic."

// variant is a DB the log tests damage, with the first record of its
// tail: the records the tests damage.
type variant struct {
	name string
	h    *history
	tail uint64
}

// historyVariants are the DBs the log tests damage: one whose whole
// history is in one log segment, and one whose tail follows a snapshot
// of the rest.
func historyVariants(t *testing.T) []variant {
	calls, pre := historyCalls()
	var out []variant
	for _, v := range []struct {
		name   string
		snapAt int
	}{{"log", -1}, {"snapshot+log", pre}} {
		h := buildHistory(t, calls, v.snapAt)
		out = append(out, variant{v.name, h, h.marks[pre-1] + 1})
	}
	return out
}

// tailFrom returns the offset in the segment of the first record of the
// tail.
func tailFrom(ends []int, base, tail uint64) int {
	if tail > base {
		return ends[tail-base-1]
	}
	return wal.HeaderSize
}

// recordAt returns the index in the segment of the record that holds
// byte off (len(ends) past the last), and the offset where it starts.
func recordAt(ends []int, off int) (rec, start int) {
	for rec < len(ends) && ends[rec] <= off {
		rec++
	}
	start = wal.HeaderSize
	if rec > 0 {
		start = ends[rec-1]
	}
	return rec, start
}

// lastK is how many of the last records of the log the tests damage at
// every byte.
const lastK = 16

// TestLogCutAnywhere cuts the last log segment inside its last records
// and the sync mark Close left after them: Open must succeed with exactly
// the records wholly before the cut, cut the file there, report the cut
// (LogCuts), hold the invariants, reopen, and take new records. After a
// snapshot it cuts at every byte offset of the last lastK records (every
// third with -short); in a DB with no snapshot, at the start, the second
// byte and the middle of each record of the tail (25 records of 26 kinds
// of calls).
func TestLogCutAnywhere(t *testing.T) {
	for i, v := range historyVariants(t) {
		t.Run(v.name, func(t *testing.T) {
			h := v.h
			segName, base := h.lastSegment()
			seg := h.files[segName]
			ends := frameEnds(t, seg)
			var offs []int
			switch {
			case i == 0:
				for rec := int(v.tail - base); rec < len(ends); rec++ {
					_, start := recordAt(ends, ends[rec]-1)
					offs = append(offs, start, start+1, (start+ends[rec])/2)
				}
				offs = append(offs, len(seg))
			default:
				step := 1
				if testing.Short() {
					step = 3
				}
				for off := ends[len(ends)-lastK-1]; off <= len(seg); off += step {
					offs = append(offs, off)
				}
			}
			dir := h.copyTo(t, filepath.Join(t.TempDir(), "db"), nil)
			segPath := filepath.Join(dir, segName)
			kinds := map[string]bool{}
			for _, off := range offs {
				n, start := recordAt(ends, off) // n: the records wholly before the cut
				records := base - 1 + uint64(n)
				msg := fmt.Sprintf("cut at %d of %d (%d whole records, %d bytes of record %d %q)",
					off, len(seg), n, off-start, records+1, h.kinds[records+1])
				if off < len(seg) {
					kinds[h.kinds[records+1]] = true
				}
				require.NoError(t, os.WriteFile(segPath, seg[:off], 0o600))
				db, err := h.openAt(t, dir, records)
				require.NoError(t, err, msg)
				require.Equal(t, h.dumps[records], dumpState(t, db), msg)
				checkAllStreams(t, db)
				require.Equal(t, base+uint64(n), db.dur.j.next, "%s: the next LSN", msg)
				fi, err := os.Stat(segPath)
				require.NoError(t, err)
				if off == len(seg) {
					require.Equal(t, int64(off), fi.Size(), "%s: the segment is cut", msg)
					requireCuts(t, db, nil, msg)
				} else {
					require.Equal(t, int64(start), fi.Size(), "%s: the segment is not cut at the end of the last whole record", msg)
					requireCuts(t, db, cutOf(segPath, seg[:off], start), msg)
				}

				// A cut at a record boundary or just past one: the DB
				// takes new records and keeps them.
				if off-start <= 1 {
					_, err = db.Add("s", AddArgs{}, Fields("after", "the cut")...)
					require.NoError(t, err, msg)
					want := dumpState(t, db)
					require.NoError(t, db.Close())
					db, err = h.openAt(t, dir, records)
					require.NoError(t, err, msg)
					require.Equal(t, want, dumpState(t, db), "%s: after an add and a reopen", msg)
					checkAllStreams(t, db)
				}
				require.NoError(t, db.Close())
			}
			t.Logf("%d cuts inside records of %d kinds", len(offs), len(kinds))
			require.GreaterOrEqual(t, len(kinds), min(20, lastK), "the cuts cover too few kinds of records")
		})
	}
}

// TestLogBitFlips flips bits of the last records of the last segment, of
// the sync mark Close left after them, and of its file header: in a DB
// with no snapshot one bit of each byte of the last lastK records and two
// of each byte of their frame headers; after a snapshot, one bit of every
// fourth byte of the tail (25 records of 26 kinds of calls). A flipped bit
// in the mark is a torn tail: Open succeeds with every record and reports
// the cut. Anywhere else valid records or the mark follow, and Open
// refuses with ErrCorrupt naming the file and the offset of the damaged
// record, changing nothing on disk; a header bit is ErrNotDB. Without the
// mark (lost in a crash of the machine, or never written), a flipped bit
// in the last record is a torn tail too: Open succeeds with the records
// before it and reports the cut. Never a panic, never another state.
func TestLogBitFlips(t *testing.T) {
	for i, v := range historyVariants(t) {
		t.Run(v.name, func(t *testing.T) {
			h := v.h
			segName, base := h.lastSegment()
			seg := h.files[segName]
			ends := frameEnds(t, seg)
			from := tailFrom(ends, base, v.tail)
			dir := h.copyTo(t, filepath.Join(t.TempDir(), "db"), nil)
			segPath := filepath.Join(dir, segName)
			lastClock := WithClock(newTestClock(h.times[h.marks[len(h.marks)-1]]).now)
			var opened, refused int
			lastEnd := ends[len(ends)-1]
			require.Equal(t, lastEnd+wal.MarkSize, len(seg), "Close left no sync mark")
			flip := func(seg []byte, off, bit int) {
				// Write the segment, then damage the byte in place.
				require.NoError(t, os.WriteFile(segPath, seg, 0o600))
				damaged := []byte{seg[off] ^ 1<<bit}
				writeAt(t, segPath, damaged, off)
				rec, start := recordAt(ends, off)
				msg := fmt.Sprintf("bit %d of byte %d (record %d %q)", bit, off, base+uint64(rec), h.kinds[base+uint64(rec)])
				if off < wal.HeaderSize {
					msg = fmt.Sprintf("bit %d of header byte %d", bit, off)
				}
				records := base - 1 + uint64(rec)
				if off >= wal.HeaderSize && rec == len(ends)-1 && len(seg) == lastEnd || rec == len(ends) {
					// The last record with no mark after it, or the
					// mark: a torn tail, cut off and reported.
					db, err := h.openAt(t, dir, records)
					require.NoError(t, err, msg)
					require.Equal(t, h.dumps[records], dumpState(t, db), msg)
					checkAllStreams(t, db)
					bad := bytes.Clone(seg)
					bad[off] = damaged[0]
					requireCuts(t, db, cutOf(segPath, bad, start), msg)
					require.NoError(t, db.Close())
					opened++
					return
				}
				db, err := openSafe(t, dir, msg, lastClock)
				if err == nil {
					db.Close()
				}
				if off < wal.HeaderSize {
					requireErr(t, err, ErrNotDB, segPath)
				} else {
					requireErr(t, err, ErrCorrupt, segPath, "offset "+strconv.Itoa(start))
					require.Falsef(t, errors.Is(err, ErrNotDB), "%s: %v", msg, err)
				}
				want := maps.Clone(h.files)
				want[segName] = bytes.Clone(seg)
				want[segName][off] = damaged[0]
				requireSameFiles(t, want, dir, msg)
				refused++
			}
			for off := range wal.HeaderSize {
				flip(seg, off, off%8)
			}
			every := 1
			if i == 0 {
				from = ends[len(ends)-lastK-1]
			} else {
				every = 4
			}
			for off := from; off < len(seg); off += every {
				flip(seg, off, off%8)
				if _, start := recordAt(ends, off); off-start < wal.FrameHeaderSize && off < lastEnd {
					flip(seg, off, (off+3)%8)
				}
			}
			// Without the mark.
			for off := ends[len(ends)-2]; off < lastEnd; off++ {
				flip(seg[:lastEnd], off, off%8)
			}
			t.Logf("%d flips opened with the records before the damage, %d refused", opened, refused)
			require.NotZero(t, opened)
		})
	}
}

// cutOf returns the cut Open reports when the last segment, at path,
// holds seg and its last whole record ends at end: none when nothing but
// zeros follows, else one of the bytes after end up to the last non-zero
// one.
func cutOf(path string, seg []byte, end int) []LogCut {
	n := len(bytes.TrimRight(seg[end:], "\x00"))
	if n == 0 {
		return nil
	}
	return []LogCut{{File: path, Offset: int64(end), Bytes: int64(n)}}
}

// requireCuts checks that db reports the cuts want, whatever their
// reasons, which must be given.
func requireCuts(t testing.TB, db *DB, want []LogCut, msg string) {
	t.Helper()
	got := db.LogCuts()
	for i := range got {
		require.NotEmpty(t, got[i].Reason, msg)
		got[i].Reason = ""
	}
	require.Equal(t, want, got, msg)
}

// writeAt writes b at offset off of the file at path.
func writeAt(t testing.TB, path string, b []byte, off int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(b, int64(off))
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// TestLogCutInsideACall cuts the log between the records of calls that
// leave several (one per object they change: streams of a DB, shards of
// a sharded stream): the prefix of whole records must still be a sound
// DB, every stream holding its invariants and every group of a sharded
// stream readable, and the call can be made again.
func TestLogCutInsideACall(t *testing.T) {
	ctx := t.Context()
	sharded := func(db *DB) *ShardedStream {
		ss, _ := db.ShardedStream("orders")
		return ss
	}
	calls := []histCall{
		{name: "setup", do: func(t testing.TB, db *DB, clk *testClock) {
			for _, name := range []string{"a", "b"} {
				for i := range 3 {
					_, err := db.Add(name, AddArgs{}, Fields("i", strconv.Itoa(i))...)
					require.NoError(t, err)
				}
				require.NoError(t, db.CreateGroup(name, "g", "0", GroupOptions{}))
			}
			ss, err := db.CreateShardedStream("orders", ShardedArgs{Shards: 3})
			require.NoError(t, err)
			for i := range 12 {
				_, err := ss.Put("k"+strconv.Itoa(i), PutArgs{}, Fields("n", strconv.Itoa(i))...)
				require.NoError(t, err)
			}
		}},
		{name: "sharded CreateGroup", do: func(t testing.TB, db *DB, clk *testClock) {
			require.NoError(t, sharded(db).CreateGroup("billing", ShardGroupOptions{}))
		}},
		{name: "sharded ReadGroup", do: func(t testing.TB, db *DB, clk *testClock) {
			_, err := sharded(db).ReadGroup(ctx, "billing", "eve", ReadGroupArgs{Count: 9})
			require.NoError(t, err)
		}},
		{name: "sharded Ack", do: func(t testing.TB, db *DB, clk *testClock) {
			ss := sharded(db)
			p, err := ss.Pending("billing")
			require.NoError(t, err)
			var refs []RecordRef
			for _, sp := range p {
				refs = append(refs, RecordRef{sp.ShardID, sp.Lowest})
			}
			_, err = ss.Ack("billing", refs...)
			require.NoError(t, err)
		}},
		{name: "PutRecords", do: func(t testing.TB, db *DB, clk *testClock) {
			var batch []PutRecordsEntry
			for i := range 6 {
				batch = append(batch, PutRecordsEntry{PartitionKey: "p" + strconv.Itoa(i), Fields: Fields("n", strconv.Itoa(i))})
			}
			_, failed, err := sharded(db).PutRecords(batch)
			require.NoError(t, err)
			require.Zero(t, failed)
		}},
		{name: "UpdateShardCount", do: func(t testing.TB, db *DB, clk *testClock) {
			clk.advance(time.Second)
			require.NoError(t, sharded(db).UpdateShardCount(5))
		}},
		{name: "DB ReadGroup of two streams", do: func(t testing.TB, db *DB, clk *testClock) {
			_, err := db.ReadGroup(ctx, "g", "alice", ReadGroupArgs{Count: 2}, "a", ">", "b", ">")
			require.NoError(t, err)
		}},
		{name: "Remove of two streams", do: func(t testing.TB, db *DB, clk *testClock) {
			require.Positive(t, must(db.Remove("a", "b")))
		}},
	}
	h := buildHistory(t, calls, -1)
	segName, _ := h.lastSegment()
	seg := h.files[segName]
	ends := frameEnds(t, seg)
	dir := h.copyTo(t, filepath.Join(t.TempDir(), "db"), nil)
	segPath := filepath.Join(dir, segName)
	for i := 1; i < len(calls); i++ {
		from, to := h.marks[i-1], h.marks[i]
		require.Greater(t, to, from+1, "%s leaves one record", calls[i].name)
		var atomic []string
		for n := from + 1; n < to; n++ {
			msg := fmt.Sprintf("%s cut after %d of its %d records", calls[i].name, n-from, to-from)
			require.NoError(t, os.WriteFile(segPath, seg[:ends[n-1]], 0o600))
			db, err := openSafe(t, dir, msg, WithClock(newTestClock(h.times[to]).now))
			require.NoError(t, err, msg)
			dump, err := probeDB(db)
			require.NoError(t, err, "%s: not a sound DB", msg)
			switch dump {
			case h.dumps[from]:
				atomic = append(atomic, "before")
			case h.dumps[to]:
				atomic = append(atomic, "after")
			default:
				atomic = append(atomic, "between")
			}
			// The call again, on what the cut left.
			calls[i].do(t, db, newTestClock(h.times[to]))
			_, err = probeDB(db)
			require.NoError(t, err, "%s, then the call again: not a sound DB", msg)
			require.NoError(t, db.Close())
		}
		t.Logf("%s: %d records; the cuts between them leave the state %v the call", calls[i].name, to-from, atomic)
	}
}
