package xstream

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/xstreamgo/xstream/internal/store"
	"github.com/xstreamgo/xstream/internal/wal"
)

// Snapshots.
//
// A snapshot holds every object of the DB, each as it was when the
// snapshot copied it under the object's lock (so a writer waits at most
// for the copy of one stream's blocks), with the LSN of its last record
// then. Its base is the LSN from which the log must be replayed over it;
// replay applies a record to an object only if it is newer than the
// object's copy (replay.go). A stream's blocks are written as they are in
// memory, as Redis's RDB writes listpacks, so writing and loading run at
// disk speed.
//
// The records of a snapshot, each one frame of the file:
//
//	snapDB       next object number
//	snapStream   object, name, LSN, kind (0: of the DB; 1: of a shard,
//	             then the sharded stream's object and the shard's number),
//	             last ID, first ID, max deleted ID, entries added, open
//	             (0/1), number of blocks and of groups
//	snapBlockV2  header length, master names, live entries, last ID, n,
//	             n × u32 offsets, data: a block (internal/store/block.go)
//	snapBlock    the same of a block in the first format, which the
//	             snapshots written before snapBlockV2 hold (the loader
//	             makes it anew: internal/store/blockv1.go)
//	snapGroup    name, last ID, entries read, consumers
//	snapGroupPolicy  max deliveries, dead-letter stream, entries moved:
//	             right after the snapGroup of a group with a dead-letter
//	             policy or dead letters (none otherwise, so that a DB
//	             that never used the policy keeps the format of before)
//	snapExpire   ms: when the stream expires, right after the snapStream
//	             of a stream with an expiry (none otherwise)
//	snapConsumer name, seen ms, active ms
//	snapPending  n, n × (ID, delivery ms, count, owner: 0 none, i+1 the
//	             group's i-th consumer)
//	snapGone     object, LSN: removed while the snapshot was taken
//	snapSharded  object, name, LSN, retention ms, created ms, epoch,
//	             groups (name, strict), shards (see writeSharded), open
//	             order
//	snapLog      one record of the log, with its LSN (backups only)
//
// followed by the trailer package wal writes.
const (
	snapDB          = 1
	snapStream      = 2
	snapBlock       = 3
	snapGroup       = 4
	snapConsumer    = 5
	snapPending     = 6
	snapGone        = 7
	snapSharded     = 8
	snapLog         = 9
	snapGroupPolicy = 10

	snapIdempotence  = 11 // after the groups (see idmpops.go)
	snapIdmpProducer = 12
	snapExpire       = 13
	snapBlockV2      = 14
)

// pendingBatch is how many pending entries one snapPending record holds.
const pendingBatch = 4096

// snapWriter writes the records of a snapshot.
type snapWriter struct {
	w   *wal.Writer
	buf []byte
}

func (w *snapWriter) begin(kind byte)  { w.buf = append(w.buf[:0], kind) }
func (w *snapWriter) uvarint(v uint64) { w.buf = binary.AppendUvarint(w.buf, v) }
func (w *snapWriter) varint(v int64)   { w.buf = binary.AppendVarint(w.buf, v) }
func (w *snapWriter) str(s string) {
	w.uvarint(uint64(len(s)))
	w.buf = append(w.buf, s...)
}
func (w *snapWriter) id(id ID) { w.uvarint(id.Ms); w.uvarint(id.Seq) }
func (w *snapWriter) end() error {
	err := w.w.Append(w.buf)
	if cap(w.buf) > 1<<20 {
		w.buf = nil
	}
	return err
}

// streamCopy is a stream as a snapshot copied it.
type streamCopy struct {
	obj, lsn uint64
	name     string
	shardOf  uint64 // the sharded stream's object, for a shard's stream
	shardNum int
	st       store.State
	blocks   []store.RawBlock
	groups   []groupCopy
	gone     bool
	trimmed  ID // of a shard's stream: what retention dropped
	idmp     *idmpCopy
	expireMs int64 // when it expires (0: never)
}

type groupCopy struct {
	name        string
	lastID      ID
	entriesRead int64
	consumers   []consumerCopy
	pel         []pendingCopy
	dead        DeadLetterPolicy
	deadMoved   int64
}

type consumerCopy struct {
	name           string
	seenMs, active int64
}

