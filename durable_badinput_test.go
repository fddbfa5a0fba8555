package xstream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream/internal/wal"
)

// "Every bad input (a file that is not ours, a newer version, a missing
// directory without create, a locked directory) gets a sentinel error and
// changes nothing on disk."

// withVersion returns a copy of a framed file whose header says version
// v, its checksum made right.
func withVersion(b []byte, v uint16) []byte {
	b = bytes.Clone(b)
	binary.LittleEndian.PutUint16(b[10:], v)
	binary.LittleEndian.PutUint32(b[20:], crc32c(b[:20]))
	return b
}

// withHeader returns a copy of a framed file with its header's kind and
// base changed, its checksum made right.
func withHeader(b []byte, kind byte, base uint64) []byte {
	b = bytes.Clone(b)
	b[8] = kind
	binary.LittleEndian.PutUint64(b[12:], base)
	binary.LittleEndian.PutUint32(b[20:], crc32c(b[:20]))
	return b
}

// flipByte returns a copy of b with the byte at off inverted.
func flipByte(b []byte, off int) []byte {
	b = bytes.Clone(b)
	b[off] ^= 0xff
	return b
}

// manifestText returns a manifest of the given version and lines, with a
// right checksum.
func manifestText(version int, lines ...string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "xstream-manifest %d\n", version)
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	fmt.Fprintf(&b, "crc %08x\n", crc32c(b.Bytes()))
	return b.Bytes()
}

