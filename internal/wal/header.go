package wal

import (
	"encoding/binary"
	"fmt"
)

// Version is the format version this build writes, and the newest it
// reads. It covers the file header, the frames, the trailer and the
// manifest; see the package documentation for what a bump means.
const Version = 1

// HeaderSize is the size of the header at the start of every framed file.
const HeaderSize = 24

// magic starts every framed file.
const magic = "XSTREAM\x00"

// Kind says what a framed file holds.
type Kind byte

// The kinds of framed files.
const (
	// KindLog is a log segment: frames appended one batch at a time, no
	// trailer. Its Base is the sequence number of its first record.
	KindLog Kind = 'L'
	// KindSnapshot is a snapshot or a backup: frames written whole and
	// closed by a trailer. Its Base is the log sequence number it covers
	// up to.
	KindSnapshot Kind = 'S'
)

// String returns "log", "snapshot" or the byte in hex.
func (k Kind) String() string {
	switch k {
	case KindLog, KindSnapshot:
		return k.noun()
	}
	return fmt.Sprintf("kind 0x%02x", byte(k))
}

// noun names the kind in messages.
func (k Kind) noun() string {
	switch k {
	case KindLog:
		return "log"
	case KindSnapshot:
		return "snapshot"
	}
	return "file"
}

// Header is the parsed header of a framed file.
type Header struct {
	Kind    Kind
	Version uint16 // the format version the file was written with
	Base    uint64 // opaque to this package; see KindLog and KindSnapshot
}

// AppendHeader appends the HeaderSize-byte header of a file of the given
// kind and base, at the current Version, to dst.
func AppendHeader(dst []byte, kind Kind, base uint64) []byte {
	start := len(dst)
	dst = append(dst, magic...)
	dst = append(dst, byte(kind), 0)
	dst = binary.LittleEndian.AppendUint16(dst, Version)
	dst = binary.LittleEndian.AppendUint64(dst, base)
	return binary.LittleEndian.AppendUint32(dst, crc32c(dst[start:]))
}

// ParseHeader parses the header at the start of b and checks that it is a
// file of kind want. Errors wrap ErrNotOurs (b is shorter than HeaderSize,
// the magic is wrong, the header checksum is wrong, or the kind is not
// want) or ErrVersion (the file was written with a version newer than
// Version).
func ParseHeader(b []byte, want Kind) (Header, error) {
	return parseHeader(b, want, "")
}

// parseHeader is ParseHeader naming path, if not "", in its errors.
//
// The checksum is checked before the version: every version keeps the
// layout of the first HeaderSize bytes, so a damaged version field reads
// as ErrNotOurs and only a genuine newer file as ErrVersion.
func parseHeader(b []byte, want Kind, path string) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fileError(ErrNotOurs, path, "%d bytes is too short for a header", len(b))
	}
	b = b[:HeaderSize]
	if string(b[:8]) != magic {
		return Header{}, fileError(ErrNotOurs, path, "bad magic %q", b[:8])
	}
	if crc32c(b[:20]) != binary.LittleEndian.Uint32(b[20:24]) {
		return Header{}, fileError(ErrNotOurs, path, "bad header checksum")
	}
	h := Header{
		Kind:    Kind(b[8]),
		Version: binary.LittleEndian.Uint16(b[10:12]),
		Base:    binary.LittleEndian.Uint64(b[12:20]),
	}
	if h.Version > Version {
		return Header{}, fileError(ErrVersion, path, "format version %d, this build reads up to %d", h.Version, Version)
	}
	if h.Version == 0 || b[9] != 0 {
		return Header{}, fileError(ErrNotOurs, path, "bad header (version %d, reserved byte %d)", h.Version, b[9])
	}
	if h.Kind != want {
		return Header{}, fileError(ErrNotOurs, path, "a %s where a %s was expected", h.Kind, want)
	}
	return h, nil
}

// fileError returns an error wrapping sentinel whose message names path,
// if not "", and then the detail.
func fileError(sentinel error, path, format string, args ...any) error {
	detail := fmt.Sprintf(format, args...)
	if path != "" {
		return fmt.Errorf("%w: %s: %s", sentinel, path, detail)
	}
	return fmt.Errorf("%w: %s", sentinel, detail)
}