type pendingCopy struct {
	id         ID
	deliveryMs int64
	count      int64
	owner      uint64 // 0: none; i+1: consumers[i]
}

// copyStream copies s under its lock.
func copyStream(s *Stream) streamCopy {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c := streamCopy{name: s.Name()}
	if s.log == nil {
		// Removed since the listing.
		c.gone = true
		if s.was != nil {
			c.obj, c.lsn = s.was.obj, s.was.lsn
		}
		return c
	}
	c.obj, c.lsn = s.log.obj, s.log.lsn
	c.expireMs = s.expireMs
	c.st = s.st.State()
	c.blocks = make([]store.RawBlock, s.st.NumBlocks())
	for i := range c.blocks {
		c.blocks[i] = s.st.Block(i).Raw()
	}
	s.eachGroupLocked(func(g *group) {
		gc := groupCopy{name: g.name, lastID: g.lastID, entriesRead: g.entriesRead, dead: g.dead, deadMoved: g.deadLettered}
		index := map[uint32]uint64{}
		eachConsumer(g, func(cn *consumer) {
			gc.consumers = append(gc.consumers, consumerCopy{cn.name, cn.seenMs, cn.activeMs})
			index[cn.num] = uint64(len(gc.consumers))
		})
		gc.pel = make([]pendingCopy, 0, g.pel.Len())
		g.pel.Ascend(store.ID{}, store.MaxID, func(id sID, rec *nack) bool {
			gc.pel = append(gc.pel, pendingCopy{ID(id), rec.deliveryMs, rec.count, index[rec.owner]})
			return true
		})
		c.groups = append(c.groups, gc)
	})
	c.idmp = s.copyIdmpLocked()
	return c
}

