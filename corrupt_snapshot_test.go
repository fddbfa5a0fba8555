package xstream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream/internal/wal"
)

// Damaged snapshots: a snapshot is written whole and renamed into place,
// so any defect in it is corruption. Open must refuse it with ErrCorrupt
// (ErrNotDB, ErrVersion for its header), never panic, never load a state.

// snapshotHistory returns the history whose DB has a snapshot, with the
// snapshot's name and bytes.
func snapshotHistory(t *testing.T) (*history, string, []byte) {
	t.Helper()
	calls, pre := historyCalls()
	h := buildHistory(t, calls, pre)
	require.NotEmpty(t, h.m.Snapshot)
	return h, h.m.Snapshot, h.files[h.m.Snapshot]
}

// requireSnapshotRefused checks the outcome of opening a damaged snapshot:
// an error of one of the three kinds, and the directory as it was.
func requireSnapshotRefused(t *testing.T, err error, want map[string][]byte, dir, msg string) {
	t.Helper()
	require.Error(t, err, msg)
	if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNotDB) && !errors.Is(err, ErrVersion) {
		require.Failf(t, "wrong error", "%s: %v (%T), not ErrCorrupt, ErrNotDB or ErrVersion", msg, err, err)
	}
	requireSameFiles(t, want, dir, msg)
}

// snapshotOffsets returns the offsets of a snapshot of n bytes that the
// tests damage: every one of its first and last 64 bytes (the header, the
// first records, the last ones and the trailer), and every every-th
// between.
func snapshotOffsets(n, every int) []int {
	var offs []int
	for off := 0; off < n; off++ {
		if off < 64 || off >= n-64 || off%every == 0 {
			offs = append(offs, off)
		}
	}
	return offs
}

// TestSnapshotCutAnywhere cuts the snapshot file at every byte offset of
// its first and last records, and at every sixth between (sixteenth
// with -short): Open always refuses it.
func TestSnapshotCutAnywhere(t *testing.T) {
	h, name, snap := snapshotHistory(t)
	dir := h.copyTo(t, filepath.Join(t.TempDir(), "db"), nil)
	path := filepath.Join(dir, name)
	every := 6
	if testing.Short() {
		every = 16
	}
	n := 0
	for _, off := range snapshotOffsets(len(snap), every) {
		msg := fmt.Sprintf("snapshot cut at %d of %d", off, len(snap))
		require.NoError(t, os.WriteFile(path, snap[:off], 0o600))
		db, err := openSafe(t, dir, msg)
		if err == nil {
			db.Close()
		}
		want := maps.Clone(h.files)
		want[name] = snap[:off]
		requireSnapshotRefused(t, err, want, dir, msg)
		if off < wal.HeaderSize {
			require.ErrorIs(t, err, ErrNotDB, msg)
		} else {
			require.ErrorIs(t, err, ErrCorrupt, msg)
		}
		n++
	}
	t.Logf("%d cuts of a snapshot of %d bytes refused", n, len(snap))
}

// TestSnapshotBitFlips flips one bit of each byte of the snapshot where
// TestSnapshotCutAnywhere cuts it, and every bit of the kind and version
// of its header: Open always refuses it.
func TestSnapshotBitFlips(t *testing.T) {
	h, name, snap := snapshotHistory(t)
	dir := h.copyTo(t, filepath.Join(t.TempDir(), "db"), nil)
	path := filepath.Join(dir, name)
	flip := func(off, bit int) {
		msg := fmt.Sprintf("bit %d of snapshot byte %d of %d", bit, off, len(snap))
		damaged := bytes.Clone(snap)
		damaged[off] ^= 1 << bit
		writeAt(t, path, damaged[off:off+1], off)
		defer writeAt(t, path, snap[off:off+1], off)
		db, err := openSafe(t, dir, msg)
		if err == nil {
			db.Close()
		}
		want := maps.Clone(h.files)
		want[name] = damaged
		requireSnapshotRefused(t, err, want, dir, msg)
		if off < wal.HeaderSize {
			require.ErrorIs(t, err, ErrNotDB, msg)
		} else {
			require.ErrorIs(t, err, ErrCorrupt, msg)
		}
	}
	for off := 8; off < 12; off++ {
		for bit := range 8 {
			flip(off, bit)
		}
	}
	every := 6
	if testing.Short() {
		every = 16
	}
	for _, off := range snapshotOffsets(len(snap), every) {
		flip(off, off%8)
	}
}

// crc32c is the checksum of package wal's frames and headers.
func crc32c(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }

