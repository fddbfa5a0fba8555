package wal

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestManifestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, m := range []Manifest{
		{Snapshot: SnapshotName(42), Logs: []string{SegmentName(1), SegmentName(42)}},
		{Logs: []string{SegmentName(1)}},
		{Snapshot: SnapshotName(9)},
		{},
	} {
		require.NoError(t, WriteManifest(dir, m))
		got, err := ReadManifest(dir)
		require.NoError(t, err)
		require.Equal(t, m.Snapshot, got.Snapshot)
		require.Equal(t, len(m.Logs), len(got.Logs))
		for i := range m.Logs {
			require.Equal(t, m.Logs[i], got.Logs[i])
		}
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1) // no temporary file left
}

func TestManifestText(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, WriteManifest(dir, Manifest{Snapshot: SnapshotName(42), Logs: []string{SegmentName(1), SegmentName(42)}}))
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	require.NoError(t, err)
	body := "xstream-manifest 1\n" +
		"snapshot 00000000000000000042.snap\n" +
		"log 00000000000000000001.log\n" +
		"log 00000000000000000042.log\n"
	require.Equal(t, body+fmt.Sprintf("crc %08x\n", crc32c([]byte(body))), string(b))
}

func TestManifestMissing(t *testing.T) {
	_, err := ReadManifest(t.TempDir())
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = ReadManifest(filepath.Join(t.TempDir(), "nope"))
	require.ErrorIs(t, err, fs.ErrNotExist)
}

// withCRC returns body followed by its crc line.
func withCRC(body string) []byte {
	return []byte(body + fmt.Sprintf("crc %08x\n", crc32c([]byte(body))))
}

func TestManifestDamage(t *testing.T) {
	good, err := Manifest{Snapshot: SnapshotName(42), Logs: []string{SegmentName(42)}}.encode()
	require.NoError(t, err)
	// Any byte changed is caught.
	for i := range good {
		for _, c := range []byte{'x', '0', '\n', ' ', 'A'} {
			if good[i] == c {
				continue
			}
			b := []byte(string(good))
			b[i] = c
			_, err := parseManifest(b, "/d/MANIFEST")
			require.ErrorIs(t, err, ErrNotOurs, "byte %d to %q", i, c)
			require.Contains(t, err.Error(), "/d/MANIFEST")
		}
	}
	for cut := range len(good) {
		_, err := parseManifest(good[:cut], "")
		require.ErrorIs(t, err, ErrNotOurs, "cut %d", cut)
	}
	for name, b := range map[string][]byte{
		"no version":      withCRC("xstream-manifest \n"),
		"version 0":       withCRC("xstream-manifest 0\n"),
		"version +1":      withCRC("xstream-manifest +1\n"),
		"version 01":      withCRC("xstream-manifest 01\n"),
		"other":           withCRC("something-else 1\n"),
		"unknown line":    withCRC("xstream-manifest 1\nwal 00000000000000000001.log\n"),
		"two snapshots":   withCRC("xstream-manifest 1\nsnapshot a.snap\nsnapshot b.snap\n"),
		"snapshot last":   withCRC("xstream-manifest 1\nlog a.log\nsnapshot b.snap\n"),
		"empty snapshot":  withCRC("xstream-manifest 1\nsnapshot \n"),
		"no name":         withCRC("xstream-manifest 1\nlog\n"),
		"log twice":       withCRC("xstream-manifest 1\nlog a.log\nlog a.log\n"),
		"slash":           withCRC("xstream-manifest 1\nlog ../a.log\n"),
		"absolute":        withCRC("xstream-manifest 1\nlog /etc/passwd\n"),
		"backslash":       withCRC("xstream-manifest 1\nlog a\\b.log\n"),
		"dot dot":         withCRC("xstream-manifest 1\nlog ..\n"),
		"dot":             withCRC("xstream-manifest 1\nsnapshot .\n"),
		"space":           withCRC("xstream-manifest 1\nlog a b\n"),
		"tmp":             withCRC("xstream-manifest 1\nlog a.log.tmp\n"),
		"empty line":      withCRC("xstream-manifest 1\n\n"),
		"upper crc":       []byte("xstream-manifest 1\ncrc ABCDEF01\n"),
		"no crc":          []byte("xstream-manifest 1\nlog a.log\n"),
		"no newline":      withCRC("xstream-manifest 1\n")[:27],
		"empty":           nil,
		"crc not last":    append(withCRC("xstream-manifest 1\n"), "log a.log\n"...),
		"carriage return": withCRC("xstream-manifest 1\r\n"),
	} {
		_, err := parseManifest(b, "")
		require.ErrorIs(t, err, ErrNotOurs, name)
	}
}

func TestManifestNewerVersion(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, ManifestName, withCRC("xstream-manifest 2\nsomething new\n"))
	_, err := ReadManifest(dir)
	require.ErrorIs(t, err, ErrVersion)
	require.Contains(t, err.Error(), path)

	writeFile(t, dir, ManifestName, withCRC("xstream-manifest 99999999999999999999999\n"))
	_, err = ReadManifest(dir)
	require.ErrorIs(t, err, ErrNotOurs) // not a number we can hold
}

func TestManifestBadNames(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"", ".", "..", "a/b", "../a", "/abs", `a\b`, "a b", "a\nb", "x.tmp", "é", strings.Repeat("a", 256)} {
		require.ErrorIs(t, WriteManifest(dir, Manifest{Logs: []string{name}}), os.ErrInvalid, "%q", name)
		if name != "" { // "" is no snapshot
			require.ErrorIs(t, WriteManifest(dir, Manifest{Snapshot: name}), os.ErrInvalid, "%q", name)
		}
	}
	require.ErrorIs(t, WriteManifest(dir, Manifest{Logs: []string{"a.log", "a.log"}}), os.ErrInvalid)
	_, err := ReadManifest(dir)
	require.ErrorIs(t, err, fs.ErrNotExist) // nothing was written
	require.NoError(t, WriteManifest(dir, Manifest{Snapshot: "Ab-9_.x", Logs: []string{strings.Repeat("a", 255)}}))
}