func (w *snapWriter) writeStream(c *streamCopy) error {
	if c.gone {
		return nil
	}
	w.begin(snapStream)
	w.uvarint(c.obj)
	w.str(c.name)
	w.uvarint(c.lsn)
	if c.shardOf != 0 {
		w.uvarint(1)
		w.uvarint(c.shardOf)
		w.uvarint(uint64(c.shardNum))
		w.id(c.trimmed)
	} else {
		w.uvarint(0)
	}
	w.id(ID(c.st.LastID))
	w.id(ID(c.st.FirstID))
	w.id(ID(c.st.MaxDeleted))
	w.varint(c.st.EntriesAdded)
	w.uvarint(b2u(c.st.Open))
	w.uvarint(uint64(len(c.blocks)))
	w.uvarint(uint64(len(c.groups)))
	if err := w.end(); err != nil {
		return err
	}
	if c.expireMs != 0 {
		w.begin(snapExpire)
		w.varint(c.expireMs)
		if err := w.end(); err != nil {
			return err
		}
	}
	for _, b := range c.blocks {
		w.begin(snapBlockV2)
		w.uvarint(uint64(b.Hdr))
		w.uvarint(uint64(b.Nmast))
		w.uvarint(uint64(b.Live))
		w.id(ID(b.Last))
		w.uvarint(uint64(len(b.Offs)))
		for _, o := range b.Offs {
			w.buf = binary.LittleEndian.AppendUint32(w.buf, o)
		}
		w.buf = append(w.buf, b.Data...)
		if err := w.end(); err != nil {
			return err
		}
	}
	for _, g := range c.groups {
		w.begin(snapGroup)
		w.str(g.name)
		w.id(g.lastID)
		w.varint(g.entriesRead)
		w.uvarint(uint64(len(g.consumers)))
		w.uvarint(uint64(len(g.pel)))
		if err := w.end(); err != nil {
			return err
		}
		if g.dead != (DeadLetterPolicy{}) || g.deadMoved != 0 {
			w.begin(snapGroupPolicy)
			w.varint(g.dead.MaxDeliveries)
			w.str(g.dead.Stream)
			w.varint(g.deadMoved)
			if err := w.end(); err != nil {
				return err
			}
		}
		for _, cn := range g.consumers {
			w.begin(snapConsumer)
			w.str(cn.name)
			w.varint(cn.seenMs)
			w.varint(cn.active)
			if err := w.end(); err != nil {
				return err
			}
		}
		for i := 0; i < len(g.pel); i += pendingBatch {
			batch := g.pel[i:min(i+pendingBatch, len(g.pel))]
			w.begin(snapPending)
			w.uvarint(uint64(len(batch)))
			for _, p := range batch {
				w.id(p.id)
				w.varint(p.deliveryMs)
				w.varint(p.count)
				w.uvarint(p.owner)
			}
			if err := w.end(); err != nil {
				return err
			}
		}
	}
	return w.writeIdmp(c.idmp)
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// shardCopy is the metadata of one shard.
type shardCopy struct {
	keys             HashKeyRange
	parent, adjacent uint64 // shard number + 1, 0 for none
	state            ShardState
	startSeq, endSeq ID
	created, closed  int64
	sealed           bool
	obj              uint64 // the object of its stream
	sh               *shard
}

// writeSharded writes a sharded stream, copied under its read lock, then
// the streams of its shards, each copied under its own lock.
func (w *snapWriter) writeSharded(ss *ShardedStream) error {
	ss.mu.RLock()
	if ss.log == nil {
		// Removed since the listing: its records, and its shards', up
		// to the removal are in the log after the base; replay skips
		// them.
		var gone []*objLog
		if ss.was != nil {
			gone = append(gone, ss.was)
			for _, sh := range ss.shards {
				sh.s.mu.RLock()
				if sh.s.was != nil {
					gone = append(gone, sh.s.was)
				}
				sh.s.mu.RUnlock()
			}
		}
		ss.mu.RUnlock()
		for _, l := range gone {
			w.begin(snapGone)
			w.uvarint(l.obj)
			w.uvarint(l.lsn)
			if err := w.end(); err != nil {
				return err
			}
		}
		return nil
	}
	obj, lsn, name := ss.log.obj, ss.log.lsn, ss.name
	ret, created, epoch := ss.retention, ss.created, ss.epoch
	type gcopy struct {
		name   string
		strict bool
	}
	var groups []gcopy
	for n, g := range ss.groups {
		groups = append(groups, gcopy{n, g.strict})
	}
	shards := make([]shardCopy, len(ss.shards))
	for i, sh := range ss.shards {
		sh.s.mu.RLock()
		sealed, sobj := sh.sealed, uint64(0)
		if sh.s.log != nil {
			sobj = sh.s.log.obj
		}
		sh.s.mu.RUnlock()
		shards[i] = shardCopy{
			keys: sh.keys, parent: shardRef(sh.parent), adjacent: shardRef(sh.adjacent),
			state: sh.state, startSeq: sh.startSeq, endSeq: sh.endSeq, created: sh.created, closed: sh.closed,
			sealed: sealed, obj: sobj, sh: sh,
		}
	}
	open := make([]uint64, len(ss.open))
	for i, sh := range ss.open {
		open[i] = uint64(sh.num)
	}
	ss.mu.RUnlock()

	w.begin(snapSharded)
	w.uvarint(obj)
	w.str(name)
	w.uvarint(lsn)
	w.varint(ret.Milliseconds())
	w.varint(created)
	w.uvarint(epoch)
	w.uvarint(uint64(len(groups)))
	for _, g := range groups {
		w.str(g.name)
		w.uvarint(b2u(g.strict))
	}
	w.uvarint(uint64(len(shards)))
	for _, sh := range shards {
		w.buf = binary.BigEndian.AppendUint64(w.buf, sh.keys.StartingHashKey.Hi)
		w.buf = binary.BigEndian.AppendUint64(w.buf, sh.keys.StartingHashKey.Lo)
		w.buf = binary.BigEndian.AppendUint64(w.buf, sh.keys.EndingHashKey.Hi)
		w.buf = binary.BigEndian.AppendUint64(w.buf, sh.keys.EndingHashKey.Lo)
		w.uvarint(sh.parent)
		w.uvarint(sh.adjacent)
		w.uvarint(uint64(sh.state))
		w.id(sh.startSeq)
		w.id(sh.endSeq)
		w.varint(sh.created)
		w.varint(sh.closed)
		w.uvarint(b2u(sh.sealed))
		w.uvarint(sh.obj)
	}
	w.uvarint(uint64(len(open)))
	for _, n := range open {
		w.uvarint(n)
	}
	if err := w.end(); err != nil {
		return err
	}
	for i, sc := range shards {
		c := copyStream(sc.sh.s)
		c.shardOf, c.shardNum = obj, i
		sc.sh.s.mu.RLock()
		c.trimmed = sc.sh.trimmed
		sc.sh.s.mu.RUnlock()
		if err := w.writeStream(&c); err != nil {
			return err
		}
	}
	return nil
}

// listing is the objects of a DB at the start of a snapshot.
type listing struct {
	streams []*Stream
	sharded []*ShardedStream
	nextObj uint64
}

// listLocked lists the objects; the caller holds db.mu.
func (db *DB) listLocked() listing {
	var l listing
	db.streams.Walk(func(_ string, v any) bool {
		l.streams = append(l.streams, v.(*Stream))
		return false
	})
	for _, ss := range db.sharded {
		l.sharded = append(l.sharded, ss)
	}
	l.nextObj = db.dur.j.nextObj.Load()
	return l
}

// writeSnapshot writes a snapshot of the listed objects to out, with base
// as its base LSN: every record before base is reflected in the listing,
// which the caller made under db.mu at the moment base was the next LSN.
// With tail (a backup) it also writes the records of the log from base
// (at byte baseOff of the newest segment) to the end of the copy, so that
// the snapshot alone gives the DB as it was at the end.
func (db *DB) writeSnapshot(out io.Writer, objs listing, base uint64, baseOff int64, tail bool) error {
	ww, err := wal.NewWriter(out, wal.KindSnapshot, base)
	if err != nil {
		return err
	}
	w := &snapWriter{w: ww}
	w.begin(snapDB)
	w.uvarint(objs.nextObj)
	if err := w.end(); err != nil {
		return err
	}
	for _, s := range objs.streams {
		c := copyStream(s)
		if c.gone {
			// Removed since the listing: its records up to the
			// removal are in the log after base; replay skips them.
			w.begin(snapGone)
			w.uvarint(c.obj)
			w.uvarint(c.lsn)
			if err := w.end(); err != nil {
				return err
			}
			continue
		}
		if err := w.writeStream(&c); err != nil {
			return err
		}
	}
	for _, ss := range objs.sharded {
		if err := w.writeSharded(ss); err != nil {
			return err
		}
	}
	if tail {
		if err := db.writeLogTail(w, base, baseOff); err != nil {
			return err
		}
	}
	return ww.Close()
}

// writeLogTail writes the log's records from LSN base (at byte baseOff of
// the newest segment) to the last committed one.
func (db *DB) writeLogTail(w *snapWriter, base uint64, baseOff int64) error {
	j := db.dur.j
	end, endOff := j.mark()
	if err := j.flush(false); err != nil {
		return err
	}
	f, err := os.Open(j.segPath())
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(io.NewSectionReader(f, baseOff, endOff-baseOff), 1<<20)
	var hdr [wal.FrameHeaderSize]byte
	var frame []byte
	for lsn := base; lsn < end; lsn++ {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return fmt.Errorf("xstream: reading the log for a backup: %w", err)
		}
		n := binary.LittleEndian.Uint32(hdr[:4])
		frame = append(frame[:0], hdr[:]...)
		frame = append(frame, make([]byte, n)...)
		if _, err := io.ReadFull(r, frame[wal.FrameHeaderSize:]); err != nil {
			return fmt.Errorf("xstream: reading the log for a backup: %w", err)
		}
		payload, _, err := wal.DecodeFrame(frame)
		if err != nil {
			return fmt.Errorf("xstream: reading the log for a backup: record %d: %w", lsn, err)
		}
		w.begin(snapLog)
		w.uvarint(lsn)
		w.buf = append(w.buf, payload...)
		if err := w.end(); err != nil {
			return err
		}
	}
	return nil
}

