package xstream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
	"unsafe"

	"github.com/xstreamgo/xstream/internal/wal"
)

// Replay: how Open rebuilds a DB from its snapshot and log.
//
// The snapshot holds each object as it was when the snapshot copied it,
// with the LSN of its last record then; the log segments listed after it
// hold every record from the snapshot's base LSN on. A record applies to
// its object only if it is newer than the object's copy: so a record
// written while the snapshot was being taken applies exactly once, whether
// the copy was made before or after it. Effects are applied through the
// operations of ops.go, groupops.go and shardops.go, with no log attached,
// after checks that make a record that does not fit the state an
// ErrCorrupt error instead of a wrong state or a panic.

// robj is an object of the DB being rebuilt.
type robj struct {
	s    *Stream        // a stream, or the stream of a shard
	ss   *ShardedStream // a sharded stream
	sh   *shard         // the shard whose stream s is
	lsn  uint64         // the object's last record (in the snapshot or replayed)
	snap uint64         // records up to this LSN are in the snapshot
	dead bool           // removed from the DB
}

// replayer rebuilds a DB.
type replayer struct {
	db      *DB
	objs    map[uint64]*robj
	base    uint64 // records before this LSN are all in the snapshot
	maxObj  uint64
	where   string // the file being read, for errors
	lsn     uint64 // the record being applied
	lastLSN uint64 // the last record applied
	fields  []Field
}

func newReplayer(db *DB) *replayer {
	return &replayer{db: db, objs: map[uint64]*robj{}}
}

// corrupt returns an ErrCorrupt error about the record being applied.
func (r *replayer) corrupt(format string, args ...any) error {
	return fmt.Errorf("xstream: %w: %s: record %d: %s", ErrCorrupt, r.where, r.lsn, fmt.Sprintf(format, args...))
}

// recover loads the snapshot and replays the logs that m names, cutting
// a torn tail off the last one, and returns the segment to go on writing
// in, the LSN of the next record and the bytes of log since the snapshot.
// With truncate it keeps the records before a corrupt one (see
// WithTruncateCorrupt), updating m. It records in r.db.dur.cuts what it
// drops (logcut.go).
func (r *replayer) recover(dir string, m *wal.Manifest, truncate bool) (*wal.Segment, uint64, int64, error) {
	if len(m.Logs) == 0 {
		return nil, 0, 0, errorf(ErrNotDB, "%s: the manifest lists no log", dir)
	}
	if m.Snapshot != "" {
		if err := r.loadSnapshotFile(filepath.Join(dir, m.Snapshot)); err != nil {
			return nil, 0, 0, err
		}
	}
	var logSize int64
	var next uint64
	for i, name := range m.Logs {
		path := filepath.Join(dir, name)
		base, ok := wal.ParseSegmentName(name)
		if !ok {
			return nil, 0, 0, errorf(ErrNotDB, "%s: %q is not a log segment name", dir, name)
		}
		if i > 0 && base != next {
			return nil, 0, 0, errorf(ErrCorrupt, "%s starts at record %d, but the log before it ends at %d", path, base, next)
		}
		r.where, r.lsn = path, base
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, 0, 0, wrapped{ErrCorrupt, fmt.Errorf("xstream: the manifest names the log %s, which is missing: %w", path, err)}
		}
		res, err := wal.ScanSegment(path, func(payload []byte) error {
			err := r.apply(payload)
			r.lsn++
			return err
		})
		last := i == len(m.Logs)-1
		if err == nil && res.Header.Base != base {
			err = errorf(ErrNotDB, "%s: its header says it starts at record %d", path, res.Header.Base)
		}
		if err == nil && res.Tail == wal.TailTorn && !last {
			err = errorf(ErrCorrupt, "%s is cut short at offset %d, yet a log follows it", path, res.End)
		}
		if (errors.Is(err, wal.ErrCorrupt) || errors.Is(err, ErrCorrupt)) && truncate && (res.Tail == wal.TailCorrupt || res.Tail == wal.TailTorn) {
			if err = moveTailAside(path, cutFrom(res)); err == nil {
				r.cutTail(path, cutFrom(res), res, path+".corrupt")
				for _, later := range m.Logs[i+1:] {
					from := filepath.Join(dir, later)
					if err = r.cutSegment(from, from+".corrupt"); err != nil {
						break
					}
					if err = os.Rename(from, from+".corrupt"); err != nil {
						break
					}
				}
				m.Logs = m.Logs[:i+1]
				if err == nil {
					err = wal.WriteManifest(dir, *m)
				}
				res.Tail, res.Cut, last = wal.TailTorn, 0, true
			}
		}
		if err != nil {
			return nil, 0, 0, mapWalErr(err)
		}
		next = base + uint64(res.Records)
		logSize += res.End - wal.HeaderSize
		if last {
			if res.Tail == wal.TailTorn && res.Cut > 0 {
				r.cutTail(path, cutFrom(res), res, "")
			}
			seg, err := wal.OpenSegmentForAppend(path, res.End)
			if err != nil {
				return nil, 0, 0, mapWalErr(err)
			}
			return seg, next, logSize, nil
		}
	}
	panic("unreachable")
}

