package wal

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ManifestName is the name of the manifest file in a data directory.
const ManifestName = "MANIFEST"

// manifestMagic starts the first line of a manifest; the version follows.
const manifestMagic = "xstream-manifest "

// Manifest names the files that hold a data directory's state: the
// snapshot to load, if any, then the log segments to replay after it, in
// order. Files not named are not part of the state.
//
// Names are plain file names in the directory: 1 to 255 ASCII letters,
// digits, '.', '_' and '-', not "." or "..", and not ending in ".tmp"
// (RemoveTemps would remove such a file).
type Manifest struct {
	Snapshot string   // "" for none
	Logs     []string // no name twice
}

// WriteManifest replaces the manifest of dir with m, atomically (see
// WriteFileAtomic): after a crash the manifest is the old one or m, whole.
// This is the switch from one set of files to the next: write and sync
// the new files first, then the manifest, and only then remove the files
// the old manifest named and m does not. A bad name in m is an error
// wrapping os.ErrInvalid.
func WriteManifest(dir string, m Manifest) error {
	b, err := m.encode()
	if err != nil {
		return err
	}
	return WriteFileAtomic(dir, ManifestName, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// encode returns the manifest's text:
//
//	xstream-manifest 1
//	snapshot 00000000000000000042.snap
//	log 00000000000000000042.log
//	crc 1a2b3c4d
//
// where the snapshot line is there only if there is a snapshot, and crc is
// the CRC-32C, 8 lower-case hex digits, of every byte before its line.
func (m Manifest) encode() ([]byte, error) {
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("xstream: manifest: %s: %w", err, os.ErrInvalid)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s%d\n", manifestMagic, Version)
	if m.Snapshot != "" {
		fmt.Fprintf(&b, "snapshot %s\n", m.Snapshot)
	}
	for _, l := range m.Logs {
		fmt.Fprintf(&b, "log %s\n", l)
	}
	fmt.Fprintf(&b, "crc %08x\n", crc32c(b.Bytes()))
	return b.Bytes(), nil
}

// check returns what is wrong with m's names, or nil.
func (m Manifest) check() error {
	if m.Snapshot != "" && !validName(m.Snapshot) {
		return fmt.Errorf("bad snapshot name %q", m.Snapshot)
	}
	seen := make(map[string]bool, len(m.Logs))
	for _, l := range m.Logs {
		if !validName(l) {
			return fmt.Errorf("bad log name %q", l)
		}
		if seen[l] {
			return fmt.Errorf("log %q named twice", l)
		}
		seen[l] = true
	}
	return nil
}

// ReadManifest reads the manifest of dir. If there is none the error
// wraps os.ErrNotExist: the directory is new. A manifest whose first line
// is not "xstream-manifest <n>", whose checksum is wrong, or with any
// malformed line or bad name is ErrNotOurs; one with a version newer than
// Version is ErrVersion. The checksum is checked before the version: the
// first and the last line keep their form in every version.
func ReadManifest(dir string) (Manifest, error) {
	path := filepath.Join(dir, ManifestName)
	b, err := os.ReadFile(path)
	if err != nil {
		return Manifest{}, err
	}
	return parseManifest(b, path)
}

func parseManifest(b []byte, path string) (Manifest, error) {
	bad := func(format string, args ...any) (Manifest, error) {
		return Manifest{}, fileError(ErrNotOurs, path, "manifest: "+format, args...)
	}
	if !bytes.HasPrefix(b, []byte(manifestMagic)) {
		return bad("no %q line", strings.TrimSpace(manifestMagic))
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return bad("no final newline")
	}
	body := b[:len(b)-1]
	i := bytes.LastIndexByte(body, '\n') + 1 // the start of the crc line
	if i == 0 {
		return bad("no crc line")
	}
	crcLine := string(body[i:])
	sum, ok := strings.CutPrefix(crcLine, "crc ")
	if !ok || len(sum) != 8 || strings.ToLower(sum) != sum {
		return bad("bad crc line %q", crcLine)
	}
	want, err := strconv.ParseUint(sum, 16, 32)
	if err != nil {
		return bad("bad crc line %q", crcLine)
	}
	if got := crc32c(b[:i]); uint32(want) != got {
		return bad("checksum %08x, want %08x", got, want)
	}
	lines := strings.Split(string(b[:i-1]), "\n")
	v, err := strconv.ParseUint(lines[0][len(manifestMagic):], 10, 64)
	if err != nil || v == 0 || lines[0] != manifestMagic+strconv.FormatUint(v, 10) {
		return bad("bad first line %q", lines[0])
	}
	if v > Version {
		return Manifest{}, fileError(ErrVersion, path, "manifest version %d, this build reads up to %d", v, Version)
	}
	var m Manifest
	for n, line := range lines[1:] {
		key, name, ok := strings.Cut(line, " ")
		if !ok || !validName(name) {
			return bad("line %d: bad %q", n+2, line)
		}
		switch {
		case key == "snapshot" && m.Snapshot == "" && m.Logs == nil:
			m.Snapshot = name
		case key == "log":
			m.Logs = append(m.Logs, name)
		default:
			return bad("line %d: unexpected %q", n+2, line)
		}
	}
	if err := m.check(); err != nil {
		return bad("%s", err)
	}
	return m, nil
}

// validName reports whether name is a plain file name as Manifest
// describes.
func validName(name string) bool {
	if len(name) == 0 || len(name) > 255 || name == "." || name == ".." || strings.HasSuffix(name, tempSuffix) {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}
