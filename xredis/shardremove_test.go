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
			require.NoError(t, s.SaveCheckpoints(bg(), "app", nil))

			ok, err := xredis.RemoveSharded(bg(), e, name)
			require.NoError(t, err)
			require.True(t, ok)
			for _, k := range []string{"xs:{" + name + "}:meta", "xs:{" + name + "}:events", "xs:{" + name + "}:groups",
				"xs:{" + name + "}:checkpoints:app", "xs:{" + name + ":0}", "xs:{" + name + ":0}:state", "xs:{" + name + ":3}"} {
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
