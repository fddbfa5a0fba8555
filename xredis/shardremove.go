package xredis

import (
	"context"
	"errors"
	"strings"

	"github.com/redis/rueidis"
	"github.com/xstreamgo/xstream"
)

// RemoveSharded deletes the sharded stream name from e's server, with
// every key it has: the metadata hash (first, so that a process that
// still holds the stream finds it gone: its puts fail with ErrNoStream),
// the events stream, the consumer groups' list, the saved checkpoints
// (SaveCheckpoints), the lease tables (LeaseTable), and each shard's
// stream and state hash. It reports
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
		[]string{globQuote(s.checkpointsKey("")) + "*", globQuote(s.leasesKey("")) + "*"}).AsInt64()
	if err != nil {
		return false, mapErr(err)
	}
	cmds := make(rueidis.Commands, len(m.doc.Shards))
	for i := range m.doc.Shards {
		cmds[i] = s.c.B().Del().Key(s.streamKey(i), s.stateKey(i)).Build().ToRetryable() // deleting twice does no harm
	}
	for _, r := range s.c.DoMulti(ctx, cmds...) {
		if err := r.Error(); err != nil {
			return false, mapErr(err)
		}
	}
	return n == 1, nil
}

// globQuote quotes the characters of s that a Redis glob pattern (KEYS,
// SCAN MATCH) takes as special, so that the pattern matches s itself: a
// stream name may hold them.
func globQuote(s string) string {
	if !strings.ContainsAny(s, `*?[]\`) {
		return s
	}
	var b strings.Builder
	for _, c := range []byte(s) {
		if strings.IndexByte(`*?[]\`, c) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// removeMetaScript deletes the keys of a sharded stream that share the
// slot of its name: the metadata (KEYS[1]), the events (KEYS[2]), the
// groups' list (KEYS[3]) and the checkpoint and lease hashes matching
// the patterns ARGV[1] and ARGV[2]. It returns 1 when there was metadata.
var removeMetaScript = rueidis.NewLuaScript(`
local had = redis.call('DEL', KEYS[1])
redis.call('DEL', KEYS[2], KEYS[3])
for i = 1, 2 do
  for _, k in ipairs(redis.call('KEYS', ARGV[i])) do redis.call('DEL', k) end
end
return had
`)