// Snapshot writes a snapshot of the DB and drops the log behind it, as
// Redis's BGREWRITEAOF does: afterwards the directory holds the snapshot
// and the log of the changes made since it began. Writers wait at most for
// the copy of one stream's blocks (each object is copied under its own
// lock, one at a time); the snapshot is written, synced and switched to
// atomically, so a crash at any moment leaves either the old snapshot and
// log or the new ones. A durable DB also takes one by itself when its log
// grows past WithAutoSnapshot's size. Snapshot on a DB made by NewDB does
// nothing. It returns an error of the file system, or the log's error.
func (db *DB) Snapshot() error {
	d := db.dur
	if d == nil {
		return nil
	}
	d.snapMu.Lock()
	defer d.snapMu.Unlock()
	if err := db.gate.read(); err != nil {
		return err
	}
	d.saving.Store(true)
	defer d.saving.Store(false)
	err := db.snapshotLocked()
	d.saveStatus.Store(err != nil)
	if err == nil {
		d.lastSave.Store(time.Now().Unix())
	}
	return err
}

// snapshotLocked takes a snapshot; the caller holds d.snapMu.
func (db *DB) snapshotLocked() error {
	d := db.dur
	// The new segment is recorded in the manifest before any record is
	// written to it: until the snapshot is done, both logs replay over
	// the old snapshot. The listing and the switch happen under the DB's
	// read lock, so that no stream is created or removed between them.
	// The writer that switches segments records it (onRotate): when the
	// switch fails here (a full disk), the flush that later succeeds
	// does it, and the manifest then names the new segment.
	db.mu.RLock()
	base, empty := d.j.emptySegment()
	var err error
	if !empty {
		base, err = d.j.rotate(func(base uint64) (*wal.Segment, error) {
			return wal.CreateSegmentUnsynced(d.dir, base)
		}, func(base uint64) error {
			d.manMu.Lock()
			defer d.manMu.Unlock()
			next := d.manifest
			next.Logs = append(append([]string(nil), next.Logs...), wal.SegmentName(base))
			if err := wal.WriteManifest(d.dir, next); err != nil {
				return err
			}
			d.manifest = next
			return nil
		})
	}
	var objs listing
	if err == nil {
		objs = db.listLocked()
	}
	db.mu.RUnlock()
	if err != nil {
		return err
	}
	if err := d.j.writeOut(false); err != nil { // finishes the switch
		return err
	}
	name := wal.SnapshotName(base)
	var size int64
	err = wal.WriteFileAtomic(d.dir, name, func(w io.Writer) error {
		cw := &countingWriter{w: w}
		err := db.writeSnapshot(cw, objs, base, 0, false)
		size = cw.n
		return err
	})
	if err != nil {
		return err
	}
	// The snapshot holds each stream as of its copy, which may include
	// changes the log has not written yet; the log up to the end of the
	// copy must be on disk before the snapshot replaces the log before
	// base, or a crash could keep a change and lose an earlier one.
	if err := d.j.flush(true); err != nil {
		return err
	}
	done := wal.Manifest{Snapshot: name, Logs: []string{wal.SegmentName(base)}}
	d.manMu.Lock()
	defer d.manMu.Unlock()
	prev := d.manifest
	if err := wal.WriteManifest(d.dir, done); err != nil {
		return err
	}
	d.manifest = done
	d.snapSize.Store(size)
	// The old snapshot and logs are no longer needed.
	var errs []error
	if prev.Snapshot != "" && prev.Snapshot != name {
		errs = append(errs, os.Remove(filepath.Join(d.dir, prev.Snapshot)))
	}
	for _, l := range prev.Logs {
		if l != done.Logs[0] {
			errs = append(errs, os.Remove(filepath.Join(d.dir, l)))
		}
	}
	return errors.Join(errs...)
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// autoSnapshot starts a snapshot in the background when the log has grown
// past the larger of the configured size and the last snapshot's. The
// journal's background writer runs it each second.
func (db *DB) autoSnapshot() {
	d := db.dur
	min := db.cfg.autoSnapshot
	if min < 0 || d.saving.Load() || d.j.logSize.Load() <= max(min, d.snapSize.Load()) {
		return
	}
	db.SnapshotInBackground()
}

// SnapshotInBackground starts Snapshot in a goroutine and returns at once
// (Redis's BGSAVE); false when one is already running, the DB is closing
// or it is not durable. Close waits for it.
func (db *DB) SnapshotInBackground() bool {
	d := db.dur
	if d == nil || !d.saving.CompareAndSwap(false, true) {
		return false
	}
	started := d.background(func() {
		d.saving.Store(false) // Snapshot sets it again while it runs
		db.Snapshot()
	})
	if !started {
		d.saving.Store(false)
	}
	return started
}
