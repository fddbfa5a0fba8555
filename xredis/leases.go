package xredis

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/rueidis"
	"github.com/xstreamgo/xstream"
)

// Lease tables (xstream.LeaseTable) on Redis: the leases of application
// app over the sharded stream name are the hash "xs:{name}:leases:app",
// in the slot of the stream's metadata, one field per lease (its shard
// ID, or "worker:<ID>" for a worker's own entry; see xstream.Worker)
// whose value is "counter|end|sequence number|owner": the counter in
// decimal, end 1 once the shard was processed to its end (ShardEnd),
// else 0, the last sequence number processed ("0-0": none) and the
// owner's ID ("" for none; last, so it may hold any character). A
// conditional update is one Lua script on the hash, atomic on its node.

// leasesKey is the hash of application app's leases.
func (s *Sharded) leasesKey(app string) string { return xstream.LeaseStreamName(s.name, app) }

// LeaseTable returns the lease table of application app over the stream,
// in the hash "xs:{name}:leases:app" of the stream's metadata slot, for
// xstream.NewWorker: the workers of every process that use it share the
// stream's shards. Each call costs one round trip; UpdateLease runs a
// Lua script. It fails with ErrInvalidArgument for an empty app.
func (s *Sharded) LeaseTable(app string) (xstream.LeaseTable, error) {
	if app == "" {
		return nil, errorf(xstream.ErrInvalidArgument, "LeaseTable: the application name is empty")
	}
	return &leaseTable{c: s.c, key: s.leasesKey(app)}, nil
}

type leaseTable struct {
	c   rueidis.Client
	key string
}

// updateLeaseScript stores the lease ARGV[1] of hash KEYS[1] as
// "counter+1|ARGV[3]|ARGV[4]|ARGV[5]" if its counter is ARGV[2]; it
// returns the new counter, or -1 when the counter differs, -2 when there
// is no such lease.
var updateLeaseScript = rueidis.NewLuaScript(`
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then return -2 end
local c = string.match(v, '^(%d+)|')
if c ~= ARGV[2] then return -1 end
local n = string.format('%.0f', tonumber(c) + 1)
redis.call('HSET', KEYS[1], ARGV[1], n .. '|' .. ARGV[3] .. '|' .. ARGV[4] .. '|' .. ARGV[5])
return tonumber(n)
`)

func (t *leaseTable) Leases(ctx context.Context) ([]xstream.Lease, error) {
	kv, err := t.c.Do(ctx, t.c.B().Hgetall().Key(t.key).Build()).AsStrMap()
	if err != nil {
		return nil, mapErr(err)
	}
	out := make([]xstream.Lease, 0, len(kv))
	for id, v := range kv {
		l, err := parseLease(id, v)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b xstream.Lease) int { return strings.Compare(a.ShardID, b.ShardID) })
	return out, nil
}

func parseLease(id, v string) (xstream.Lease, error) {
	l := xstream.Lease{Checkpoint: xstream.Checkpoint{ShardID: id}}
	parts := strings.SplitN(v, "|", 4)
	bad := func() (xstream.Lease, error) {
		return xstream.Lease{}, fmt.Errorf("%w: lease %s: %q is not counter|end|seq|owner", errReply, id, v)
	}
	if len(parts) != 4 || (parts[1] != "0" && parts[1] != "1") {
		return bad()
	}
	var err error
	if l.Counter, err = strconv.ParseUint(parts[0], 10, 64); err != nil {
		return bad()
	}
	if l.SequenceNumber, err = xstream.ParseID(parts[2]); err != nil {
		return bad()
	}
	l.ShardEnd, l.Owner = parts[1] == "1", parts[3]
	return l, nil
}

func (t *leaseTable) CreateLease(ctx context.Context, shardID string) (bool, error) {
	if shardID == "" {
		return false, errorf(xstream.ErrInvalidArgument, "CreateLease: the shard ID is empty")
	}
	ok, err := t.c.Do(ctx, t.c.B().Hsetnx().Key(t.key).Field(shardID).Value("0|0|0-0|").Build()).AsBool()
	return ok, mapErr(err)
}

func (t *leaseTable) UpdateLease(ctx context.Context, l xstream.Lease) (xstream.Lease, error) {
	end := "0"
	if l.ShardEnd {
		end = "1"
	}
	n, err := updateLeaseScript.Exec(ctx, t.c, []string{t.key},
		[]string{l.ShardID, strconv.FormatUint(l.Counter, 10), end, l.SequenceNumber.String(), l.Owner}).AsInt64()
	switch {
	case err != nil:
		return xstream.Lease{}, mapErr(err)
	case n == -2:
		return xstream.Lease{}, errorf(xstream.ErrLeaseLost, "no lease of shard %s", l.ShardID)
	case n < 0:
		return xstream.Lease{}, errorf(xstream.ErrLeaseLost, "lease of shard %s: the counter is no longer %d", l.ShardID, l.Counter)
	}
	l.Counter = uint64(n)
	return l, nil
}

func (t *leaseTable) DeleteLease(ctx context.Context, shardID string) error {
	return mapErr(t.c.Do(ctx, t.c.B().Hdel().Key(t.key).Field(shardID).Build()).Error())
}
