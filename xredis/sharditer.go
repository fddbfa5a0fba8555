package xredis

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/rueidis"
	"github.com/xstreamgo/xstream"
)

// Shard iterators. An iterator is the string "xs1/<shard number>/<position>/<stream name>",
// the position being "h" (the trim horizon, wherever it is when read) or
// the next sequence number to read. It holds no server state: it stays
// valid as long as its shard does.

// boundsScript returns the last sequence number of shard KEYS[1] (its
// stream's last generated ID, "0-0" when there is none, or its ending
// sequence number when CLOSED) and the greatest ID retention dropped from it, from
// its state KEYS[2] ("" for none).
var boundsScript = rueidis.NewLuaScriptReadOnly(luaLastID + `
local st = redis.call('HMGET', KEYS[2], 's', 'end', 'trimmed')
local last = st[2]
if st[1] ~= 'CLOSED' then last = lastID(KEYS[1]) end
return {last, st[3] or ''}
`)

// maxGetRecords is the largest GetRecords limit, as in Kinesis.
const maxGetRecords = 10000

func (s *Sharded) iterator(n int, horizon bool, next xstream.ID) string {
	b := append(make([]byte, 0, 48+len(s.name)), "xs1/"...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, '/')
	if horizon {
		b = append(b, 'h')
	} else {
		b = next.AppendText(b)
	}
	b = append(b, '/')
	return string(append(b, s.name...))
}

// parseIterator reads an iterator of this stream; it fails with
// ErrInvalidIterator for any other string.
func (s *Sharded) parseIterator(it string) (n int, horizon bool, next xstream.ID, err error) {
	bad := func(why string) (int, bool, xstream.ID, error) {
		return 0, false, xstream.ID{}, errorf(xstream.ErrInvalidIterator, "iterator %q: %s", it, why)
	}
	rest, ok := strings.CutPrefix(it, "xs1/")
	if !ok {
		return bad("not an iterator")
	}
	ns, rest, ok1 := strings.Cut(rest, "/")
	pos, name, ok2 := strings.Cut(rest, "/")
	if !ok1 || !ok2 {
		return bad("not an iterator")
	}
	if name != s.name {
		return bad("not an iterator of this stream")
	}
	if n, err = strconv.Atoi(ns); err != nil || n < 0 || strconv.Itoa(n) != ns {
		return bad("no such shard")
	}
	if pos == "h" {
		return n, true, xstream.ID{}, nil
	}
	if next, err = xstream.ParseID(pos); err != nil {
		return bad("bad position")
	}
	return n, false, next, nil
}

func (s *Sharded) boundsExec(n int) rueidis.LuaExec {
	return rueidis.LuaExec{Keys: []string{s.streamKey(n), s.stateKey(n)}}
}

// boundsOf decodes boundsScript's reply: the last ID and the greatest
// trimmed.
func boundsOf(r rueidis.RedisResult) (last, trimmed xstream.ID, err error) {
	arr, err := r.ToArray()
	if err != nil {
		return last, trimmed, mapErr(err)
	}
	if len(arr) != 2 {
		return last, trimmed, fmt.Errorf("%w to the bounds of a shard: %d values", errReply, len(arr))
	}
	if last, err = idOf(&arr[0]); err != nil {
		return last, trimmed, err
	}
	trimmed, err = trimmedOf(&arr[1])
	return last, trimmed, err
}

// GetShardIterator returns an iterator over shard shardID starting as
// args says, as xstream.ShardedStream.GetShardIterator does. For
// AtSequenceNumber and AfterSequenceNumber the sequence number must lie
// between the shard's starting and last sequence numbers. It fails with
// ErrShardNotFound, ErrShardExpired, ErrInvalidID or ErrInvalidArgument
// (unknown type, or a sequence number outside the shard's range). Two
// round trips (the map, and the shard's last ID when the type needs it).
func (s *Sharded) GetShardIterator(ctx context.Context, shardID string, args xstream.IteratorArgs) (string, error) {
	var seq xstream.ID
	switch args.Type {
	case xstream.AtSequenceNumber, xstream.AfterSequenceNumber:
		var err error
		if seq, err = xstream.ParseID(args.SequenceNumber); err != nil {
			return "", err
		}
	case xstream.TrimHorizon, xstream.Latest, xstream.AtTimestamp:
	default:
		return "", errorf(xstream.ErrInvalidArgument, "unknown shard iterator type %d", args.Type)
	}
	s.maybeExpire(ctx)
	m, err := s.settled(ctx)
	if err != nil {
		return "", err
	}
	n, err := m.lookup(shardID)
	if err != nil {
		return "", err
	}
	sh := m.doc.Shards[n]
	if sh.State == xstream.ShardExpired {
		return "", errorf(xstream.ErrShardExpired, "shard %s is EXPIRED: its records are past the retention period", shardID)
	}
	if args.Type == xstream.TrimHorizon {
		return s.iterator(n, true, xstream.ID{}), nil
	}
	last, trimmed, err := boundsOf(boundsScript.Exec(ctx, s.c, s.boundsExec(n).Keys, nil))
	if err != nil {
		return "", err
	}
	past := func(id xstream.ID) bool { return !trimmed.IsZero() && !trimmed.Less(id) }
	switch args.Type {
	case xstream.AtTimestamp:
		at := xstream.ID{Ms: uint64(max(args.Timestamp.UnixMilli(), 0))}
		return s.iterator(n, past(at), at), nil
	case xstream.Latest:
		next, _ := last.Next()
		return s.iterator(n, false, next), nil
	}
	if last.Less(seq) || seq.Less(sh.StartSeq) {
		return "", errorf(xstream.ErrInvalidArgument, "sequence number %s is outside shard %s's range %s..%s", args.SequenceNumber, shardID, sh.StartSeq, last)
	}
	if args.Type == xstream.AfterSequenceNumber {
		seq, _ = seq.Next()
	}
	if past(seq) {
		return "", pastHorizon(fmt.Sprintf("%s sequence number %s of shard %s", args.Type, args.SequenceNumber, shardID), trimmed)
	}
	return s.iterator(n, false, seq), nil
}

