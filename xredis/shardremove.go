package xredis

import (
	"context"
	"errors"

	"github.com/redis/rueidis"
	"github.com/xstreamgo/xstream"
)

// RemoveSharded deletes the sharded stream name from e's server, with
// every key it has: the metadata hash (first, so that a process that
// still holds the stream finds it gone: its puts fail with ErrNoStream),
// the events stream, the consumer groups' list, the saved checkpoints
// (SaveCheckpoints), and each shard's stream and state hash. It reports
// whether there was such a stream. A reshard running meanwhile in
// another process may leave some of its keys behind: remove the stream
// when no one uses it. It costs one round trip for the stream's own keys
// and one per node for the shards'.
func RemoveSharded(ctx context.Context, e Engine, name string) (bool, error) {
	s, err := newSharded(e, name, nil)
	if err != nil {
		return false, err
	}
	m, err := s.load(ctx)
	if errors.Is(err, xstream.ErrNoStream) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	n, err := removeMetaScript.Exec(ctx, s.c, []string{s.metaKey, s.events, s.groupsKey()},
		[]string{s.checkpointsKey("*")}).AsInt64()
	if err != nil {
		return false, mapErr(err)
	}
	cmds := make(rueidis.Commands, len(m.doc.Shards))
	for i := range m.doc.Shards {
		cmds[i] = s.c.B().Del().Key(s.streamKey(i), s.stateKey(i)).Build()
	}
	for _, r := range s.c.DoMulti(ctx, cmds...) {
		if err := r.Error(); err != nil {
			return false, mapErr(err)
		}
	}
	s.cached.Store(nil)
	return n == 1, nil
}

// removeMetaScript deletes the keys of a sharded stream that share the
// slot of its name: the metadata (KEYS[1]), the events (KEYS[2]), the
// groups' list (KEYS[3]) and the checkpoint hashes matching ARGV[1]. It
// returns 1 when there was metadata.
var removeMetaScript = rueidis.NewLuaScript(`
local had = redis.call('DEL', KEYS[1])
redis.call('DEL', KEYS[2], KEYS[3])
for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end
return had
`)
