package xstream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"path/filepath"
	"testing"

	"github.com/xstreamgo/xstream/internal/wal"
)

// Fuzz targets on the decoders of durable DBs: the replay of a log record
// and the loading of a snapshot or backup. Whatever the bytes, no panic;
// a record or snapshot that does not fit is an error of the corruption
// kind; and what is accepted is a DB that holds its invariants and can be
// read without a panic.

// fuzzHistory is the history the fuzz targets start from: its records
// (the payloads of its log, in order) and a backup and a snapshot of it.
type fuzzHistory struct {
	records  [][]byte
	backup   []byte
	snapshot []byte
}

func newFuzzHistory(f *testing.F) *fuzzHistory {
	untrackWhenFuzzing()
	calls, pre := historyCalls()
	h := buildHistory(f, calls, -1)
	fh := &fuzzHistory{}
	_, err := wal.ScanSegment(filepath.Join(h.dir, h.m.Logs[0]), func(p []byte) error {
		fh.records = append(fh.records, bytes.Clone(p))
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	hs := buildHistory(f, calls, pre)
	fh.snapshot = hs.files[hs.m.Snapshot]
	// A backup as Backup writes one while calls go on: the snapshot, then
	// the log records made meanwhile (here those after the snapshot).
	fh.backup = withLogRecords(f, fh.snapshot, hs.marks[pre-1]+1, fh.records[hs.marks[pre-1]:])
	return fh
}

// withLogRecords returns the snapshot snap with the given log records,
// the first of LSN lsn, added before its trailer as snapLog records.
func withLogRecords(t testing.TB, snap []byte, lsn uint64, records [][]byte) []byte {
	ends := frameEndsOf(snap)
	out := bytes.Clone(snap[:ends[len(ends)-2]]) // up to the trailer
	for i, p := range records {
		out = wal.AppendFrame(out, append(binary.AppendUvarint([]byte{snapLog}, lsn+uint64(i)), p...))
	}
	out = wal.AppendFrame(out, binary.LittleEndian.AppendUint64([]byte("XSTREND\x00"), uint64(len(ends)-1+len(records))))
	r := newReplayer(newDB(newConfig(nil)))
	if err := r.loadSnapshot(bytes.NewReader(out)); err != nil {
		t.Fatalf("the crafted backup does not load: %v", err)
	}
	return out
}

// untrackWhenFuzzing stops TestMain's keeping of every stream made when
// the test binary fuzzes: the streams of millions of inputs would be
// kept, slowing each input down (and those of inputs refused half way
// are no concern of the invariants).
func untrackWhenFuzzing() {
	if f := flag.Lookup("test.fuzz"); f == nil || f.Value.String() == "" {
		if w := flag.Lookup("test.fuzzworker"); w == nil || w.Value.String() != "true" {
			return
		}
	}
	madeMu.Lock()
	defer madeMu.Unlock()
	testHookNewStream = nil
	tracked = false
	made = nil
}

// replayPrefix returns a replayer that has applied the first n records.
func (fh *fuzzHistory) replayPrefix(t *testing.T, n int) *replayer {
	r := newReplayer(newDB(newConfig(nil)))
	r.where = "fuzz"
	for i, p := range fh.records[:n] {
		r.lsn = uint64(i + 1)
		if err := r.apply(p); err != nil {
			t.Fatalf("record %d of the history: %v", i+1, err)
		}
	}
	r.lsn = uint64(n + 1)
	return r
}

// checkLoaded publishes the sharded streams of a rebuilt DB, as Open
// does, and fails the test if reading it panics or a stream breaks its
// invariants. Other errors of the reading calls are not the decoders'
// concern here (see TestSnapshotShardedGroupNotOnItsShards).
func checkLoaded(t *testing.T, r *replayer, what string) {
	t.Helper()
	for _, ss := range r.db.sharded {
		ss.publishLocked()
	}
	_, err := probeDB(r.db)
	if errors.Is(err, errProbePanic) || errors.Is(err, errProbeInvariant) {
		t.Fatalf("%s accepted, but: %v", what, err)
	}
}

// FuzzReplayRecord applies arbitrary bytes as one log record to a DB
// rebuilt from a prefix of a real history: the first byte says how many
// of the history's records come first, the rest is the record's payload.
// Seeded with each real record after the records before it.
func FuzzReplayRecord(f *testing.F) {
	fh := newFuzzHistory(f)
	for i, p := range fh.records {
		f.Add(append([]byte{byte(i)}, p...))
	}
	f.Add([]byte{})
	f.Add([]byte{0})
	f.Add([]byte{50, 1, 2})
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 || len(in) > 4096 {
			return
		}
		n := int(in[0]) % (len(fh.records) + 1)
		r := fh.replayPrefix(t, n)
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("applying the record after %d records panicked: %v", n, p)
				}
			}()
			err = r.apply(in[1:])
		}()
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("after %d records: %v (%T), not ErrCorrupt", n, err, err)
			}
			return
		}
		checkLoaded(t, r, "the record")
	})
}

// FuzzLoadSnapshot loads arbitrary bytes as a snapshot (or backup) with
// the loader Open and Restore use, twice: as they are, and with their
// checksums made right (reframe), so that damage reaches the decoders
// behind them. Seeded with a real snapshot and a real backup.
func FuzzLoadSnapshot(f *testing.F) {
	fh := newFuzzHistory(f)
	f.Add(fh.snapshot)
	f.Add(fh.backup)
	f.Add(fh.snapshot[:wal.HeaderSize])
	f.Add(fh.backup[:len(fh.backup)/2])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 16<<10 {
			return // minimizing a large input takes long: keep to small ones
		}
		for _, data := range [][]byte{in, reframe(in)} {
			r := newReplayer(newDB(newConfig(nil)))
			r.where = "fuzz"
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("loading panicked: %v", p)
					}
				}()
				err = r.loadSnapshot(bytes.NewReader(data))
			}()
			if err != nil {
				if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNotDB) && !errors.Is(err, ErrVersion) {
					t.Fatalf("%v (%T), not ErrCorrupt, ErrNotDB or ErrVersion", err, err)
				}
				continue
			}
			checkLoaded(t, r, "the snapshot")
		}
	})
}
