package xstream

import (
	"encoding/binary"
	"time"
)

// Records of the log of a durable DB.
//
// Each call that changes an object of the DB (a stream, a shard's stream
// or a sharded stream) leaves one record: the object's number, then the
// effects of the call in the order they were applied. An effect is a kind
// byte and its values. The operations of ops.go, groupops.go and
// shardops.go append their effect to the object's objLog as they apply
// it, and the call's unlock commits the record (objLog.commit), so the log
// holds the changes in the order they were applied, and a call's changes
// to one object whole or not at all. A call that changes several objects
// (DB.ReadGroup over streams, DB.Remove of several, a sharded stream's
// calls over its shards) leaves one record per object: a crash between
// them keeps some, a state such a call can always be made again from.
// Replay (replay.go) decodes the effects and applies them through the
// same operations.
//
// Effects hold results, not requests: the ID an Add resolved to, the
// bound a trim reached, the time and count of each delivery. So replaying
// needs no clock and gives the state the calls left, whatever time it is.
//
// Numbers are uvarints, signed ones zigzag varints, strings a uvarint
// length and bytes, IDs two uvarints (ms, seq). Some effects are coded
// against state that replay rebuilds exactly as it was: an added entry's
// ID against the stream's last ID, its field names against the master
// names of the block that takes it, a delivered ID against the group's
// last delivered ID. Effects on groups and consumers name them once per
// record (effGroup, effConsumer set the record's current group and
// consumer), and deliveries take their time from effTime.

// The kinds of effects. Their values are part of the on-disk format.
const (
	effCreateStream   = 1  // name: a stream of the DB (first effect of its first record)
	effRemove         = 2  // the object leaves the DB
	effAppend         = 3  // ms delta, seq, fields: uvarint k, k × (name, value); k = 0: the open block's names, then their values
	effTrimTo         = 4  // id: every live entry up to it goes (a KeepRef trim)
	effTrimEntry      = 5  // id: the entry goes as a trim removes it
	effDelete         = 6  // id: the entry is deleted (XDEL)
	effSetLast        = 7  // last id, entries added (signed, -1: unchanged), max deleted id (0-0: unchanged)
	effGroup          = 8  // name: the group of the effects that follow
	effGroupCreate    = 9  // name, last id, entries read (signed): the group of what follows
	effGroupDestroy   = 10 // the current group goes
	effGroupSetLast   = 11 // last id, entries read (signed)
	effConsumer       = 12 // name: the consumer of the effects that follow
	effConsumerCreate = 13 // name: a new consumer, the current one
	effConsumerSee    = 14 // ms (signed)
	effConsumerActive = 15 // ms (signed)
	effConsumerDelete = 16 // the current consumer goes, with its pending entries
	effTime           = 17 // ms (signed): the delivery time of the effects that follow
	effDeliver        = 18 // id as ms delta and seq against the group's last ID, entries-read delta (signed): pending to the current consumer
	effDeliverNoAck   = 19 // as effDeliver, not made pending
	effRedeliver      = 20 // id, count: delivered again at the current time
	effClaim          = 21 // id, delivery ms (signed), count: pending to the current consumer
	effGiveBack       = 22 // id, count: pending to no one (Nack)
	effAck            = 23 // id: no longer pending
	effShardTrimmed   = 24 // id: retention dropped the shard's records up to it
	effGroupPolicy    = 25 // max deliveries (signed, 0: none), dead-letter stream name: the group's dead-letter policy
	effDeadLetter     = 26 // id: moved to the dead-letter stream by the group's policy, no longer pending
	effIdempotence    = 27 // sub-kind, values: idempotent production (idmpops.go)
	effRename         = 28 // name: the stream's new name in the DB (Rename); a stream it replaced was removed before
	effExpire         = 29 // ms (signed): when the stream expires, Unix ms (0: never)

	effCreateSharded = 32 // name, retention ms, created ms: a sharded stream of the DB
	effShardCreate   = 33 // object, start key, end key (two uint64 each), parent+1, adjacent+1, created ms, open position
	effShardClose    = 34 // shard number, ending sequence number, closed ms
	effShardsExpire  = 35 // n, n × shard number
	effResharded     = 36
	effRetention     = 37 // ms
	effShardedGroup  = 38 // name, strict (0 or 1)
)

