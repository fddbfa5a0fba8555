package xstream

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/xstreamgo/xstream/internal/store"
	"github.com/xstreamgo/xstream/internal/wal"
)

// Loading a snapshot (see snapshot.go for its records). Every record is
// checked as it is read: a snapshot that does not hold together is an
// ErrCorrupt error, never a panic or a wrong entry.

// loading is the stream whose records are being read.
type loading struct {
	o       *robj
	st      store.State
	blocks  []*store.Block
	nblocks uint64 // block records the stream said it has
	nread   uint64 // block records read
	groups  uint64 // groups still to read
	g       *group
	cons    []*consumer // the group's consumers, in snapshot order
	ncons   uint64      // consumers still to read
	npend   uint64      // pending entries still to read

	idmpProducers uint64 // idempotent producers still to read
}

// loadSnapshotFile loads the snapshot at path.
func (r *replayer) loadSnapshotFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return wrapped{ErrCorrupt, fmt.Errorf("xstream: the manifest names the snapshot %s, which is missing: %w", path, err)}
	}
	if err != nil {
		return err
	}
	defer f.Close()
	r.where = path
	err = r.loadSnapshot(bufio.NewReaderSize(f, 1<<20))
	if err != nil && !strings.Contains(err.Error(), path) {
		err = wrapped{err, fmt.Errorf("%w (in %s)", err, path)}
	}
	return err
}

// loadSnapshot loads a snapshot and the log records it holds (a backup's).
func (r *replayer) loadSnapshot(in io.Reader) error {
	rd, err := wal.NewReader(in, wal.KindSnapshot)
	if err != nil {
		return mapWalErr(err)
	}
	r.base = rd.Header().Base
	var cur *loading
	for {
		p, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return mapWalErr(err)
		}
		if len(p) == 0 {
			return r.corrupt("empty snapshot record")
		}
		d := &decoder{b: p[1:]}
		kind := p[0]
		if cur != nil && kind != snapBlock && kind != snapBlockV2 && kind != snapGroup && kind != snapGroupPolicy && kind != snapConsumer && kind != snapPending && kind != snapIdempotence && kind != snapIdmpProducer && kind != snapExpire {
			if err := r.finish(cur); err != nil {
				return err
			}
			cur = nil
		}
		switch kind {
		case snapDB:
			if n := d.uvarint(); n > 0 {
				r.maxObj = max(r.maxObj, n-1)
			}
		case snapStream:
			if cur, err = r.loadStream(d); err != nil {
				return err
			}
		case snapBlock, snapBlockV2, snapGroup, snapGroupPolicy, snapConsumer, snapPending, snapIdempotence, snapIdmpProducer, snapExpire:
			if cur == nil {
				return r.corrupt("snapshot record %d outside a stream", kind)
			}
			if err := r.loadPart(cur, kind, d); err != nil {
				return err
			}
		case snapGone:
			obj, lsn := d.uvarint(), d.uvarint()
			if d.err == nil {
				if err := r.register(obj, &robj{dead: true, snap: lsn, lsn: lsn}); err != nil {
					return err
				}
			}
		case snapSharded:
			if err := r.loadSharded(d); err != nil {
				return err
			}
		case snapLog:
			r.lsn = d.uvarint()
			if d.err == nil {
				if err := r.apply(d.b); err != nil {
					return err
				}
				d.b = nil
			}
		default:
			return r.corrupt("unknown snapshot record %d", kind)
		}
		if d.err != nil {
			return r.corrupt("snapshot record %d: %v", kind, d.err)
		}
		if kind != snapLog && len(d.b) != 0 {
			return r.corrupt("snapshot record %d: %d bytes too many", kind, len(d.b))
		}
	}
	if cur != nil {
		if err := r.finish(cur); err != nil {
			return err
		}
	}
	return r.checkShardStreams()
}

// checkShardStreams checks that every shard of every sharded stream got
// its stream: one left out would lose its records.
func (r *replayer) checkShardStreams() error {
	have := map[*Stream]bool{}
	for _, o := range r.objs {
		if o.s != nil {
			have[o.s] = true
		}
	}
	for name, ss := range r.db.sharded {
		for _, sh := range ss.shards {
			if !have[sh.s] {
				return r.corrupt("sharded stream %q: no stream for shard %s", name, sh.id)
			}
			if sh.state == ShardExpired {
				continue
			}
			for g := range ss.groups {
				sh.s.mu.RLock()
				_, err := sh.s.groupLocked(g)
				sh.s.mu.RUnlock()
				if err != nil {
					return r.corrupt("sharded stream %q: shard %s lacks group %q", name, sh.id, g)
				}
			}
		}
	}
	return nil
}

