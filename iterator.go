package xstream

import (
	"fmt"
	"time"
)

// ShardIteratorType says where a shard iterator starts.
type ShardIteratorType uint8

const (
	// TrimHorizon starts at the oldest record still kept.
	TrimHorizon ShardIteratorType = iota
	// Latest starts after the shard's last record: only records put later.
	Latest
	// AtSequenceNumber starts at the record with the given sequence number.
	AtSequenceNumber
	// AfterSequenceNumber starts right after the given sequence number.
	AfterSequenceNumber
	// AtTimestamp starts at the first record put at or after the given
	// time; a time before the trim horizon means TrimHorizon.
	AtTimestamp
)

var iteratorTypeNames = [...]string{"TRIM_HORIZON", "LATEST", "AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER", "AT_TIMESTAMP"}

// String returns the Kinesis name of the type, such as "TRIM_HORIZON".
func (t ShardIteratorType) String() string {
	if int(t) < len(iteratorTypeNames) {
		return iteratorTypeNames[t]
	}
	return fmt.Sprintf("ShardIteratorType(%d)", uint8(t))
}

// IteratorArgs holds the arguments of GetShardIterator besides the shard.
type IteratorArgs struct {
	Type ShardIteratorType
	// SequenceNumber, for AtSequenceNumber and AfterSequenceNumber, is a
	// record's sequence number ("ms-seq").
	SequenceNumber string
	// Timestamp, for AtTimestamp.
	Timestamp time.Time
}

// ShardIterator is a position in one shard, as returned by
// GetShardIterator and GetRecords. It is an immutable value: GetRecords
// returns the next position as a new iterator.
type ShardIterator struct {
	ss      *ShardedStream
	sh      *shard
	next    ID   // the smallest sequence number still to read
	horizon bool // read from the trim horizon, wherever it is by then
}

// ShardID returns the ID of the iterator's shard.
func (it *ShardIterator) ShardID() string { return it.sh.id }

// String describes the iterator's position, for debugging.
func (it *ShardIterator) String() string {
	if it.horizon {
		return it.sh.id + "@TRIM_HORIZON"
	}
	return it.sh.id + "@" + it.next.String()
}

// GetShardIterator returns an iterator over shard shardID starting as args
// says. For AtSequenceNumber and AfterSequenceNumber the sequence number
// must lie between the shard's starting and last sequence numbers, and its
// records must still be kept. It fails, changing nothing, with ErrShardNotFound, ErrShardExpired,
// ErrInvalidID, ErrInvalidArgument (unknown type, or a sequence number
// outside the shard's range) or ErrPastTrimHorizon. O(1).
func (ss *ShardedStream) GetShardIterator(shardID string, args IteratorArgs) (result *ShardIterator, err error) {
	if err = ss.cfg.gate.read(); err != nil {
		return
	}
	defer settleTo(ss, &result, &err)
	var seq ID
	switch args.Type {
	case AtSequenceNumber, AfterSequenceNumber:
		var err error
		if seq, err = ParseID(args.SequenceNumber); err != nil {
			return nil, err
		}
	case TrimHorizon, Latest, AtTimestamp:
	default:
		return nil, errorf(ErrInvalidArgument, "unknown shard iterator type %d", args.Type)
	}
	ss.expireNow()
	ss.mu.RLock()
	defer ss.mu.RUnlock()
	sh, err := ss.lookupLocked(shardID)
	if err != nil {
		return nil, err
	}
	if sh.state == ShardExpired {
		return nil, errorf(ErrShardExpired, "shard %s is EXPIRED: its records are past the retention period", shardID)
	}
	it := &ShardIterator{ss: ss, sh: sh}
	sh.s.mu.RLock()
	last, trimmed := ID(sh.s.st.LastID()), sh.trimmed
	sh.s.runlock()
	switch args.Type {
	case TrimHorizon:
		it.horizon = true
	case Latest:
		it.next, _ = last.Next()
	case AtTimestamp:
		ms := args.Timestamp.UnixMilli()
		it.next = ID{uint64(max(ms, 0)), 0}
		if !trimmed.IsZero() && !trimmed.Less(it.next) {
			it.horizon = true
		}
	default:
		if last.Less(seq) || seq.Less(sh.startSeq) {
			return nil, errorf(ErrInvalidArgument, "sequence number %s is outside shard %s's range %s..%s", args.SequenceNumber, shardID, sh.startSeq, last)
		}
		it.next = seq
		if args.Type == AfterSequenceNumber {
			it.next, _ = seq.Next()
		}
		if !trimmed.IsZero() && !trimmed.Less(it.next) {
			return nil, errorf(ErrPastTrimHorizon, "%s sequence number %s of shard %s: records up to %s were dropped by retention",
				args.Type, args.SequenceNumber, shardID, trimmed)
		}
	}
	return it, nil
}