// reframe returns b, a framed file (a snapshot, a backup or a log
// segment) that may be damaged, with the checksums made right again: the
// header's, that of every frame whose length fits in what follows, and
// the trailer's count when the last frame is shaped like a trailer. So
// damage to the payloads reaches the decoders behind the checksums.
func reframe(b []byte) []byte {
	b = bytes.Clone(b)
	if len(b) < wal.HeaderSize {
		return b
	}
	binary.LittleEndian.PutUint32(b[20:], crc32c(b[:20]))
	off, frames := wal.HeaderSize, uint64(0)
	for off+wal.FrameHeaderSize <= len(b) {
		l := int(binary.LittleEndian.Uint32(b[off:]))
		end := off + wal.FrameHeaderSize + l
		if l < 0 || l > wal.MaxPayload || end > len(b) {
			break
		}
		payload := b[off+wal.FrameHeaderSize : end]
		if end == len(b) && l == 16 && string(payload[:8]) == "XSTREND\x00" {
			binary.LittleEndian.PutUint64(payload[8:], frames)
		}
		binary.LittleEndian.PutUint32(b[off+4:], crc32.Update(crc32.Update(0, crc32.MakeTable(crc32.Castagnoli), b[off:off+4]), crc32.MakeTable(crc32.Castagnoli), payload))
		off = end
		frames++
	}
	return b
}

// TestSnapshotDecodeChecks damages the records of a snapshot behind their
// checksums (a bit of every third payload byte, of every ninth with
// -short, the checksums made right): the decoding checks must refuse what does
// not hold together with ErrCorrupt, and whatever they let through must
// be a DB that holds its invariants and can be read, changed and
// reopened. Never a panic.
func TestSnapshotDecodeChecks(t *testing.T) {
	h, name, snap := snapshotHistory(t)
	require.Equal(t, snap, reframe(snap), "reframe changes a sound snapshot")
	db, err := openSafe(t, h.copyTo(t, filepath.Join(t.TempDir(), "sound"), nil), "sound", WithClock(h.clk.now))
	require.NoError(t, err)
	got, err := probeDB(db)
	require.NoError(t, err)
	require.Equal(t, dumpState(t, db), got, "probeDB and dumpState differ")
	require.NoError(t, db.Close())
	dir := h.copyTo(t, filepath.Join(t.TempDir(), "db"), nil)
	path := filepath.Join(dir, name)
	step := 3
	if testing.Short() {
		step = 9
	}
	clock := WithClock(h.clk.now)
	var loaded, refused int
	var problems []string
	ends := frameEndsOf(snap)
	for off := wal.HeaderSize; off < len(snap); off += step {
		rec, start := recordAt(ends, off)
		if off-start < wal.FrameHeaderSize || rec == len(ends)-1 {
			continue // the frame header or the trailer: seen by the bit flips
		}
		msg := fmt.Sprintf("bit %d of snapshot byte %d (record %d, kind %d), checksum fixed", off%8, off, rec, snap[start+wal.FrameHeaderSize])
		damaged := bytes.Clone(snap)
		damaged[off] ^= 1 << (off % 8)
		damaged = reframe(damaged)
		require.NoError(t, os.WriteFile(path, damaged, 0o600))
		db, err := openSafe(t, dir, msg, clock)
		if err != nil {
			requireErr(t, err, ErrCorrupt)
			refused++
			continue
		}
		problem := ""
		if _, perr := probeDB(db); perr != nil {
			problem = perr.Error()
		} else if _, err = db.Add("s", AddArgs{}, Fields("after", "load")...); err != nil {
			problem = "Add: " + err.Error()
		}
		want, _ := probeDB(db)
		require.NoError(t, db.Close())
		if problem == "" {
			db, err = openSafe(t, dir, msg, clock)
			require.NoError(t, err, msg)
			got, perr := probeDB(db)
			require.NoError(t, db.Close())
			switch {
			case perr != nil:
				problem = "after a reopen: " + perr.Error()
			case got != want:
				problem = "another state after a reopen"
			}
		}
		if problem != "" {
			problems = append(problems, msg+": "+problem)
		}
		loaded++
		// The reopened DB wrote to the log: put the directory back.
		for n, b := range h.files {
			require.NoError(t, os.WriteFile(filepath.Join(dir, n), b, 0o600))
		}
	}
	t.Logf("%d damaged snapshots refused, %d loaded (a changed value, time or count)", refused, loaded)
	for _, p := range problems {
		t.Errorf("loaded, but not a sound DB: %s", p)
	}
}

// frameEndsOf returns the offsets just past each frame of a sound framed
// file.
func frameEndsOf(b []byte) []int {
	var ends []int
	off := wal.HeaderSize
	for off < len(b) {
		_, n, err := wal.DecodeFrame(b[off:])
		if err != nil {
			panic(err)
		}
		off += n
		ends = append(ends, off)
	}
	return ends
}
