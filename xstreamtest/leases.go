package xstreamtest

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream"
)

// RunLeaseTable checks an xstream.LeaseTable made empty by newTable for
// each case: CreateLease adds a lease once; UpdateLease is a
// compare-and-set on the counter that increments it and keeps the owner
// and checkpoint it is given; a stale counter or a deleted lease fails
// with xstream.ErrLeaseLost and changes nothing; Leases lists them by
// shard ID; concurrent takes of one lease at one counter let exactly one
// win.
func RunLeaseTable(t *testing.T, newTable func(t *testing.T) xstream.LeaseTable) {
	t.Helper()
	ctx := context.Background()
	t.Run("CreateUpdateDelete", func(t *testing.T) {
		lt := newTable(t)
		ls, err := lt.Leases(ctx)
		require.NoError(t, err)
		require.Empty(t, ls)
		for _, id := range []string{shardName(1), shardName(0)} {
			ok, err := lt.CreateLease(ctx, id)
			require.NoError(t, err)
			require.True(t, ok)
		}
		ok, err := lt.CreateLease(ctx, shardName(0))
		require.NoError(t, err)
		require.False(t, ok, "a second CreateLease adds nothing")
		ls, err = lt.Leases(ctx)
		require.NoError(t, err)
		require.Equal(t, []xstream.Lease{{Checkpoint: xstream.Checkpoint{ShardID: shardName(0)}}, {Checkpoint: xstream.Checkpoint{ShardID: shardName(1)}}}, ls)

		l := ls[0]
		l.Owner = "w|1" // any owner, separators included
		got, err := lt.UpdateLease(ctx, l)
		require.NoError(t, err)
		l.Counter = 1
		require.Equal(t, l, got)
		l.SequenceNumber = xstream.ID{Ms: 1700000000000, Seq: 7}
		got, err = lt.UpdateLease(ctx, l)
		require.NoError(t, err)
		l.Counter = 2
		require.Equal(t, l, got)

		// A stale counter: refused, nothing changed.
		stale := l
		stale.Counter, stale.Owner = 1, "thief"
		_, err = lt.UpdateLease(ctx, stale)
		require.ErrorIs(t, err, xstream.ErrLeaseLost)
		ls, err = lt.Leases(ctx)
		require.NoError(t, err)
		require.Equal(t, l, ls[0])

		l.ShardEnd, l.Owner = true, ""
		got, err = lt.UpdateLease(ctx, l)
		require.NoError(t, err)
		l.Counter = 3
		require.Equal(t, l, got)

		require.NoError(t, lt.DeleteLease(ctx, shardName(0)))
		require.NoError(t, lt.DeleteLease(ctx, shardName(0)), "deleting no lease is no error")
		_, err = lt.UpdateLease(ctx, l)
		require.ErrorIs(t, err, xstream.ErrLeaseLost, "no lease")
		ls, err = lt.Leases(ctx)
		require.NoError(t, err)
		require.Equal(t, []xstream.Lease{{Checkpoint: xstream.Checkpoint{ShardID: shardName(1)}}}, ls)
		ok, err = lt.CreateLease(ctx, shardName(0))
		require.NoError(t, err)
		require.True(t, ok, "a deleted lease can be made again")
	})
	t.Run("OneTakeWins", func(t *testing.T) {
		lt := newTable(t)
		_, err := lt.CreateLease(ctx, shardName(3))
		require.NoError(t, err)
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				_, errs[i] = lt.UpdateLease(ctx, xstream.Lease{Checkpoint: xstream.Checkpoint{ShardID: shardName(3)}, Owner: shardName(i)})
			})
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			if err == nil {
				won++
			} else {
				require.ErrorIs(t, err, xstream.ErrLeaseLost)
			}
		}
		require.Equal(t, 1, won)
		ls, err := lt.Leases(ctx)
		require.NoError(t, err)
		require.Equal(t, uint64(1), ls[0].Counter)
	})
}