// shardRead is what readShard found besides the records: closed, a
// CLOSED shard; more, records after those returned, the first at nextMs;
// trimmed, the greatest ID retention dropped.
type shardRead struct {
	closed, more bool
	nextMs       uint64
	trimmed      xstream.ID
}

// readShard reads up to limit records (0: all) of shard n from from on
// (inclusive; zero: the start), with its state read just before.
func (s *Sharded) readShard(ctx context.Context, n int, from xstream.ID, limit int) ([]xstream.Record, shardRead, error) {
	var rd shardRead
	xr := s.c.B().Arbitrary("XRANGE").Keys(s.streamKey(n)).Args(from.String(), "+")
	if limit > 0 {
		xr = xr.Args("COUNT", itoa(int64(limit+1)))
	}
	res := s.c.DoMulti(ctx, s.c.B().Hmget().Key(s.stateKey(n)).Field("s", "trimmed").Build(), xr.ReadOnly())
	st, err := res[0].ToArray()
	if err != nil {
		return nil, rd, mapErr(err)
	}
	state, _ := st[0].ToString()
	rd.closed = state == "CLOSED"
	if rd.trimmed, err = trimmedOf(&st[1]); err != nil {
		return nil, rd, err
	}
	m, err := res[1].ToMessage()
	if err != nil {
		return nil, rd, mapErr(err)
	}
	es, err := entries(&m)
	if err != nil {
		return nil, rd, err
	}
	if limit > 0 && len(es) > limit {
		rd.more, rd.nextMs = true, es[limit].ID.Ms
		es = es[:limit]
	}
	return appendRecords(nil, n, es), rd, nil
}

// GetRecords returns up to limit records (0: 10,000) from the iterator's
// position and the iterator to continue with, as
// xstream.ShardedStream.GetRecords does: at the end of a CLOSED shard
// the next iterator is "" and ChildShards lists its children. It never
// blocks. It fails with ErrInvalidIterator, ErrInvalidArgument (limit out
// of range) or ErrShardExpired. One round trip to the shard's node (the
// state and XRANGE), and one for the map at a CLOSED shard's end.
func (s *Sharded) GetRecords(ctx context.Context, iterator string, limit int) (xstream.ShardRecords, error) {
	n, horizon, next, err := s.parseIterator(iterator)
	if err != nil {
		return xstream.ShardRecords{}, err
	}
	s.maybeExpire(ctx)
	if limit < 0 || limit > maxGetRecords {
		return xstream.ShardRecords{}, errorf(xstream.ErrInvalidArgument, "limit must be from 1 to %d (0: %d), got %d", maxGetRecords, maxGetRecords, limit)
	}
	if limit == 0 {
		limit = maxGetRecords
	}
	m, err := s.current(ctx)
	if err != nil {
		return xstream.ShardRecords{}, err
	}
	if n >= len(m.doc.Shards) {
		if m, err = s.settled(ctx); err != nil {
			return xstream.ShardRecords{}, err
		}
		if n >= len(m.doc.Shards) {
			return xstream.ShardRecords{}, errorf(xstream.ErrInvalidIterator, "iterator %q: no such shard", iterator)
		}
	}
	if m.doc.Shards[n].State == xstream.ShardExpired {
		return xstream.ShardRecords{}, errorf(xstream.ErrShardExpired, "iterator %q: shard %s is EXPIRED", iterator, shardName(n))
	}
	recs, rd, err := s.readShard(ctx, n, next, limit)
	if err != nil {
		return xstream.ShardRecords{}, err
	}
	if !horizon && !rd.trimmed.IsZero() && !rd.trimmed.Less(next) {
		return xstream.ShardRecords{}, pastHorizon("iterator "+strconv.Quote(iterator), rd.trimmed)
	}
	out := xstream.ShardRecords{Records: recs}
	if k := len(recs); k > 0 {
		next, _ = recs[k-1].SequenceNumber.Next()
		horizon = false
	}
	if rd.more {
		out.MillisBehindLatest = max(s.nowMs()-int64(rd.nextMs), 0)
	}
	if rd.closed && !rd.more {
		// The children are in the map once the step that closed the
		// shard is published (or completed here).
		if m.doc.Shards[n].State == xstream.ShardOpen || len(m.children[n]) == 0 {
			if m, err = s.settled(ctx); err != nil {
				return xstream.ShardRecords{}, err
			}
		}
		out.ChildShards = m.childShards(n)
		return out, nil
	}
	out.NextShardIterator = s.iterator(n, horizon, next)
	return out, nil
}
