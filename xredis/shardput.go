package xredis

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/redis/rueidis"
	"github.com/xstreamgo/xstream"
)

// Puts. A record is routed by the cached shard map and added by XADD
// NOMKSTREAM with an auto ID: one native command, the guard being the
// stream itself. The script that closes a shard sets its stream's last ID
// to the largest there is, in the same atomic step as its state and
// ending sequence number, so that an XADD to a closed shard fails
// ("exhausted"), and an expired shard has no stream (NOMKSTREAM adds
// nothing). The engine then reads the map again (completing the reshard
// step if it finds it recorded but not yet published) and routes the
// record again. So a record lands in an OPEN shard, never in a closed
// one, and an acknowledged record is kept.

// maxPutRecords is the largest PutRecords batch, as in Kinesis.
const maxPutRecords = 500

// maxRoutes bounds how many times one put routes again before it gives
// up (each time a reshard closed its shard in between).
const maxRoutes = 100

// pkField is the name of the first field of each entry: the record's
// partition key.
const pkField = "pk"

// checkPut validates a record and returns its hash key.
func checkPut(partitionKey, explicitHashKey string, fields []xstream.Field) (xstream.HashKey, error) {
	if partitionKey == "" {
		return xstream.HashKey{}, errorf(xstream.ErrInvalidPartitionKey, "partition key is empty")
	}
	if len(partitionKey) > 256 {
		if n := utf8.RuneCountInString(partitionKey); n > 256 {
			return xstream.HashKey{}, errorf(xstream.ErrInvalidPartitionKey, "partition key has %d characters, at most 256 allowed: %.32q...", n, partitionKey)
		}
	}
	h := xstream.PartitionHashKey(partitionKey)
	if explicitHashKey != "" {
		var err error
		if h, err = xstream.ParseHashKey(explicitHashKey); err != nil {
			return xstream.HashKey{}, err
		}
	}
	if len(fields) == 0 {
		return xstream.HashKey{}, errorf(xstream.ErrNoFields, "Put of partition key %q was given no fields", partitionKey)
	}
	return h, nil
}

// putCmd is the XADD of a record to shard n of m.
func (s *Sharded) putCmd(m *shardMap, n int, partitionKey string, fields []xstream.Field) rueidis.Completed {
	cmd := s.c.B().Xadd().Key(m.keys[n]).Nomkstream().Id("*").FieldValue().FieldValue(pkField, partitionKey)
	for _, f := range fields {
		cmd = cmd.FieldValue(f.Name, f.Value)
	}
	return cmd.Build()
}

// current returns the cached map, loading it the first time.
func (s *Sharded) current(ctx context.Context) (*shardMap, error) {
	if m := s.cached.Load(); m != nil && m.raw != "" {
		return m, nil
	}
	return s.settled(ctx)
}

// reroute returns the map to route by after the put script refused
// shard n of m (closed): the newest map, once n is no longer OPEN in it.
func (s *Sharded) reroute(ctx context.Context, m *shardMap, n int) (*shardMap, error) {
	for range maxRoutes {
		fresh, err := s.settled(ctx)
		if err != nil {
			return nil, err
		}
		if fresh.epoch != m.epoch || fresh.doc.Shards[n].State != xstream.ShardOpen {
			return fresh, nil
		}
		// The map still says OPEN with no step in progress: the step
		// that closed the shard was published between the put and the
		// look. Look again.
		m = fresh
	}
	return nil, fmt.Errorf("xredis: sharded stream %q: shard %s refuses puts but the map keeps it OPEN", s.name, shardName(n))
}