// loadStream starts a stream of the snapshot.
func (r *replayer) loadStream(d *decoder) (*loading, error) {
	obj, name, lsn := d.uvarint(), d.str(), d.uvarint()
	o := &robj{snap: lsn, lsn: lsn}
	switch kind := d.uvarint(); kind {
	case 0:
		if _, ok := r.db.streams.Get(name); ok {
			return nil, r.corrupt("stream %q twice in the snapshot", name)
		}
		o.s = newStream(name, r.db.cfg)
		o.s.db = r.db
		r.db.insertLocked(o.s)
	case 1:
		ssObj, num, trimmed := d.uvarint(), d.uvarint(), d.id()
		so := r.objs[ssObj]
		if so == nil || so.ss == nil || num >= uint64(len(so.ss.shards)) {
			return nil, r.corrupt("stream %q of a shard of unknown sharded stream %d", name, ssObj)
		}
		o.sh = so.ss.shards[num]
		o.s = o.sh.s
		if o.s.Name() != name {
			return nil, r.corrupt("shard stream %q for shard %s", name, o.s.Name())
		}
		o.sh.trimmed = trimmed
	default:
		return nil, r.corrupt("stream %q of unknown kind %d", name, kind)
	}
	c := &loading{o: o}
	c.st.LastID, c.st.FirstID, c.st.MaxDeleted = sid(d.id()), sid(d.id()), sid(d.id())
	c.st.EntriesAdded = d.varint()
	c.st.Open = d.uvarint() == 1
	c.nblocks, c.groups = d.uvarint(), d.uvarint()
	if d.err != nil {
		return nil, r.corrupt("stream %q: %v", name, d.err)
	}
	return c, r.register(obj, o)
}

