package xstream

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLocalEngine(t *testing.T) {
	ctx := context.Background()
	e := Local(NewDB())
	defer e.Close()
	id, err := e.Add(ctx, "s", AddArgs{ID: "1-1"}, Fields("a", "1")...)
	require.NoError(t, err)
	require.Equal(t, ID{1, 1}, id)
	n, err := e.Len(ctx, "s")
	require.NoError(t, err)
	require.Equal(t, int64(1), n)

	// A missing stream behaves as in Redis.
	n, err = e.Len(ctx, "missing")
	require.NoError(t, err)
	require.Zero(t, n)
	es, err := e.Range(ctx, "missing", "-", "+", 0)
	require.NoError(t, err)
	require.Empty(t, es)
	_, err = e.Range(ctx, "missing", "x", "+", 0)
	requireErr(t, err, ErrInvalidID, "x")
	_, err = e.Info(ctx, "missing")
	requireErr(t, err, ErrNoStream, "missing")
	_, err = e.Pending(ctx, "missing", "g")
	requireErr(t, err, ErrNoGroup, "missing")
	require.True(t, errors.Is(err, ErrNoStream))
	acked, err := e.Ack(ctx, "missing", "g", "not-an-id")
	require.NoError(t, err, "XACK of a missing key is 0 before the IDs are looked at")
	require.Zero(t, acked)

	// Local has every capability.
	require.NoError(t, e.CreateGroup(ctx, "s", "g", "0", GroupOptions{}))
	_, err = e.ReadGroup(ctx, "g", "c", ReadGroupArgs{}, "s", ">")
	require.NoError(t, err)
	got, err := Nack(ctx, e, "s", "g", NackFail, []string{"1-1"}, NackArgs{})
	require.NoError(t, err)
	require.Equal(t, int64(1), got)
}

// bareEngine is an Engine with no optional capability.
type bareEngine struct{ Engine }

func TestEngineUnsupported(t *testing.T) {
	ctx := context.Background()
	e := bareEngine{Local(NewDB())}
	_, err := Nack(ctx, e, "s", "g", NackFail, []string{"1-1"}, NackArgs{})
	requireErr(t, err, errors.ErrUnsupported, "Nack")
	_, err = DeleteEx(ctx, e, "s", KeepRef, "1-1")
	requireErr(t, err, errors.ErrUnsupported, "DeleteEx")
	_, err = AckDel(ctx, e, "s", "g", KeepRef, "1-1")
	requireErr(t, err, errors.ErrUnsupported, "AckDel")
	_, err = MoveDeadLetters(ctx, e, "s", "g", 3, "dead", 0)
	requireErr(t, err, errors.ErrUnsupported, "MoveDeadLetters")
}

// TestLocalNoAlloc checks that the adapter allocates nothing of its own:
// boxing the DB as an Engine and a call through it cost what the DB's
// call costs.
func TestLocalNoAlloc(t *testing.T) {
	ctx := context.Background()
	db := NewDB()
	db.Add("s", AddArgs{}, Fields("a", "1")...)
	var e Engine
	allocs := testing.AllocsPerRun(100, func() {
		e = Local(db)
		if n, _ := e.Len(ctx, "s"); n != 1 {
			t.Fatal(n)
		}
	})
	require.Zero(t, allocs)
}
