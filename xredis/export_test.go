package xredis

import (
	"context"

	"github.com/xstreamgo/xstream"
)

// Slot is the hash slot of a key, for the tests.
var Slot = slot

// SplitPartly begins a split of shardID at key as SplitShard does and
// stops after parts of its steps, as a process that died midway: 1, the
// lock taken and the step recorded; 2, the parent closed too; 3, the
// children created too (the new map is never published, the lock never
// released).
func SplitPartly(ctx context.Context, s *Sharded, shardID string, key xstream.HashKey, parts int) error {
	owner := s.id + ".partly"
	if err := s.lock(ctx, owner, "SplitShard"); err != nil {
		return err
	}
	m, err := s.settled(ctx)
	if err != nil {
		return err
	}
	n, err := m.lookup(shardID)
	if err != nil {
		return err
	}
	op := m.splitOp(n, key)
	op.Epoch = m.epoch
	raw, err := op.encode()
	if err != nil {
		return err
	}
	if err := setOpScript.Exec(ctx, s.c, []string{s.metaKey}, []string{owner, itoa(m.epoch), raw}).Error(); err != nil {
		return err
	}
	now := itoa(s.nowMs())
	if parts >= 2 {
		r := closeShardScript.Exec(ctx, s.c, []string{s.streamKey(n), s.stateKey(n)}, []string{now})
		end, _, err := idAndMs(r)
		if err != nil {
			return err
		}
		if parts >= 3 {
			for _, c := range op.Children {
				if err := createShardScript.Exec(ctx, s.c, []string{s.streamKey(c.N), s.stateKey(c.N)}, []string{end.String(), now}).Error(); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// StreamKey is the key of shard n's stream.
func (s *Sharded) StreamKey(n int) string { return s.streamKey(n) }

// Retry is the engine's retry of an operation of several commands.
var Retry = retry