// moveTailAside copies the bytes of path from off on to path.corrupt and
// cuts path at off (OpenSegmentForAppend cuts it).
func moveTailAside(path string, off int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	out, err := os.OpenFile(path+".corrupt", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.NewSectionReader(f, off, 1<<62)); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// attach gives every object of the rebuilt DB its log.
func (r *replayer) attach(j *journal) {
	for obj, o := range r.objs {
		if o.dead {
			continue
		}
		l := &objLog{j: j, obj: obj, lsn: o.lsn}
		switch {
		case o.ss != nil:
			o.ss.log = l
		case o.s != nil:
			l.deferred = o.sh != nil
			o.s.log = l
		}
	}
	j.nextObj.Store(r.maxObj + 1)
	for _, ss := range r.db.sharded {
		ss.publishLocked()
	}
}

// register adds an object.
func (r *replayer) register(obj uint64, o *robj) error {
	if obj == 0 {
		return r.corrupt("object number 0")
	}
	if _, ok := r.objs[obj]; ok {
		return r.corrupt("object %d made twice", obj)
	}
	r.objs[obj] = o
	r.maxObj = max(r.maxObj, obj)
	return nil
}

// decoder reads the values of a record; the first failure sticks, and
// every read after it returns zero values.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = errors.New(what)
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail("record ends inside an effect")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// bytes returns the next string's bytes, aliasing the record.
func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("string past the end of the record")
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string { return string(d.bytes()) }

// alias returns the next string aliasing the record, for values that are
// copied before the record goes (the fields of an added entry).
func (d *decoder) alias() string {
	b := d.bytes()
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func (d *decoder) id() ID { return ID{d.uvarint(), d.uvarint()} }

// idAfter decodes an ID written by objLog.idDelta against base.
func (d *decoder) idAfter(base ID) (ID, bool) {
	msd, seq := d.uvarint(), d.uvarint()
	if msd == 0 {
		if seq > ^base.Seq {
			return ID{}, false
		}
		return ID{base.Ms, base.Seq + seq}, true
	}
	if msd > ^base.Ms {
		return ID{}, false
	}
	return ID{base.Ms + msd, seq}, true
}

func (d *decoder) hashKey() HashKey {
	if len(d.b) < 16 {
		d.fail("record ends inside a hash key")
		return HashKey{}
	}
	h := HashKey{binary.BigEndian.Uint64(d.b), binary.BigEndian.Uint64(d.b[8:])}
	d.b = d.b[16:]
	return h
}

// apply applies one record of the log.
func (r *replayer) apply(payload []byte) error {
	d := &decoder{b: payload}
	obj := d.uvarint()
	if d.err != nil {
		return r.corrupt("%v", d.err)
	}
	if r.lsn < r.base {
		return nil // in the snapshot, whatever it is about
	}
	o := r.objs[obj]
	switch {
	case o == nil:
		// A new object: its first effect makes it.
		if len(d.b) == 0 {
			return r.corrupt("empty record")
		}
		var err error
		switch kind := d.b[0]; kind {
		case effCreateStream:
			d.byte()
			o, err = r.createStream(obj, d.str())
		case effCreateSharded:
			d.byte()
			o, err = r.createSharded(obj, d)
		default:
			return r.corrupt("effect %d on object %d, which does not exist", kind, obj)
		}
		if err != nil {
			return err
		}
	case r.lsn <= o.snap:
		return nil // the snapshot's copy of the object has it already
	case o.dead:
		return r.corrupt("object %d was removed", obj)
	}
	o.lsn, r.lastLSN = r.lsn, r.lsn
	var err error
	if o.ss != nil {
		err = r.applySharded(o, d)
	} else {
		err = r.applyStream(o, d)
	}
	if err == nil && d.err != nil {
		err = r.corrupt("%v", d.err)
	}
	return err
}

func (r *replayer) createStream(obj uint64, name string) (*robj, error) {
	if _, ok := r.db.streams.Get(name); ok {
		return nil, r.corrupt("stream %q made twice", name)
	}
	s := newStream(name, r.db.cfg)
	s.db = r.db
	r.db.insertLocked(s)
	o := &robj{s: s}
	return o, r.register(obj, o)
}

// streamState is the current group, consumer and time of a record.
type streamState struct {
	g *group
	c *consumer
	t int64
}

// applyStream applies the effects of a record about a stream.
func (r *replayer) applyStream(o *robj, d *decoder) error {
	s := o.s
	var st streamState
	for len(d.b) > 0 && d.err == nil {
		if err := r.streamEffect(o, s, d, &st); err != nil {
			return err
		}
	}
	return nil
}

func (r *replayer) streamEffect(o *robj, s *Stream, d *decoder, st *streamState) error {
	kind := d.byte()
	needGroup := func() error {
		if st.g == nil {
			return r.corrupt("effect %d with no group", kind)
		}
		return nil
	}
	needConsumer := func() error {
		if st.c == nil {
			return r.corrupt("effect %d with no consumer", kind)
		}
		return nil
	}
	switch kind {
	case effRemove:
		if v, ok := r.db.streams.Get(s.Name()); !ok || v.(*Stream) != s || o.sh != nil {
			return r.corrupt("removal of stream %q, which is not in the DB", s.Name())
		}
		r.db.streams.Delete(s.Name())
		r.db.dropExpiryLocked(s)
		o.dead = true
		if len(d.b) > 0 {
			return r.corrupt("effects after a removal")
		}
	case effExpire:
		ms := d.varint()
		if ms < 0 {
			return r.corrupt("stream %q expires at %d", s.Name(), ms)
		}
		r.db.setExpiryLocked(s, ms)
	case effRename:
		name := d.str()
		if v, ok := r.db.streams.Get(s.Name()); !ok || v.(*Stream) != s || o.sh != nil {
			return r.corrupt("rename of stream %q, which is not in the DB", s.Name())
		}
		if _, ok := r.db.streams.Get(name); ok {
			return r.corrupt("rename of stream %q to %q, which exists", s.Name(), name)
		}
		r.db.streams.Delete(s.Name())
		s.name.Store(&name)
		r.db.insertLocked(s)
	case effAppend:
		last := ID(s.st.LastID())
		id, ok := d.idAfter(last)
		if !ok || !last.Less(id) {
			return r.corrupt("added entry's ID does not follow the last ID %s", last)
		}
		k := d.uvarint()
		r.fields = r.fields[:0]
		if k == 0 {
			names := s.st.OpenNames()
			if names == nil {
				return r.corrupt("entry %s has the open block's names, but no block is open", id)
			}
			for _, n := range names {
				r.fields = append(r.fields, Field{n, d.alias()})
			}
		} else {
			if k > uint64(len(d.b))/2 {
				return r.corrupt("entry %s claims %d fields", id, k)
			}
			for range k {
				r.fields = append(r.fields, Field{d.alias(), d.alias()})
			}
		}
		if d.err != nil {
			return r.corrupt("entry %s: %v", id, d.err)
		}
		s.appendLocked(id, r.fields)
	case effTrimTo:
		s.trimToLocked(d.id())
	case effTrimEntry:
		id := d.id()
		if !s.st.Has(sid(id)) {
			return r.corrupt("trim of entry %s, which is not in the stream", id)
		}
		s.trimEntryLocked(id, false)
	case effDelete:
		id := d.id()
		if !s.deleteEntryLocked(id) {
			return r.corrupt("deletion of entry %s, which is not in the stream", id)
		}
	case effSetLast:
		last, added, maxDel := d.id(), d.varint(), d.id()
		if top, ok := s.st.TopID(); ok && last.Less(ID(top)) || added < -1 || added >= 0 && added < s.st.Len() {
			return r.corrupt("last ID %s, entries added %d do not fit the stream", last, added)
		}
		s.setLastLocked(last, added, maxDel)
	case effGroup:
		name := d.str()
		g, err := s.groupLocked(name)
		if err != nil {
			return r.corrupt("no group %q", name)
		}
		st.g, st.c = g, nil
	case effGroupCreate:
		name, last, read := d.str(), d.id(), d.varint()
		if _, err := s.groupLocked(name); err == nil {
			return r.corrupt("group %q made twice", name)
		}
		if read < entriesReadUnknown {
			return r.corrupt("group %q: entries read %d", name, read)
		}
		st.g, st.c = s.createGroupLocked(name, last, read), nil
	case effGroupDestroy:
		if err := needGroup(); err != nil {
			return err
		}
		s.destroyGroupLocked(st.g)
		st.g, st.c = nil, nil
	case effGroupSetLast:
		if err := needGroup(); err != nil {
			return err
		}
		s.setGroupLastLocked(st.g, d.id(), d.varint())
	case effConsumer, effConsumerCreate:
		if err := needGroup(); err != nil {
			return err
		}
		name := d.str()
		c, created := s.consumerLocked(st.g, name)
		if created != (kind == effConsumerCreate) {
			return r.corrupt("consumer %q of group %q: created %v", name, st.g.name, created)
		}
		st.c = c
	case effConsumerSee, effConsumerActive:
		if err := needConsumer(); err != nil {
			return err
		}
		if ms := d.varint(); kind == effConsumerSee {
			s.seeConsumerLocked(st.g, st.c, ms)
		} else {
			s.activateConsumerLocked(st.g, st.c, ms)
		}
	case effConsumerDelete:
		if err := needConsumer(); err != nil {
			return err
		}
		s.deleteConsumerLocked(st.g, st.c)
		st.c = nil
	case effTime:
		st.t = d.varint()
	case effDeliver, effDeliverNoAck:
		if err := needGroup(); err != nil {
			return err
		}
		c := st.c
		if kind == effDeliverNoAck {
			c = nil
		} else if err := needConsumer(); err != nil {
			return err
		}
		id, ok := d.idAfter(st.g.lastID)
		if !ok || !st.g.lastID.Less(id) {
			return r.corrupt("delivery that does not follow group %q's last ID %s", st.g.name, st.g.lastID)
		}
		s.deliverLocked(st.g, c, id, st.g.entriesRead+d.varint(), st.t)
	case effRedeliver:
		if err := needGroup(); err != nil {
			return err
		}
		id, count := d.id(), d.varint()
		if _, ok := st.g.pendingLocked(id); !ok {
			return r.corrupt("redelivery of %s, which is not pending", id)
		}
		s.redeliverLocked(st.g, id, st.t)
		if rec, _ := st.g.pendingLocked(id); rec.count != count {
			return r.corrupt("redelivery of %s: count %d, the log says %d", id, rec.count, count)
		}
	case effClaim:
		if err := needConsumer(); err != nil {
			return err
		}
		s.claimLocked(st.g, d.id(), st.c, d.varint(), d.varint())
	case effGiveBack:
		if err := needGroup(); err != nil {
			return err
		}
		s.giveBackLocked(st.g, d.id(), d.varint())
	case effAck:
		if err := needGroup(); err != nil {
			return err
		}
		if id := d.id(); !s.ackLocked(st.g, id) {
			return r.corrupt("ack of %s, which is not pending in group %q", id, st.g.name)
		}
	case effGroupPolicy:
		if err := needGroup(); err != nil {
			return err
		}
		p := DeadLetterPolicy{MaxDeliveries: d.varint(), Stream: d.str()}
		if p != (DeadLetterPolicy{}) && p.check() != nil {
			return r.corrupt("group %q: dead-letter policy %+v", st.g.name, p)
		}
		s.setDeadLetterPolicyLocked(st.g, p)
	case effDeadLetter:
		if err := needGroup(); err != nil {
			return err
		}
		if id := d.id(); !s.deadLetterLocked(st.g, id) {
			return r.corrupt("dead letter %s, which is not pending in group %q", id, st.g.name)
		}
	case effIdempotence:
		return r.idmpEffect(s, d)
	case effShardTrimmed:
		if o.sh == nil {
			return r.corrupt("retention effect on stream %q, which is not a shard's", s.Name())
		}
		o.sh.setTrimmedLocked(d.id())
	default:
		return r.corrupt("unknown effect %d on stream %q", kind, s.Name())
	}
	return nil
}

// createSharded makes the sharded stream of an effCreateSharded effect.
func (r *replayer) createSharded(obj uint64, d *decoder) (*robj, error) {
	name, ret, created := d.str(), d.varint(), d.varint()
	if d.err != nil {
		return nil, r.corrupt("%v", d.err)
	}
	if _, ok := r.db.sharded[name]; ok {
		return nil, r.corrupt("sharded stream %q made twice", name)
	}
	if ret <= 0 {
		return nil, r.corrupt("sharded stream %q: retention %d ms", name, ret)
	}
	ss := newShardedStream(r.db.cfg, time.Duration(ret)*time.Millisecond, created)
	ss.name = name
	r.db.sharded[name] = ss
	o := &robj{ss: ss}
	return o, r.register(obj, o)
}

// applySharded applies the effects of a record about a sharded stream.
func (r *replayer) applySharded(o *robj, d *decoder) error {
	ss := o.ss
	shardAt := func(n uint64) (*shard, error) {
		if n >= uint64(len(ss.shards)) {
			return nil, r.corrupt("sharded stream %q has no shard %d", ss.name, n)
		}
		return ss.shards[n], nil
	}
	for len(d.b) > 0 && d.err == nil {
		switch kind := d.byte(); kind {
		case effRemove:
			if r.db.sharded[ss.name] != ss {
				return r.corrupt("removal of sharded stream %q, which is not in the DB", ss.name)
			}
			delete(r.db.sharded, ss.name)
			o.dead = true
		case effShardCreate:
			obj, start, end := d.uvarint(), d.hashKey(), d.hashKey()
			pref, aref, created, at := d.uvarint(), d.uvarint(), d.varint(), d.uvarint()
			if d.err != nil {
				break
			}
			var parents [2]*shard
			for i, ref := range []uint64{pref, aref} {
				if ref == 0 {
					continue
				}
				p, err := shardAt(ref - 1)
				if err != nil {
					return err
				}
				if p.state == ShardOpen {
					return r.corrupt("shard %d's parent %s is open", len(ss.shards), p.id)
				}
				parents[i] = p
			}
			if at > uint64(len(ss.open)) || end.Less(start) {
				return r.corrupt("shard %d: range %s..%s at %d", len(ss.shards), start, end, at)
			}
			sh := ss.createShardLocked(HashKeyRange{start, end}, parents[0], parents[1], created, int(at))
			if err := r.register(obj, &robj{s: sh.s, sh: sh}); err != nil {
				return err
			}
		case effShardClose:
			sh, err := shardAt(d.uvarint())
			if err != nil {
				return err
			}
			end, closed := d.id(), d.varint()
			if sh.state != ShardOpen {
				return r.corrupt("close of shard %s, which is not open", sh.id)
			}
			ss.closeShardLocked(sh, closed)
			if sh.endSeq != end {
				return r.corrupt("shard %s ends at %s, the log says %s", sh.id, sh.endSeq, end)
			}
		case effShardsExpire:
			n := d.uvarint()
			if n > uint64(len(d.b)) {
				return r.corrupt("expiry of %d shards", n)
			}
			var exp []*shard
			for range n {
				sh, err := shardAt(d.uvarint())
				if err != nil {
					return err
				}
				if sh.state != ShardClosed {
					return r.corrupt("expiry of shard %s, which is not closed", sh.id)
				}
				exp = append(exp, sh)
			}
			ss.expireShardsLocked(exp)
		case effResharded:
			ss.reshardedLocked()
		case effRetention:
			ms := d.varint()
			if ms <= 0 {
				return r.corrupt("retention %d ms", ms)
			}
			ss.setRetentionLocked(time.Duration(ms) * time.Millisecond)
		case effShardedGroup:
			name, strict := d.str(), d.uvarint()
			if _, ok := ss.groups[name]; ok || strict > 1 {
				return r.corrupt("group %q of sharded stream %q", name, ss.name)
			}
			ss.createGroupLocked(name, strict == 1)
		default:
			return r.corrupt("unknown effect %d on sharded stream %q", kind, ss.name)
		}
	}
	return nil
}
