package xredis_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/xredis"
)

// TestServerInfo checks what the engine finds out about each server at
// connect time, and that the optional capabilities follow it: Redis 7.0
// has neither XDELEX/XACKDEL nor XNACK, xstream's server has both.
func TestServerInfo(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string, e xredis.Engine) {
		info := e.Server()
		_, delEx := e.(xstream.DeleteExEngine)
		_, nack := e.(xstream.NackEngine)
		_, dead := e.(xstream.DeadLetterEngine)
		require.True(t, dead, "dead letters are moved on the client side")
		require.Equal(t, info.DeleteEx, delEx)
		require.Equal(t, info.Nack, nack)
		require.Equal(t, kind == "cluster", info.Cluster)
		switch kind {
		case "xstream":
			require.Equal(t, "xstream", info.Name)
			require.True(t, info.DeleteEx)
			require.True(t, info.Nack)
		case "valkey":
			require.Equal(t, "valkey", info.Name)
			require.NotContains(t, info.Version, "7.2.4", "Valkey's own version, not the Redis version it reports")
		default:
			require.Equal(t, "redis", info.Name)
			require.NotEmpty(t, info.Version)
		}
		s := keys(t)("s")
		if !info.Nack {
			_, err := xstream.Nack(bg(), e, s, "g", xstream.NackFail, []string{"1-1"}, xstream.NackArgs{})
			require.ErrorIs(t, err, errors.ErrUnsupported)
		}
		if !info.DeleteEx {
			_, err := xstream.DeleteEx(bg(), e, s, xstream.KeepRef, "1-1")
			require.ErrorIs(t, err, errors.ErrUnsupported)
			_, err = xstream.AckDel(bg(), e, s, "g", xstream.KeepRef, "1-1")
			require.ErrorIs(t, err, errors.ErrUnsupported)
			// Nor the policies of Redis 8.2 in trims.
			_, err = e.Add(bg(), s, xstream.AddArgs{Trim: xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 5, Policy: xstream.Acked}}, xstream.Fields("a", "1")...)
			require.ErrorIs(t, err, errors.ErrUnsupported)
			_, err = e.Trim(bg(), s, xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 5, Policy: xstream.DelRef})
			require.ErrorIs(t, err, errors.ErrUnsupported)
		}
	})
}

// TestNackDeleteEx runs Redis 8's calls on a server that has them, next
// to Local.
func TestNackDeleteEx(t *testing.T) {
	e := newEngine(t, "xstream")
	l := xstream.Local(xstream.NewDB())
	defer l.Close()
	s := keys(t)("s")
	for _, en := range []xstream.Engine{l, e} {
		for _, id := range []string{"1-1", "2-2", "3-3"} {
			add(t, en, s, id, "a", id)
		}
		require.NoError(t, en.CreateGroup(bg(), s, "g", "0", xstream.GroupOptions{}))
		require.NoError(t, en.CreateGroup(bg(), s, "h", "$", xstream.GroupOptions{}))
		_, err := en.ReadGroup(bg(), "g", "c", xstream.ReadGroupArgs{}, s, ">")
		require.NoError(t, err)
	}
	d := &differ{}
	both := func(fn func(en xstream.Engine) (any, error)) any {
		t.Helper()
		want, werr := fn(l)
		got, gerr := fn(e)
		want, got = d.normalize(s, want), d.normalize(s, got)
		require.Equal(t, errClass(werr), errClass(gerr), "%v / %v", werr, gerr)
		require.Equal(t, want, got)
		return got
	}
	both(func(en xstream.Engine) (any, error) {
		return xstream.Nack(bg(), en, s, "g", xstream.NackFatal, []string{"1-1", "9-9"}, xstream.NackArgs{})
	})
	both(func(en xstream.Engine) (any, error) { return en.PendingRange(bg(), s, "g", xstream.PendingArgs{}) })
	both(func(en xstream.Engine) (any, error) {
		return xstream.AckDel(bg(), en, s, "g", xstream.Acked, "1-1", "2-2", "8-8")
	})
	both(func(en xstream.Engine) (any, error) {
		return xstream.DeleteEx(bg(), en, s, xstream.DelRef, "3-3", "7-7")
	})
	both(func(en xstream.Engine) (any, error) {
		return xstream.AckDel(bg(), en, s, "nogroup", xstream.Acked, "1-1")
	})
	both(func(en xstream.Engine) (any, error) {
		return xstream.Nack(bg(), en, keys(t)("missing"), "g", xstream.NackFail, nil, xstream.NackArgs{})
	})
	both(func(en xstream.Engine) (any, error) { return en.Range(bg(), s, "-", "+", 0) })
}

// TestMoveDeadLetters moves dead letters as Local does: the same dead
// letters (but for their new IDs), with the same fields, acknowledged.
func TestMoveDeadLetters(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string, e xredis.Engine) {
		l := xstream.Local(xstream.NewDB())
		defer l.Close()
		k := tagged(t)
		s, dead := k("a", "s"), k("b", "dead") // in two slots of a cluster
		var moved [2][]xstream.DeadLetter
		for i, en := range []xstream.Engine{l, e} {
			for _, id := range []string{"1-1", "2-2", "3-3", "4-4"} {
				add(t, en, s, id, "a", id, "a", "again")
			}
			require.NoError(t, en.CreateGroup(bg(), s, "g", "0", xstream.GroupOptions{}))
			for range 3 {
				_, err := en.ReadGroup(bg(), "g", "c", xstream.ReadGroupArgs{Count: 3}, s, "0")
				require.NoError(t, err)
				_, err = en.ReadGroup(bg(), "g", "c", xstream.ReadGroupArgs{Count: 3}, s, ">")
				require.NoError(t, err)
			}
			_, err := en.Delete(bg(), s, "2-2") // a dead letter whose message is gone
			require.NoError(t, err)
			_, err = xstream.MoveDeadLetters(bg(), en, s, "g", 1, s, 0)
			require.ErrorIs(t, err, xstream.ErrInvalidArgument)
			_, err = xstream.MoveDeadLetters(bg(), en, keys(t)("missing"), "g", 1, dead, 0)
			require.ErrorIs(t, err, xstream.ErrNoGroup)
			require.ErrorIs(t, err, xstream.ErrNoStream)
			moved[i], err = xstream.MoveDeadLetters(bg(), en, s, "g", 2, dead, 2)
			require.NoError(t, err)
			require.Len(t, moved[i], 2)
			for j := range moved[i] {
				require.False(t, moved[i][j].DeadID.IsZero())
				moved[i][j].DeadID = xstream.ID{}
			}
		}
		require.Equal(t, moved[0], moved[1])
		var fields [2][][]xstream.Field
		var pending [2]xstream.PendingSummary
		for i, en := range []xstream.Engine{l, e} {
			es, err := en.Range(bg(), dead, "-", "+", 0)
			require.NoError(t, err)
			for _, e := range es {
				fields[i] = append(fields[i], e.Fields)
			}
			pending[i], err = en.Pending(bg(), s, "g")
			require.NoError(t, err)
		}
		require.Equal(t, fields[0], fields[1])
		require.Equal(t, pending[0], pending[1])
		require.Equal(t, int64(2), pending[1].Count)
	})
}