// Put adds a record to the OPEN shard owning the MD5 of partitionKey (or
// args.ExplicitHashKey), as xstream.ShardedStream.Put does, and returns
// the shard's ID and the record's sequence number (its stream ID). One
// round trip (XADD on the shard's node) when the cached map is
// current; a reshard in between costs a look at the map and another try.
//
// It fails, changing nothing, with ErrInvalidPartitionKey (empty, or more
// than 256 characters), ErrInvalidHashKey or ErrNoFields, or with the
// server's error. A put that could not be sent (the node is down, the
// cluster is failing over) is sent again until ctx ends (then the error
// matches ctx's and ErrNotApplied: nothing was added); one whose
// connection failed after it was sent fails with ErrUnknownOutcome (the
// record may or may not have been added, and a put again may duplicate
// it). With WithReplicaWait, a put too few replicas confirmed fails with
// ErrNotReplicated and still returns its shard and sequence number: the
// record was added, but a failover may lose it.
func (s *Sharded) Put(ctx context.Context, partitionKey string, args xstream.PutArgs, fields ...xstream.Field) (xstream.PutResult, error) {
	h, err := checkPut(partitionKey, args.ExplicitHashKey, fields)
	if err != nil {
		return xstream.PutResult{}, err
	}
	m, err := s.current(ctx)
	if err != nil {
		return xstream.PutResult{}, err
	}
	s.maybeExpire(ctx)
	for range maxRoutes {
		n := m.route(h)
		res, werr := s.c.write1(ctx, s.putCmd(m, n, partitionKey, fields))
		if id, ok, err := putReply(res); err != nil {
			return xstream.PutResult{}, err
		} else if ok {
			return xstream.PutResult{ShardID: shardName(n), SequenceNumber: id}, werr
		}
		if m, err = s.reroute(ctx, m, n); err != nil {
			return xstream.PutResult{}, err
		}
	}
	return xstream.PutResult{}, fmt.Errorf("xredis: sharded stream %q: Put routed %d times, each time to a shard closed meanwhile", s.name, maxRoutes)
}

// putReply decodes the reply of a put's XADD: the ID, or false when the
// shard refused the record (CLOSED: its IDs are exhausted; EXPIRED: no
// stream).
func putReply(r rueidis.RedisResult) (xstream.ID, bool, error) {
	v, err := r.ToString()
	if rueidis.IsRedisNil(err) {
		return xstream.ID{}, false, nil
	}
	if err = mapErr(err); errors.Is(err, xstream.ErrStreamExhausted) {
		return xstream.ID{}, false, nil
	}
	if err != nil {
		return xstream.ID{}, false, err
	}
	id, err := xstream.ParseID(v)
	return id, err == nil, err
}

// PutRecords puts a batch of 1 to 500 records, as Put does, and returns
// one result per record and the number that failed; a failed record does
// not stop the others. The records go in one pipelined round trip per
// node (the records of one shard in their order); those refused by a
// closed shard are routed again, in their order. A batch of a bad size
// fails with ErrInvalidArgument and stores nothing. Failures of the
// connection are as Put's, record by record; with WithReplicaWait the
// records go in one round trip per slot, each on a connection of its own
// followed by WAIT, and a record too few replicas confirmed has its
// shard, its sequence number and an ErrNotReplicated error (it counts as
// failed).
func (s *Sharded) PutRecords(ctx context.Context, records []xstream.PutRecordsEntry) ([]xstream.PutRecordsResult, int, error) {
	if len(records) == 0 || len(records) > maxPutRecords {
		return nil, 0, errorf(xstream.ErrInvalidArgument, "a batch holds 1 to %d records, got %d", maxPutRecords, len(records))
	}
	out := make([]xstream.PutRecordsResult, len(records))
	hashes := make([]xstream.HashKey, len(records))
	var todo []int // the records still to put, in order
	for i, r := range records {
		h, err := checkPut(r.PartitionKey, r.ExplicitHashKey, r.Fields)
		if err != nil {
			out[i].Err = err
			continue
		}
		hashes[i] = h
		todo = append(todo, i)
	}
	s.maybeExpire(ctx)
	m, err := s.current(ctx)
	if err != nil {
		return nil, 0, err
	}
	for try := 0; len(todo) > 0; try++ {
		if try == maxRoutes {
			for _, i := range todo {
				out[i].Err = fmt.Errorf("xredis: sharded stream %q: routed %d times, each time to a shard closed meanwhile", s.name, maxRoutes)
			}
			break
		}
		cmds := make(rueidis.Commands, len(todo))
		shards := make([]int, len(todo))
		for k, i := range todo {
			n := m.route(hashes[i])
			shards[k] = n
			cmds[k] = s.putCmd(m, n, records[i].PartitionKey, records[i].Fields)
		}
		var again []int
		refused := -1
		res, werr := s.c.write(ctx, cmds...)
		for k, r := range res {
			i := todo[k]
			id, ok, err := putReply(r)
			switch {
			case err != nil:
				out[i].Err = err
			case ok:
				out[i] = xstream.PutRecordsResult{ShardID: shardName(shards[k]), SequenceNumber: id}
				if werr != nil {
					out[i].Err = werr[k]
				}
			default:
				again = append(again, i)
				refused = shards[k]
			}
		}
		todo = again
		if len(todo) > 0 {
			if m, err = s.reroute(ctx, m, refused); err != nil {
				return nil, 0, err
			}
		}
	}
	failed := 0
	for _, r := range out {
		if r.Err != nil {
			failed++
		}
	}
	return out, failed, nil
}