// objLog records the changes of one object of a durable DB. It is guarded
// by the object's lock.
type objLog struct {
	j   *journal
	obj uint64 // the object's number in the DB
	lsn uint64 // log sequence number of its last record (0: none yet)

	// deferred: the object's calls leave settling to their caller, which
	// settles once it holds no lock (see Stream.unlock): the stream of a
	// shard, whose sharded stream settles, or a stream being created.
	deferred bool

	buf []byte // the record of the call in progress; empty between calls

	// The record's current group, consumer and time (see effGroup).
	g     *group
	c     *consumer
	t     int64
	hasT  bool
	dirty bool // buf holds effects
}

// begin starts the record of a call when it is the first effect.
func (l *objLog) begin(kind byte) {
	if !l.dirty {
		l.buf = binary.AppendUvarint(l.buf[:0], l.obj)
		l.dirty = true
	}
	l.buf = append(l.buf, kind)
}

// checkSize fails, with an ErrInvalidArgument error naming what, the
// record's size and the limit, when the record built so far is larger
// than the journal takes: committed, it would break the log for every
// later write. O(1).
func (l *objLog) checkSize(what string) error {
	if l.dirty && len(l.buf) > l.j.maxRecord {
		return errorf(ErrInvalidArgument, "%s needs a log record of %d bytes, more than the log takes (%d bytes)", what, len(l.buf), l.j.maxRecord)
	}
	return nil
}

// commit ends the record of the call, if it has one, and hands it to the
// journal; it returns the record's LSN, or when the call changed nothing
// the object's last record's (0 for none).
func (l *objLog) commit() uint64 {
	if !l.dirty {
		return l.lsn
	}
	l.lsn = l.j.commit(l.buf)
	if cap(l.buf) > 64<<10 {
		l.buf = nil // a huge record: do not keep its buffer
	}
	l.dirty = false
	if l.g != nil || l.hasT {
		l.g, l.c, l.hasT = nil, nil, false
	}
	return l.lsn
}

func (l *objLog) uvarint(v uint64) { l.buf = binary.AppendUvarint(l.buf, v) }
func (l *objLog) varint(v int64)   { l.buf = binary.AppendVarint(l.buf, v) }
func (l *objLog) str(v string)     { l.buf = appendStr(l.buf, v) }
func (l *objLog) id(id ID) {
	l.buf = binary.AppendUvarint(l.buf, id.Ms)
	l.buf = binary.AppendUvarint(l.buf, id.Seq)
}

// idDelta writes id against base, a smaller ID: the ms delta, then the
// sequence (as a delta within base's millisecond).
func (l *objLog) idDelta(id, base ID) {
	msd := id.Ms - base.Ms
	l.buf = binary.AppendUvarint(l.buf, msd)
	if msd == 0 {
		l.buf = binary.AppendUvarint(l.buf, id.Seq-base.Seq)
	} else {
		l.buf = binary.AppendUvarint(l.buf, id.Seq)
	}
}

// group makes g the record's current group.
func (l *objLog) group(g *group) {
	if l.g != g {
		l.begin(effGroup)
		l.str(g.name)
		l.g, l.c = g, nil
	}
}

// consumer makes c of g the record's current consumer.
func (l *objLog) consumer(g *group, c *consumer) {
	l.group(g)
	if l.c != c {
		l.begin(effConsumer)
		l.str(c.name)
		l.c = c
	}
}

// time makes ms the record's current time.
func (l *objLog) time(ms int64) {
	if !l.hasT || l.t != ms {
		l.begin(effTime)
		l.varint(ms)
		l.t, l.hasT = ms, true
	}
}

// Stream effects. Each is coded against the state before the operation
// applied it.

// append records an added entry: last is the stream's last ID before it,
// and same tells that its names were the open block's master names. It
// is the hottest effect, so it builds the record in a local slice.
func (l *objLog) append(last, id ID, fields []Field, same bool) {
	b := l.buf
	if !l.dirty {
		b = binary.AppendUvarint(b[:0], l.obj)
		l.dirty = true
	}
	b = append(b, effAppend)
	msd := id.Ms - last.Ms
	b = binary.AppendUvarint(b, msd)
	if msd == 0 {
		b = binary.AppendUvarint(b, id.Seq-last.Seq)
	} else {
		b = binary.AppendUvarint(b, id.Seq)
	}
	if same {
		b = append(b, 0)
		for _, f := range fields {
			b = appendStr(b, f.Value)
		}
	} else {
		b = binary.AppendUvarint(b, uint64(len(fields)))
		for _, f := range fields {
			b = appendStr(appendStr(b, f.Name), f.Value)
		}
	}
	l.buf = b
}

// appendStr appends a string as a uvarint length and its bytes.
func appendStr(b []byte, s string) []byte {
	if len(s) < 0x80 {
		b = append(b, byte(len(s)))
	} else {
		b = binary.AppendUvarint(b, uint64(len(s)))
	}
	return append(b, s...)
}

