package xstream

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMoveDeadLetters(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	db := NewDB(WithClock(clk.now))
	ctx := context.Background()
	for i, v := range []string{"ok", "poison", "ok2", "gone"} {
		_, err := db.Add("jobs", AddArgs{ID: string(rune('1' + i))}, Field{"job", v})
		require.NoError(t, err)
	}
	src := db.Stream("jobs")
	dlq := db.Stream("jobs.dead")
	require.NoError(t, src.CreateGroup("w", "0", GroupOptions{}))
	_, err := src.ReadGroup(ctx, "w", "a", ">", ReadGroupArgs{})
	require.NoError(t, err)
	// 2-0 and 4-0 are delivered three times, 3-0 twice.
	for range 2 {
		_, err = src.Claim("w", "b", 0, []string{"2", "4"}, ClaimArgs{})
		require.NoError(t, err)
	}
	_, err = src.Claim("w", "b", 0, []string{"3"}, ClaimArgs{})
	require.NoError(t, err)
	_, err = src.Delete("4")
	require.NoError(t, err)

	gtUnchanged(t, src, ErrInvalidArgument, "MaxDeliveries", func() error {
		_, err := src.MoveDeadLetters("w", DeadLetterArgs{MaxDeliveries: 0, To: dlq})
		return err
	})
	gtUnchanged(t, src, ErrInvalidArgument, "-1", func() error {
		_, err := src.MoveDeadLetters("w", DeadLetterArgs{MaxDeliveries: 2, To: dlq, Count: -1})
		return err
	})
	gtUnchanged(t, src, ErrInvalidArgument, "no dead-letter stream", func() error {
		_, err := src.MoveDeadLetters("w", DeadLetterArgs{MaxDeliveries: 2})
		return err
	})
	gtUnchanged(t, src, ErrInvalidArgument, `"jobs"`, func() error {
		_, err := src.MoveDeadLetters("w", DeadLetterArgs{MaxDeliveries: 2, To: src})
		return err
	})
	gtUnchanged(t, src, ErrNoGroup, `"x"`, func() error {
		_, err := src.MoveDeadLetters("x", DeadLetterArgs{MaxDeliveries: 2, To: dlq})
		return err
	})
	assert.Zero(t, dlq.Len())

	moved, err := src.MoveDeadLetters("w", DeadLetterArgs{MaxDeliveries: 2, To: dlq, Count: 1})
	require.NoError(t, err)
	require.Len(t, moved, 1)
	assert.Equal(t, DeadLetter{ID: gtID(2), DeadID: moved[0].DeadID, Consumer: "b", Deliveries: 3}, moved[0])
	moved, err = src.MoveDeadLetters("w", DeadLetterArgs{MaxDeliveries: 2, To: dlq})
	require.NoError(t, err)
	require.Len(t, moved, 1)
	assert.Equal(t, gtID(4), moved[0].ID)

	dead, err := dlq.Range("-", "+", 0)
	require.NoError(t, err)
	require.Len(t, dead, 2)
	assert.Equal(t, Fields(
		DeadLetterStreamField, "jobs",
		DeadLetterGroupField, "w",
		DeadLetterIDField, "2-0",
		DeadLetterConsumerField, "b",
		DeadLetterDeliveriesField, "3",
		"job", "poison"), dead[0].Fields)
	assert.Equal(t, Fields(
		DeadLetterStreamField, "jobs",
		DeadLetterGroupField, "w",
		DeadLetterIDField, "4-0",
		DeadLetterConsumerField, "b",
		DeadLetterDeliveriesField, "3"), dead[1].Fields, "a deleted message moves with its metadata")

	// Both are acknowledged in the source group; the others stay.
	rows, err := src.PendingRange("w", PendingArgs{})
	require.NoError(t, err)
	assert.Equal(t, []ID{gtID(1), gtID(3)}, []ID{rows[0].ID, rows[1].ID})
	assert.Len(t, rows, 2)
	moved, err = src.MoveDeadLetters("w", DeadLetterArgs{MaxDeliveries: 2, To: dlq})
	require.NoError(t, err)
	assert.Empty(t, moved)
}