// TestOpenBadInputs opens directories that hold something wrong: each
// Open must fail with its sentinel, name the file or directory at fault,
// and leave every file of the directory (names and bytes) as it was.
func TestOpenBadInputs(t *testing.T) {
	calls, pre := historyCalls()
	h := buildHistory(t, calls[:pre], pre-1) // a snapshot and a log
	require.NotEmpty(t, h.m.Snapshot)
	segName := h.m.Logs[0]
	snapName := h.m.Snapshot
	seg, snap := h.files[segName], h.files[snapName]
	segBase, _ := wal.ParseSegmentName(segName)

	type tcase struct {
		name     string
		files    map[string][]byte // the directory; nil: none
		opts     []Option
		sentinel error
		names    []string // the files of the directory the message names ("": the directory)
	}
	db := func(replace map[string][]byte) map[string][]byte {
		files := maps.Clone(h.files)
		for n, b := range replace {
			if b == nil {
				delete(files, n)
			} else {
				files[n] = b
			}
		}
		return files
	}
	cases := []tcase{
		{name: "manifest garbage", files: db(map[string][]byte{wal.ManifestName: []byte("hello\n")}),
			sentinel: ErrNotDB, names: []string{wal.ManifestName}},
		{name: "manifest garbage, nothing else", files: map[string][]byte{wal.ManifestName: []byte("\x00\x01binary garbage")},
			sentinel: ErrNotDB, names: []string{wal.ManifestName}},
		{name: "manifest bad checksum", files: db(map[string][]byte{wal.ManifestName: bytes.Replace(manifestText(1, "log "+segName), []byte("log"), []byte("lag"), 1)}),
			sentinel: ErrNotDB, names: []string{wal.ManifestName}},
		{name: "manifest version 2", files: db(map[string][]byte{wal.ManifestName: manifestText(2, "log "+segName)}),
			sentinel: ErrVersion, names: []string{wal.ManifestName}},
		{name: "manifest lists no log", files: db(map[string][]byte{wal.ManifestName: manifestText(1, "snapshot "+snapName)}),
			sentinel: ErrNotDB, names: []string{""}},
		{name: "manifest names a file that is not a segment", files: db(map[string][]byte{wal.ManifestName: manifestText(1, "snapshot "+snapName, "log notes.txt"), "notes.txt": seg}),
			sentinel: ErrNotDB, names: []string{"notes.txt"}},
		{name: "manifest names a missing segment", files: db(map[string][]byte{segName: nil}),
			sentinel: ErrCorrupt, names: []string{segName}},
		{name: "manifest names a missing snapshot", files: db(map[string][]byte{snapName: nil}),
			sentinel: ErrCorrupt, names: []string{snapName}},
		{name: "segment version 2", files: db(map[string][]byte{segName: withVersion(seg, 2)}),
			sentinel: ErrVersion, names: []string{segName}},
		{name: "segment version 0", files: db(map[string][]byte{segName: withVersion(seg, 0)}),
			sentinel: ErrNotDB, names: []string{segName}},
		{name: "segment not ours", files: db(map[string][]byte{segName: append([]byte("GIF89a not a log at all"), seg[23:]...)}),
			sentinel: ErrNotDB, names: []string{segName}},
		{name: "segment too short for a header", files: db(map[string][]byte{segName: seg[:10]}),
			sentinel: ErrNotDB, names: []string{segName}},
		{name: "segment with a snapshot header", files: db(map[string][]byte{segName: withHeader(seg, 'S', segBase)}),
			sentinel: ErrNotDB, names: []string{segName}},
		{name: "segment header with another base", files: db(map[string][]byte{segName: withHeader(seg, 'L', segBase+1)}),
			sentinel: ErrNotDB, names: []string{segName}},
		{name: "snapshot version 2", files: db(map[string][]byte{snapName: withVersion(snap, 2)}),
			sentinel: ErrVersion, names: []string{snapName}},
		{name: "snapshot not ours", files: db(map[string][]byte{snapName: append([]byte("%PDF-1.7 not a snapshot"), snap[23:]...)}),
			sentinel: ErrNotDB, names: []string{snapName}},
		{name: "snapshot with a log header", files: db(map[string][]byte{snapName: withHeader(snap, 'L', segBase)}),
			sentinel: ErrNotDB, names: []string{snapName}},
		{name: "snapshot damaged record", files: db(map[string][]byte{snapName: flipByte(snap, len(snap)/2)}),
			sentinel: ErrCorrupt, names: []string{snapName}},
		{name: "snapshot cut short", files: db(map[string][]byte{snapName: snap[:len(snap)-5]}),
			sentinel: ErrCorrupt, names: []string{snapName}},
		{name: "must exist, empty directory", files: map[string][]byte{}, opts: []Option{WithMustExist()},
			sentinel: ErrDBNotFound, names: []string{""}},
		{name: "must exist, a lock file only", files: map[string][]byte{wal.LockName: h.files[wal.LockName]}, opts: []Option{WithMustExist()},
			sentinel: ErrDBNotFound, names: []string{""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "db")
			require.NoError(t, os.Mkdir(dir, 0o755))
			for n, b := range c.files {
				require.NoError(t, os.WriteFile(filepath.Join(dir, n), b, 0o600))
			}
			db, err := openSafe(t, dir, c.name, append([]Option{WithClock(h.clk.now)}, c.opts...)...)
			if err == nil {
				db.Close()
			}
			// The message names the directory and the file (or says
			// its path).
			names := []string{dir}
			for _, n := range c.names {
				if n != "" {
					names = append(names, n)
				}
			}
			require.ErrorIs(t, err, c.sentinel)
			requireSameFiles(t, c.files, dir, c.name)
			requireErr(t, err, c.sentinel, names...)
		})
	}

	t.Run("must exist, missing directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "nothing", "here")
		_, err := openSafe(t, dir, "missing", WithMustExist())
		requireErr(t, err, ErrDBNotFound, dir)
		_, err = os.Stat(filepath.Dir(dir))
		require.True(t, errors.Is(err, fs.ErrNotExist), "Open made %s", filepath.Dir(dir))
	})

	t.Run("locked", func(t *testing.T) {
		dir := h.copyTo(t, filepath.Join(t.TempDir(), "db"), nil)
		first, err := openSafe(t, dir, "first", WithClock(h.clk.now))
		require.NoError(t, err)
		defer first.Close()
		before := readDirFiles(t, dir)
		for _, opts := range [][]Option{nil, {WithMustExist()}, {WithTruncateCorrupt()}} {
			_, err = openSafe(t, dir, "second", opts...)
			requireErr(t, err, ErrLocked, dir)
			requireSameFiles(t, before, dir, "second Open")
		}
		var backup bytes.Buffer
		require.NoError(t, first.Backup(&backup))
		_, err = Restore(dir, bytes.NewReader(backup.Bytes()))
		requireErr(t, err, ErrLocked, dir)
		requireSameFiles(t, before, dir, "Restore")
		// The first is unharmed.
		_, err = first.Add("s", AddArgs{}, Fields("still", "open")...)
		require.NoError(t, err)
	})
}

// TestOpenWithoutManifest opens a directory that holds a DB's segment and
// snapshot but no manifest (lost, or not copied): Open refuses it with
// ErrNotDB, changing nothing, rather than taking it for a DB whose
// creation was cut short. With WithMustExist it is ErrDBNotFound.
func TestOpenWithoutManifest(t *testing.T) {
	calls, pre := historyCalls()
	h := buildHistory(t, calls[:pre], pre-1)
	files := maps.Clone(h.files)
	delete(files, wal.ManifestName)

	dir := writeFiles(t, files)
	_, err := openSafe(t, dir, "must exist", WithMustExist())
	requireErr(t, err, ErrDBNotFound, dir)
	requireSameFiles(t, files, dir, "WithMustExist")

	_, err = openSafe(t, dir, "no manifest", WithClock(h.clk.now))
	requireErr(t, err, ErrNotDB, dir, wal.ManifestName)
	requireSameFiles(t, files, dir, "refused")
}