// loadPart reads a block, group, consumer or pending record of c.
func (r *replayer) loadPart(c *loading, kind byte, d *decoder) error {
	s := c.o.s
	if kind == snapIdempotence || kind == snapIdmpProducer {
		if err := r.endGroup(c); err != nil {
			return err
		}
		if c.groups != 0 || c.nread != c.nblocks {
			return r.corrupt("stream %q: idempotence state before its blocks and groups", s.Name())
		}
		return r.loadIdmp(c, kind, d)
	}
	switch kind {
	case snapExpire:
		ms := d.varint()
		if c.nread > 0 || c.g != nil || c.o.sh != nil || s.expireMs != 0 || ms <= 0 {
			return r.corrupt("stream %q: an expiry out of place", s.Name())
		}
		r.db.setExpiryLocked(s, ms)
	case snapBlock, snapBlockV2:
		if c.nread >= c.nblocks || c.g != nil {
			return r.corrupt("stream %q: a block out of place", s.Name())
		}
		c.nread++
		var rb store.RawBlock
		hdr, nmast, live := d.uvarint(), d.uvarint(), d.uvarint()
		rb.Last = sid(d.id())
		n := d.uvarint()
		if d.err != nil || hdr > 1<<31 || nmast > 1<<31 || live > n || n > uint64(len(d.b))/4 {
			return r.corrupt("stream %q: bad block header", s.Name())
		}
		rb.Hdr, rb.Nmast, rb.Live = int32(hdr), int32(nmast), int32(live)
		rb.Offs = make([]uint32, n)
		for i := range rb.Offs {
			rb.Offs[i] = binary.LittleEndian.Uint32(d.b[4*i:])
		}
		rb.Data = append([]byte(nil), d.b[4*n:]...)
		d.b = nil
		if kind == snapBlock { // the first block format: made anew
			bs, err := store.FromRawV1(rb)
			if err != nil {
				return r.corrupt("stream %q, block %d: %v", s.Name(), c.nread-1, err)
			}
			c.blocks = append(c.blocks, bs...)
			break
		}
		b, err := store.FromRaw(rb)
		if err != nil {
			return r.corrupt("stream %q, block %d: %v", s.Name(), c.nread-1, err)
		}
		c.blocks = append(c.blocks, b)
	case snapGroup:
		if err := r.endGroup(c); err != nil {
			return err
		}
		if c.nread != c.nblocks {
			return r.corrupt("stream %q: %d blocks, it said %d", s.Name(), c.nread, c.nblocks)
		}
		if c.groups == 0 {
			return r.corrupt("stream %q: more groups than it said", s.Name())
		}
		c.groups--
		name, last, read := d.str(), d.id(), d.varint()
		c.ncons, c.npend = d.uvarint(), d.uvarint()
		if _, err := s.groupLocked(name); err == nil || read < entriesReadUnknown {
			return r.corrupt("stream %q: group %q", s.Name(), name)
		}
		c.g, c.cons = s.createGroupLocked(name, last, read), nil
	case snapGroupPolicy:
		if c.g == nil || len(c.cons) != 0 || c.g.dead != (DeadLetterPolicy{}) || c.g.deadLettered != 0 {
			return r.corrupt("stream %q: a dead-letter policy out of place", s.Name())
		}
		p := DeadLetterPolicy{MaxDeliveries: d.varint(), Stream: d.str()}
		n := d.varint()
		if p != (DeadLetterPolicy{}) && p.check() != nil || n < 0 {
			return r.corrupt("stream %q, group %q: dead-letter policy %+v, %d moved", s.Name(), c.g.name, p, n)
		}
		if p != (DeadLetterPolicy{}) {
			s.setDeadLetterPolicyLocked(c.g, p)
		}
		s.loadDeadLetteredLocked(c.g, n)
	case snapConsumer:
		if c.g == nil || c.ncons == 0 {
			return r.corrupt("stream %q: a consumer out of place", s.Name())
		}
		c.ncons--
		name, seen, active := d.str(), d.varint(), d.varint()
		cn, created := s.consumerLocked(c.g, name)
		if !created {
			return r.corrupt("stream %q, group %q: consumer %q twice", s.Name(), c.g.name, name)
		}
		s.seeConsumerLocked(c.g, cn, seen)
		s.activateConsumerLocked(c.g, cn, active)
		c.cons = append(c.cons, cn)
	case snapPending:
		if c.g == nil || c.ncons != 0 {
			return r.corrupt("stream %q: pending entries out of place", s.Name())
		}
		n := d.uvarint()
		if n > c.npend || n > uint64(len(d.b)) {
			return r.corrupt("stream %q, group %q: %d pending entries", s.Name(), c.g.name, n)
		}
		c.npend -= n
		for range n {
			id, ms, count, owner := d.id(), d.varint(), d.varint(), d.uvarint()
			if d.err != nil || owner > uint64(len(c.cons)) {
				return r.corrupt("stream %q, group %q: bad pending entry", s.Name(), c.g.name)
			}
			if _, dup := c.g.pendingLocked(id); dup {
				return r.corrupt("stream %q, group %q: %s pending twice", s.Name(), c.g.name, id)
			}
			if owner == 0 {
				s.giveBackLocked(c.g, id, count)
			} else {
				s.claimLocked(c.g, id, c.cons[owner-1], ms, count)
			}
		}
	}
	return nil
}

// restoreBlocks gives the stream its blocks, once all are read.
func (r *replayer) restoreBlocks(c *loading) error {
	if c.nread != c.nblocks {
		return r.corrupt("stream %q: %d blocks, it said %d", c.o.s.Name(), c.nread, c.nblocks)
	}
	if err := c.o.s.st.Restore(c.blocks, c.st); err != nil {
		return r.corrupt("stream %q: %v", c.o.s.Name(), err)
	}
	c.blocks = nil
	return nil
}

// endGroup checks that the group being read is complete.
func (r *replayer) endGroup(c *loading) error {
	if c.g != nil && (c.ncons != 0 || c.npend != 0) {
		return r.corrupt("stream %q, group %q: consumers or pending entries missing", c.o.s.Name(), c.g.name)
	}
	c.g = nil
	return nil
}

// finish ends the stream being read.
func (r *replayer) finish(c *loading) error {
	if err := r.endGroup(c); err != nil {
		return err
	}
	if err := r.restoreBlocks(c); err != nil {
		return err
	}
	if c.groups != 0 || c.idmpProducers != 0 {
		return r.corrupt("stream %q: %d groups, %d idempotent producers missing", c.o.s.Name(), c.groups, c.idmpProducers)
	}
	return nil
}

