package xredis_test

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/xredis"
)

// TestErrors checks that Redis's error replies come back as the core's
// sentinels, as Local gives them, and that a Redis error the core has no
// sentinel for is still the client's *rueidis.RedisError.
func TestErrors(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string, e xredis.Engine) {
		ctx := bg()
		k := keys(t)
		s, missing := k("s"), k("missing")
		is := func(err error, sentinels ...error) {
			t.Helper()
			require.Error(t, err)
			for _, s := range sentinels {
				require.ErrorIs(t, err, s)
			}
		}
		_, err := e.Add(ctx, s, xstream.AddArgs{ID: "5-5"}, xstream.Fields("a", "1")...)
		require.NoError(t, err)

		// XADD's ID errors, from the server.
		_, err = e.Add(ctx, s, xstream.AddArgs{ID: "5-5"}, xstream.Fields("a", "1")...)
		is(err, xstream.ErrIDTooSmall)
		var re *rueidis.RedisError
		require.ErrorAs(t, err, &re, "a mapped error still wraps the Redis error")
		_, err = e.Add(ctx, s, xstream.AddArgs{ID: "0-0"}, xstream.Fields("a", "1")...)
		is(err, xstream.ErrZeroID)
		require.NoError(t, e.SetID(ctx, s, xstream.SetIDArgs{LastID: xstream.MaxID().String(), EntriesAdded: -1}))
		_, err = e.Add(ctx, s, xstream.AddArgs{}, xstream.Fields("a", "1")...)
		is(err, xstream.ErrStreamExhausted)
		_, err = e.Add(ctx, missing, xstream.AddArgs{NoMkStream: true}, xstream.Fields("a", "1")...)
		is(err, xstream.ErrNoStream)
		_, err = e.Add(ctx, s, xstream.AddArgs{})
		is(err, xstream.ErrNoFields)
		_, err = e.Add(ctx, s, xstream.AddArgs{ID: "+1"}, xstream.Fields("a", "1")...)
		is(err, xstream.ErrInvalidID)
		_, err = e.Add(ctx, s, xstream.AddArgs{Trim: xstream.TrimArgs{Strategy: xstream.TrimMaxLen, Limit: 5}}, xstream.Fields("a", "1")...)
		is(err, xstream.ErrTrimConflict)

		// Counts: 0 is no limit, negative is an error (Redis: COUNT 0
		// returns nothing, COUNT -1 everything).
		_, err = e.Range(ctx, s, "-", "+", -1)
		is(err, xstream.ErrInvalidArgument)
		es, err := e.Range(ctx, s, "-", "+", 0)
		require.NoError(t, err)
		require.Len(t, es, 1)
		_, err = e.Range(ctx, s, "(0-0", "(0-0", 0)
		is(err, xstream.ErrInvalidID)

		// Missing streams and groups.
		_, err = e.Info(ctx, missing)
		is(err, xstream.ErrNoStream)
		_, err = e.Groups(ctx, missing)
		is(err, xstream.ErrNoStream)
		err = e.CreateGroup(ctx, missing, "g", "0", xstream.GroupOptions{})
		is(err, xstream.ErrNoStream)
		err = e.SetGroupID(ctx, missing, "g", "0", xstream.GroupOptions{})
		is(err, xstream.ErrNoStream)
		err = e.SetID(ctx, missing, xstream.SetIDArgs{LastID: "bad"})
		is(err, xstream.ErrNoStream) // the core looks for the stream first
		_, err = e.Pending(ctx, missing, "g")
		is(err, xstream.ErrNoGroup, xstream.ErrNoStream)
		_, err = e.Pending(ctx, s, "g")
		is(err, xstream.ErrNoGroup)
		require.NotErrorIs(t, err, xstream.ErrNoStream)
		_, err = e.PendingRange(ctx, missing, "g", xstream.PendingArgs{Count: -1})
		is(err, xstream.ErrNoGroup, xstream.ErrNoStream)
		_, err = e.ReadGroup(ctx, "g", "c", xstream.ReadGroupArgs{}, s, ">", missing, ">")
		is(err, xstream.ErrNoGroup)
		require.NotErrorIs(t, err, xstream.ErrNoStream, "the first stream has no group")
		_, err = e.ReadGroup(ctx, "g", "c", xstream.ReadGroupArgs{}, missing, ">", s, ">")
		is(err, xstream.ErrNoGroup, xstream.ErrNoStream)
		_, err = e.Consumers(ctx, s, "g")
		is(err, xstream.ErrNoGroup)
		n, err := e.Ack(ctx, missing, "g", "not-an-id")
		require.NoError(t, err, "XACK of a missing key is 0 before the IDs are looked at")
		require.Zero(t, n)

		require.NoError(t, e.CreateGroup(ctx, s, "g", "0", xstream.GroupOptions{}))
		is(e.CreateGroup(ctx, s, "g", "0", xstream.GroupOptions{}), xstream.ErrGroupExists)
		_, err = e.Ack(ctx, s, "g", "not-an-id")
		is(err, xstream.ErrInvalidID)
		_, err = e.ReadGroup(ctx, "g", "c", xstream.ReadGroupArgs{}, s, "$")
		is(err, xstream.ErrInvalidID)
		_, err = e.Claim(ctx, s, "g", "c", -1, []string{"1-1"}, xstream.ClaimArgs{})
		is(err, xstream.ErrInvalidArgument)
		_, err = e.ReadGroup(ctx, "g", "c", xstream.ReadGroupArgs{Claim: true}, s, ">")
		is(err, xstream.ErrInvalidArgument) // not sent: it needs Redis 8.4
		require.Contains(t, err.Error(), "Claim")

		// A Redis error without a sentinel: WRONGTYPE (xstream's server
		// has only streams).
		if kind == "xstream" {
			return
		}
		require.NoError(t, e.Client().Do(ctx, e.Client().B().Set().Key(k("str")).Value("v").Build()).Error())
		_, err = e.Len(ctx, k("str"))
		require.ErrorAs(t, err, &re)
		require.Contains(t, err.Error(), "WRONGTYPE")
	})
}

// TestErrorsPassThrough checks that context and connection errors come
// back as the client gave them, unwrapped.
func TestErrorsPassThrough(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string, e xredis.Engine) {
		k := keys(t)
		ctx, cancel := context.WithCancel(bg())
		cancel()
		_, err := e.Len(ctx, k("s"))
		require.Equal(t, context.Canceled, err)
		_, err = e.Read(ctx, xstream.ReadArgs{Block: xstream.BlockForever}, k("s"), "$")
		require.Equal(t, context.Canceled, err)

		// A closed client. (rueidis's cluster client closes its
		// connections in the background and may serve calls for a while
		// after Close.)
		if kind == "cluster" {
			return
		}
		e2 := newEngine(t, kind)
		require.NoError(t, e2.Close())
		_, err = e2.Len(bg(), k("s"))
		require.True(t, errors.Is(err, rueidis.ErrClosing), "%v", err)
		require.Equal(t, rueidis.ErrClosing, err)
	})
}