func (l *objLog) idEffect(kind byte, id ID) {
	l.begin(kind)
	l.id(id)
}

func (l *objLog) setLast(last ID, entriesAdded int64, maxDeleted ID) {
	l.begin(effSetLast)
	l.id(last)
	l.varint(entriesAdded)
	l.id(maxDeleted)
}

// Group effects.

func (l *objLog) groupCreate(name string, last ID, entriesRead int64) {
	l.begin(effGroupCreate)
	l.str(name)
	l.id(last)
	l.varint(entriesRead)
}

func (l *objLog) groupDestroy(g *group) {
	l.group(g)
	l.begin(effGroupDestroy)
	l.g, l.c = nil, nil
}

func (l *objLog) groupSetLast(g *group, last ID, entriesRead int64) {
	l.group(g)
	l.begin(effGroupSetLast)
	l.id(last)
	l.varint(entriesRead)
}

func (l *objLog) consumerCreate(g *group, c *consumer) {
	l.group(g)
	l.begin(effConsumerCreate)
	l.str(c.name)
	l.c = c
}

func (l *objLog) consumerTime(kind byte, g *group, c *consumer, ms int64) {
	l.consumer(g, c)
	l.begin(kind)
	l.varint(ms)
}

func (l *objLog) consumerDelete(g *group, c *consumer) {
	l.consumer(g, c)
	l.begin(effConsumerDelete)
	l.c = nil
}

// deliver records the delivery of id, the group's next entry; c nil is a
// NOACK delivery.
func (l *objLog) deliver(g *group, c *consumer, id ID, entriesRead, now int64) {
	kind := byte(effDeliverNoAck)
	if c != nil {
		l.consumer(g, c)
		kind = effDeliver
	} else {
		l.group(g)
	}
	l.time(now)
	l.begin(kind)
	l.idDelta(id, g.lastID)
	l.varint(entriesRead - g.entriesRead)
}

func (l *objLog) redeliver(g *group, id ID, now, count int64) {
	l.group(g)
	l.time(now)
	l.begin(effRedeliver)
	l.id(id)
	l.varint(count)
}

func (l *objLog) claim(g *group, c *consumer, id ID, deliveryMs, count int64) {
	l.consumer(g, c)
	l.begin(effClaim)
	l.id(id)
	l.varint(deliveryMs)
	l.varint(count)
}

func (l *objLog) giveBack(g *group, id ID, count int64) {
	l.group(g)
	l.begin(effGiveBack)
	l.id(id)
	l.varint(count)
}

func (l *objLog) groupPolicy(g *group, p DeadLetterPolicy) {
	l.group(g)
	l.begin(effGroupPolicy)
	l.varint(p.MaxDeliveries)
	l.str(p.Stream)
}

func (l *objLog) ack(g *group, id ID) {
	l.group(g)
	l.begin(effAck)
	l.id(id)
}

// Sharded stream effects.

func (l *objLog) shardCreate(sh *shard, obj uint64, at int) {
	l.begin(effShardCreate)
	l.uvarint(obj)
	l.hashKey(sh.keys.StartingHashKey)
	l.hashKey(sh.keys.EndingHashKey)
	l.uvarint(shardRef(sh.parent))
	l.uvarint(shardRef(sh.adjacent))
	l.varint(sh.created)
	l.uvarint(uint64(at))
}

func (l *objLog) hashKey(h HashKey) {
	l.buf = binary.BigEndian.AppendUint64(l.buf, h.Hi)
	l.buf = binary.BigEndian.AppendUint64(l.buf, h.Lo)
}

// shardRef is a shard's number plus one, 0 for none.
func shardRef(sh *shard) uint64 {
	if sh == nil {
		return 0
	}
	return uint64(sh.num) + 1
}

func (l *objLog) shardClose(sh *shard) {
	l.begin(effShardClose)
	l.uvarint(uint64(sh.num))
	l.id(sh.endSeq)
	l.varint(sh.closed)
}

func (l *objLog) shardsExpire(shards []*shard) {
	l.begin(effShardsExpire)
	l.uvarint(uint64(len(shards)))
	for _, sh := range shards {
		l.uvarint(uint64(sh.num))
	}
}

func (l *objLog) retention(d time.Duration) {
	l.begin(effRetention)
	l.varint(d.Milliseconds())
}

func (l *objLog) shardedGroup(name string, strict bool) {
	l.begin(effShardedGroup)
	l.str(name)
	if strict {
		l.uvarint(1)
	} else {
		l.uvarint(0)
	}
}
