package xredis_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/xredis"
)

// RemoveSharded deletes every key of the stream, the name can be created
// again, and a process that still holds the stream finds it gone.
func TestRemoveSharded(t *testing.T) {
	for _, kind := range shardedKinds {
		t.Run(kind, func(t *testing.T) {
			e := newEngine(t, kind)
			name := shardedName(t)
			s, err := xredis.CreateSharded(bg(), e, name, xstream.ShardedArgs{Shards: 2})
			require.NoError(t, err)
			_, err = s.Put(bg(), "k", xstream.PutArgs{}, xstream.Fields("f", "v")...)
			require.NoError(t, err)
			require.NoError(t, s.SplitShard(bg(), "shardId-000000000000", "1000"))
			require.NoError(t, s.CreateGroup(bg(), "g", xstream.ShardGroupOptions{}))
			require.NoError(t, s.SaveCheckpoints(bg(), "app", []xstream.Checkpoint{{ShardID: "shardId-000000000001"}}))
			lt, err := s.LeaseTable("app")
			require.NoError(t, err)
			_, err = lt.CreateLease(bg(), "shardId-000000000001")
			require.NoError(t, err)

			ok, err := xredis.RemoveSharded(bg(), e, name)
			require.NoError(t, err)
			require.True(t, ok)
			for _, k := range []string{"xs:{" + name + "}:meta", "xs:{" + name + "}:events", "xs:{" + name + "}:groups",
				"xs:{" + name + "}:checkpoints:app", "xs:{" + name + "}:leases:app",
				"xs:{" + name + ":0}", "xs:{" + name + ":0}:state", "xs:{" + name + ":3}"} {
				n, err := e.Client().Do(bg(), e.Client().B().Exists().Key(k).Build()).AsInt64()
				require.NoError(t, err)
				require.Zero(t, n, k)
			}
			_, err = s.Put(bg(), "k", xstream.PutArgs{}, xstream.Fields("f", "v")...)
			require.ErrorIs(t, err, xstream.ErrNoStream)
			_, err = xredis.OpenSharded(bg(), e, name)
			require.ErrorIs(t, err, xstream.ErrNoStream)
			ok, err = xredis.RemoveSharded(bg(), e, name)
			require.NoError(t, err)
			require.False(t, ok)
			_, err = xredis.CreateSharded(bg(), e, name, xstream.ShardedArgs{Shards: 1})
			require.NoError(t, err)
		})
	}
}

// RemoveSharded of a stream whose name holds the characters of a glob
// pattern removes its own checkpoints and leases only: not those of a
// stream whose name the pattern would match.
func TestRemoveShardedGlobName(t *testing.T) {
	e := newEngine(t, "redis")
	name := shardedName(t)
	other, err := xredis.CreateSharded(bg(), e, name+"-other", xstream.ShardedArgs{Shards: 1})
	require.NoError(t, err)
	require.NoError(t, other.SaveCheckpoints(bg(), "app", []xstream.Checkpoint{{ShardID: "shardId-000000000000"}}))
	lt, err := other.LeaseTable("app")
	require.NoError(t, err)
	_, err = lt.CreateLease(bg(), "shardId-000000000000")
	require.NoError(t, err)
	glob, err := xredis.CreateSharded(bg(), e, name+"*", xstream.ShardedArgs{Shards: 1})
	require.NoError(t, err)
	require.NoError(t, glob.SaveCheckpoints(bg(), "app", []xstream.Checkpoint{{ShardID: "shardId-000000000000"}}))

	ok, err := xredis.RemoveSharded(bg(), e, name+"*")
	require.NoError(t, err)
	require.True(t, ok)
	for k, want := range map[string]int64{
		"xs:{" + name + "*}:checkpoints:app":      0,
		"xs:{" + name + "-other}:checkpoints:app": 1,
		"xs:{" + name + "-other}:leases:app":      1,
	} {
		n, err := e.Client().Do(bg(), e.Client().B().Exists().Key(k).Build()).AsInt64()
		require.NoError(t, err)
		require.Equal(t, want, n, k)
	}
}