// loadSharded reads a sharded stream and makes its shards, whose streams
// follow.
func (r *replayer) loadSharded(d *decoder) error {
	obj, name, lsn := d.uvarint(), d.str(), d.uvarint()
	ret, created, epoch := d.varint(), d.varint(), d.uvarint()
	if d.err != nil || ret <= 0 {
		return r.corrupt("sharded stream %q: bad header", name)
	}
	if _, ok := r.db.sharded[name]; ok {
		return r.corrupt("sharded stream %q twice in the snapshot", name)
	}
	ss := newShardedStream(r.db.cfg, time.Duration(ret)*time.Millisecond, created)
	ss.name, ss.epoch = name, epoch
	ng := d.uvarint()
	if ng > uint64(len(d.b)) {
		return r.corrupt("sharded stream %q: %d groups", name, ng)
	}
	for range ng {
		g, strict := d.str(), d.uvarint()
		if _, dup := ss.groups[g]; dup || strict > 1 {
			return r.corrupt("sharded stream %q: group %q", name, g)
		}
		ss.createGroupLocked(g, strict == 1)
	}
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		return r.corrupt("sharded stream %q: %d shards", name, n)
	}
	for i := range n {
		var sh shard
		sh.num, sh.id = int(i), shardID(int(i))
		sh.keys = HashKeyRange{d.hashKey(), d.hashKey()}
		pref, aref, state := d.uvarint(), d.uvarint(), d.uvarint()
		sh.startSeq, sh.endSeq = d.id(), d.id()
		sh.created, sh.closed = d.varint(), d.varint()
		sh.sealed = d.uvarint() == 1
		sobj := d.uvarint()
		if d.err != nil || pref > i || aref > i || state > uint64(ShardExpired) || sh.keys.EndingHashKey.Less(sh.keys.StartingHashKey) {
			return r.corrupt("sharded stream %q: bad shard %d", name, i)
		}
		sh.state = ShardState(state)
		for _, ref := range []uint64{pref, aref} {
			if ref == 0 {
				continue
			}
			p := ss.shards[ref-1]
			if p.state == ShardOpen {
				return r.corrupt("sharded stream %q: shard %d's parent %s is open", name, i, p.id)
			}
			if ref == pref {
				sh.parent = p
			} else {
				sh.adjacent = p
			}
		}
		sh.s = newStream(sh.id, r.db.cfg)
		p := &sh
		for _, par := range []*shard{p.parent, p.adjacent} {
			if par != nil {
				par.children = append(par.children, p)
			}
		}
		ss.shards = append(ss.shards, p)
		if p.state != ShardExpired {
			ss.live = append(ss.live, p)
		}
		_ = sobj // registered when its stream is read
	}
	no := d.uvarint()
	if no > uint64(len(ss.shards)) {
		return r.corrupt("sharded stream %q: %d open shards", name, no)
	}
	for range no {
		k := d.uvarint()
		if k >= uint64(len(ss.shards)) || ss.shards[k].state != ShardOpen {
			return r.corrupt("sharded stream %q: open shard %d", name, k)
		}
		ss.open = append(ss.open, ss.shards[k])
	}
	if d.err != nil {
		return r.corrupt("sharded stream %q: %v", name, d.err)
	}
	if err := checkOpenShards(ss); err != nil {
		return r.corrupt("sharded stream %q: %v", name, err)
	}
	r.db.sharded[name] = ss
	return r.register(obj, &robj{ss: ss, snap: lsn, lsn: lsn})
}

// checkOpenShards checks that the OPEN shards cover the hash key space,
// in order, without gaps or overlaps.
func checkOpenShards(ss *ShardedStream) error {
	if len(ss.open) == 0 {
		return errors.New("no open shard")
	}
	next := HashKey{}
	for i, sh := range ss.open {
		if sh.keys.StartingHashKey != next {
			return errors.New("open shards do not cover the hash keys in order")
		}
		if i < len(ss.open)-1 {
			if sh.keys.EndingHashKey == MaxHashKey() {
				return errors.New("open shards overlap")
			}
			next = sh.keys.EndingHashKey.add(HashKey{0, 1})
		} else if sh.keys.EndingHashKey != MaxHashKey() {
			return errors.New("open shards end before the last hash key")
		}
	}
	return nil
}
