package xredis

import (
	"context"
	"errors"

	"github.com/redis/rueidis"
	"github.com/xstreamgo/xstream"
)

// Retention. A retention pass trims every live shard by MINID at now -
// retention (stream IDs being arrival milliseconds), remembering in the
// shard's state the greatest ID it dropped (reads at or before it fail
// with ErrPastTrimHorizon), and makes EXPIRED the CLOSED shards whose
// records are all past the retention: a step like a reshard's, under the
// reshard lock, after which their keys are deleted. An engine runs a
// pass at most once a second of its clock, in the call (Put, GetRecords,
// ListShards, a reader's or a group's read) that finds one due; any
// number of engines may run passes, which are idempotent.

// expireEvery is how often (ms) an engine runs a retention pass.
const expireEvery = 1000

// trimScript drops the entries of stream KEYS[1] older than ARGV[1] (ms)
// and records in its state KEYS[2] the greatest ID dropped; it returns
// that ID ("" when none was ever dropped).
var trimScript = rueidis.NewLuaScript(`
local prev = redis.call('XREVRANGE', KEYS[1], '(' .. ARGV[1] .. '-0', '-', 'COUNT', 1)
if #prev > 0 then
  redis.call('HSET', KEYS[2], 'trimmed', prev[1][1])
  redis.call('XTRIM', KEYS[1], 'MINID', ARGV[1] .. '-0')
end
return redis.call('HGET', KEYS[2], 'trimmed') or ''
`)

// maybeExpire runs a retention pass when one is due. Its errors are
// dropped: the pass is maintenance that the next call retries (use
// ApplyRetention to see them).
func (s *Sharded) maybeExpire(ctx context.Context) {
	now := s.nowMs()
	next := s.nextExpire.Load()
	if now < next || !s.nextExpire.CompareAndSwap(next, now+expireEvery) {
		return
	}
	_ = s.expire(withoutRetry(ctx), now) // not held up by a failover of one node
}

// ApplyRetention runs a retention pass now: it drops the records older
// than the retention from every shard and makes EXPIRED the CLOSED shards
// whose records are all past it (unless a reshard holds the lock: then
// they expire at a later pass). Engines run passes on their own (see
// Sharded); this is for a program that wants one at a given time. It
// costs a round trip per node, and a reshard step when shards expire.
func (s *Sharded) ApplyRetention(ctx context.Context) error {
	now := s.nowMs()
	s.nextExpire.Store(now + expireEvery)
	return s.expire(ctx, now)
}

func (s *Sharded) expire(ctx context.Context, now int64) error {
	m, err := s.settled(ctx)
	if err != nil {
		return err
	}
	cutoff := now - m.retention
	if cutoff <= 0 {
		return nil
	}
	var expiring []int
	var execs []rueidis.LuaExec
	for n, sh := range m.doc.Shards {
		if sh.State == xstream.ShardExpired {
			continue
		}
		execs = append(execs, rueidis.LuaExec{Keys: []string{s.streamKey(n), s.stateKey(n)}, Args: []string{itoa(cutoff)}})
		if sh.State == xstream.ShardClosed && max(int64(sh.EndSeq.Ms), sh.Closed) < cutoff {
			expiring = append(expiring, n)
		}
	}
	for _, r := range trimScript.ExecMulti(ctx, s.c, execs...) {
		if err := r.Error(); err != nil {
			return mapErr(err)
		}
	}
	if len(expiring) == 0 {
		return nil
	}
	err = s.reshard(ctx, "Expire", func(m *shardMap, step stepFunc) error {
		var still []int
		for _, n := range expiring {
			if m.doc.Shards[n].State == xstream.ShardClosed {
				still = append(still, n)
			}
		}
		if len(still) == 0 {
			return nil
		}
		_, err := step(m, reshardOp{Kind: "expire", Expire: still})
		return err
	})
	if errors.Is(err, xstream.ErrResourceInUse) {
		return nil // a reshard is in progress: a later pass expires them
	}
	return err
}

// completeExpire is the end of an expire step: the shards become EXPIRED
// in the map, then their keys are deleted.
func (s *Sharded) completeExpire(ctx context.Context, m *shardMap, doc mapDoc) error {
	for _, n := range m.op1.Expire {
		if n >= len(doc.Shards) {
			return errorf(errReply, "the expire step of %q names shard %d of %d", s.name, n, len(doc.Shards))
		}
		doc.Shards[n].State = xstream.ShardExpired
	}
	if err := s.publish(ctx, m, doc); err != nil {
		return err
	}
	cmds := make(rueidis.Commands, 0, len(m.op1.Expire))
	for _, n := range m.op1.Expire {
		cmds = append(cmds, s.c.B().Del().Key(s.streamKey(n), s.stateKey(n)).Build())
	}
	for _, r := range s.c.DoMulti(ctx, cmds...) {
		if err := r.Error(); err != nil {
			return mapErr(err)
		}
	}
	return nil
}

// trimmedOf reads the greatest ID retention dropped from a state hash
// field ("" or nil: none).
func trimmedOf(m *rueidis.RedisMessage) (xstream.ID, error) {
	v, err := m.ToString()
	if rueidis.IsRedisNil(err) || (err == nil && v == "") {
		return xstream.ID{}, nil
	}
	if err != nil {
		return xstream.ID{}, mapErr(err)
	}
	return xstream.ParseID(v)
}

// pastHorizon is the error of a read at next, at or before trimmed.
func pastHorizon(what string, trimmed xstream.ID) error {
	return errorf(xstream.ErrPastTrimHorizon, "%s: records up to %s were dropped by retention", what, trimmed)
}