// Record is one record of a sharded stream.
type Record struct {
	ShardID        string  // the shard holding the record
	SequenceNumber ID      // the record's ID in its shard
	PartitionKey   string  // as given to Put
	Fields         []Field // as given to Put
	// Deliveries is set on a record that a sharded ReadGroup with Claim
	// took over from the group's pending records: how many times it was
	// delivered before this read (at least 1). It is 0 on every other
	// record, new ones of such a read included.
	Deliveries int64
}

// ArrivalTime returns the time the record was put (its sequence number's
// millisecond).
func (r Record) ArrivalTime() time.Time { return time.UnixMilli(int64(r.SequenceNumber.Ms)) }

// ChildShard describes a child of a shard read to its end.
type ChildShard struct {
	ShardID      string
	ParentShards []string
	HashKeyRange HashKeyRange
}

// GetRecordsResult is the result of GetRecords.
type GetRecordsResult struct {
	Records []Record
	// NextShardIterator continues after Records. It is nil only when a
	// CLOSED shard has been read to its end; ChildShards then lists the
	// shard's children.
	NextShardIterator *ShardIterator
	// MillisBehindLatest is 0 when the shard has no record after Records,
	// else how old (by the clock) the next unread record is.
	MillisBehindLatest int64
	ChildShards        []ChildShard
}

// maxGetRecords is the largest GetRecords limit, as in Kinesis.
const maxGetRecords = 10000

// GetRecords returns up to limit records (0 means 10,000, the most
// allowed) from the iterator's position, and the iterator to continue
// with. It never blocks. It fails, changing nothing, with
// ErrInvalidIterator (nil, or of another stream), ErrInvalidArgument (limit
// out of range), ErrShardExpired (the shard expired) or ErrPastTrimHorizon
// (records at the iterator's position were dropped by retention). Finding
// the position is O(log N) in the shard's records.
func (ss *ShardedStream) GetRecords(it *ShardIterator, limit int) (result GetRecordsResult, err error) {
	if err = ss.cfg.gate.read(); err != nil {
		return
	}
	defer settleTo(ss, &result, &err)
	if it == nil || it.ss != ss {
		return GetRecordsResult{}, errorf(ErrInvalidIterator, "iterator %v does not belong to this stream", it)
	}
	if limit < 0 || limit > maxGetRecords {
		return GetRecordsResult{}, errorf(ErrInvalidArgument, "limit must be from 1 to %d (0: %d), got %d", maxGetRecords, maxGetRecords, limit)
	}
	if limit == 0 {
		limit = maxGetRecords
	}
	now := ss.expireNow()
	ss.mu.RLock()
	defer ss.mu.RUnlock()
	sh := it.sh
	if sh.state == ShardExpired {
		return GetRecordsResult{}, errorf(ErrShardExpired, "iterator %s: shard %s is EXPIRED", it, sh.id)
	}
	c := getCollector()
	defer putCollector(c)
	from := it.next
	if it.horizon {
		from = ID{}
	}
	rd := sh.collect(c, from, !it.horizon, limit)
	if rd.stale {
		return GetRecordsResult{}, errorf(ErrPastTrimHorizon, "iterator %s: records up to %s were dropped by retention", it, rd.trimmed)
	}
	var res GetRecordsResult
	res.Records = c.records([]shardCount{{sh, rd.n}})
	next := &ShardIterator{ss: ss, sh: sh, next: it.next, horizon: it.horizon}
	if n := len(res.Records); n > 0 {
		next.next, _ = res.Records[n-1].SequenceNumber.Next()
		next.horizon = false
	}
	if rd.more {
		res.MillisBehindLatest = max(now-int64(rd.nextMs), 0)
	}
	if sh.state == ShardClosed && !rd.more {
		next = nil
		res.ChildShards = childShards(sh)
	}
	res.NextShardIterator = next
	return res, nil
}

// childShards describes sh's children; the caller holds ss.mu.
func childShards(sh *shard) []ChildShard {
	out := make([]ChildShard, len(sh.children))
	for i, c := range sh.children {
		out[i] = ChildShard{ShardID: c.id, ParentShards: c.parentIDsLocked(), HashKeyRange: c.keys}
	}
	return out
}

func (sh *shard) parentIDsLocked() []string {
	var ps []string
	for _, p := range []*shard{sh.parent, sh.adjacent} {
		if p != nil {
			ps = append(ps, p.id)
		}
	}
	return ps
}
