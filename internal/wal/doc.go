// Package wal is the on-disk format of a durable xstream: framed records
// with checksums, log segments and snapshot files with a versioned header,
// the manifest that names the live files, the directory lock, and atomic
// replacement of a file. It knows nothing of streams: a record is an
// opaque payload of bytes.
//
// # Files in a data directory
//
//	LOCK                        lock file, held with LockDir; holds the holder's PID
//	MANIFEST                    which snapshot and log segments make up the state
//	00000000000000000042.snap   a snapshot covering the log up to sequence 42 (SnapshotName)
//	00000000000000000043.log    a log segment whose first record is sequence 43 (SegmentName)
//	*.tmp                       a file being written by WriteFileAtomic, or left by a crash (RemoveTemps)
//
// Numbers in names are 20 zero-padded decimal digits, so names sort as
// their numbers. Files the manifest does not name are not part of the
// state: leftovers of a switch interrupted by a crash, safe to remove.
//
// # Frames
//
// Every record is one frame:
//
//	offset 0  u32 LE  length of the payload, at most MaxPayload (1 GiB)
//	offset 4  u32 LE  CRC-32C (Castagnoli) of bytes 0..3 followed by the payload
//	offset 8  length bytes of payload
//
// The checksum covers the length, so a damaged length is caught. An
// all-zero frame header is never valid: the CRC-32C of a zero length is not
// zero. A frame of an empty payload is valid.
//
// # File header
//
// Every framed file starts with a HeaderSize (24) byte header:
//
//	offset 0   8 bytes  magic "XSTREAM\x00"
//	offset 8   1 byte   kind: 'L' log segment, 'S' snapshot
//	offset 9   1 byte   reserved, 0
//	offset 10  u16 LE   format version (Version)
//	offset 12  u64 LE   base: a log segment's first sequence number, or the
//	                    sequence number a snapshot covers up to
//	offset 20  u32 LE   CRC-32C of bytes 0..19
//
// Frames follow the header directly.
//
// # Log segments
//
// A log segment is the header and frames appended in batches, each batch
// with one write and made durable by a later sync (Segment). It has no
// trailer: its end is wherever the last write stopped. Recovery reads it
// with ScanSegment, which tells a torn tail from corruption by this rule:
// scanning stops at the first bytes, at offset O, that are not a whole
// valid frame; if no whole valid frame starts at any offset after O, the
// tail is torn (a crash cut the last write) and the caller cuts the file
// at O; if one does, data was damaged in the middle and that is an error
// wrapping ErrCorrupt naming the file and O, the records before O still
// available. See ScanSegment for the cost and the cases the rule
// misjudges.
//
// After each successful sync the writer puts a 16-byte sync mark after
// the last record ("SYNC", its own offset, a CRC-32C that also covers the
// segment's base), which the next batch overwrites; Close leaves one at
// the end of the newest segment. A mark after bad bytes shows they had
// been synced, so a crash did not make them: ScanSegment refuses them as
// corruption even at the end of the log. A reader without marks takes a
// mark at the end for a torn tail and cuts it, losing nothing. See
// mark.go.
//
// # Snapshots
//
// A snapshot (or a backup, written to any io.Writer) is the header, the
// frames, and a trailer frame whose payload is the 8 bytes "XSTREND\x00"
// and the u64 LE count of frames before it (Writer). It is written whole
// to a temporary file and renamed into place, so it is never cut short:
// any defect, a missing or mismatched trailer included, is corruption
// (Reader). A frame shaped like the trailer is the trailer only if it ends
// the file.
//
// # Switching files atomically
//
// WriteFileAtomic writes dir/name.<random>.tmp, syncs it, renames it over
// dir/name and syncs dir, so after a crash dir/name is wholly old or wholly
// new. The state moves from one set of files to the next in this order:
// write and sync the new files (a snapshot with WriteFileAtomic, a new
// segment with CreateSegment), write the manifest naming them with
// WriteManifest, then remove the files only the old manifest named. A
// crash before the manifest's rename leaves the old state whole; after
// it, the new one; either way with some unnamed files to remove.
//
// # Versions
//
// Version (1) is written in every header and in the manifest's first
// line. A reader accepts every version up to its own and refuses a newer
// one with ErrVersion, changing nothing, so an old build never
// misreads, or truncates, a newer directory. A bump is needed for any
// change an older reader would misread: a new frame layout, a new meaning
// of the base, new manifest lines. A change to the payloads is the
// caller's own format and versioned by it. Every version keeps the first
// HeaderSize bytes and the manifest's first and last lines in the form
// above, so a version is always read and checked the same way.
package wal
