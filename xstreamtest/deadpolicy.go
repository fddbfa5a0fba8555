package xstreamtest

import (
	"errors"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream"
)

// The dead-letter policy of a group (xstream.DeadLetterPolicyEngine):
// tested when Caps.DeadLetterPolicy is set; otherwise the engine must
// refuse it with errors.ErrUnsupported.

// setPolicy sets the policy of group g of stream to max deliveries, dead
// letters going to the test's stream "dead".
func (t *T) setPolicy(stream string, max int64) {
	t.Helper()
	require.NoError(t, xstream.SetDeadLetterPolicy(t.ctx, t.e, stream, "g", xstream.DeadLetterPolicy{MaxDeliveries: max, Stream: t.key("dead")}))
}

// deadMeta is the metadata a dead letter of stream's group g starts with.
func deadMeta(stream, src, consumer, deliveries string) []xstream.Field {
	return xstream.Fields(
		xstream.DeadLetterStreamField, stream, xstream.DeadLetterGroupField, "g", xstream.DeadLetterIDField, src,
		xstream.DeadLetterConsumerField, consumer, xstream.DeadLetterDeliveriesField, deliveries)
}

var deadPolicyCases = []tcase{
	{"Claim", func(t *T) {
		t.needs(t.caps.DeadLetterPolicy, "DeadLetterPolicy")
		s, dead := t.pel(), t.key("dead")
		t.setPolicy(s, 2)
		require.Equal(t, []string{"1-1"}, t.claim(s, "g", "carol", 0, []string{"1-1", "3-1"}, xstream.ClaimArgs{}),
			"3-1 would be delivered a third time: moved instead")
		require.Equal(t, []string{"1-1:carol:2", "2-1:alice:1", "4-1:bob:2", "5-1:alice:1"}, t.pendingOwners(s, "g"))
		es, err := t.e.Range(t.ctx, dead, "-", "+", 0)
		require.NoError(t, err)
		require.Len(t, es, 1)
		require.Equal(t, append(deadMeta(s, "3-1", "bob", "2"), f("3-1")...), es[0].Fields)
		g := t.groupInfo(s, "g")
		require.Equal(t, int64(1), g.DeadLettered)
		require.Equal(t, xstream.DeadLetterPolicy{MaxDeliveries: 2, Stream: dead}, g.DeadLetter)
	}},
	{"AutoClaim", func(t *T) {
		t.needs(t.caps.DeadLetterPolicy, "DeadLetterPolicy")
		s, dead := t.pel(), t.key("dead")
		t.setPolicy(s, 2)
		res := t.autoClaim(s, "g", "carol", 0, "0", xstream.AutoClaimArgs{Count: 3})
		require.Equal(t, []string{"1-1", "2-1"}, idsOf(res.Entries))
		require.Len(t, res.DeadLetters, 1, "moved entries count toward Count")
		require.Equal(t, id("3-1"), res.DeadLetters[0].ID)
		require.Equal(t, int64(2), res.DeadLetters[0].Deliveries)
		require.Equal(t, id("4-1"), res.Next)
		require.Equal(t, int64(1), t.length(dead))
		require.Equal(t, int64(1), t.groupInfo(s, "g").DeadLettered)
	}},
	{"History", func(t *T) {
		t.needs(t.caps.DeadLetterPolicy, "DeadLetterPolicy")
		s, dead := t.pel(), t.key("dead")
		t.setPolicy(s, 2)
		require.Equal(t, []streamIDs{{s, []string{}}}, t.readGroup("g", "bob", xstream.ReadGroupArgs{}, s, "0"),
			"a third delivery of both: moved instead")
		require.Equal(t, []streamIDs{{s, []string{"1-1", "2-1", "5-1"}}}, t.readGroup("g", "alice", xstream.ReadGroupArgs{}, s, "0"), "the second delivery")
		require.Equal(t, []string{"1-1:alice:2", "2-1:alice:2", "5-1:alice:2"}, t.pendingOwners(s, "g"))
		es, err := t.e.Range(t.ctx, dead, "-", "+", 0)
		require.NoError(t, err)
		require.Len(t, es, 2)
		require.Equal(t, append(deadMeta(s, "3-1", "bob", "2"), f("3-1")...), es[0].Fields)
		require.Equal(t, append(deadMeta(s, "4-1", "bob", "2"), f("4-1")...), es[1].Fields)
		// A ">" read never moves: a new entry is delivered once.
		require.Equal(t, []string{"6-1"}, t.readNew(s, "g", "bob", 0))
		require.Equal(t, int64(2), t.groupInfo(s, "g").DeadLettered)
	}},
	{"CreateGroup", func(t *T) {
		t.needs(t.caps.DeadLetterPolicy, "DeadLetterPolicy")
		s := t.key("s")
		t.fill(s, "1-1")
		p := xstream.DeadLetterPolicy{MaxDeliveries: 1, Stream: t.key("dead")}
		require.NoError(t, t.e.CreateGroup(t.ctx, s, "g", "0", xstream.GroupOptions{DeadLetter: p}))
		require.Equal(t, p, t.groupInfo(s, "g").DeadLetter)
		require.Equal(t, []string{"1-1"}, t.readNew(s, "g", "alice", 0))
		require.Empty(t, t.claim(s, "g", "bob", 0, []string{"1-1"}, xstream.ClaimArgs{}))
		require.Equal(t, int64(1), t.length(t.key("dead")))
		// The zero policy removes it; the count stays.
		require.NoError(t, xstream.SetDeadLetterPolicy(t.ctx, t.e, s, "g", xstream.DeadLetterPolicy{}))
		g := t.groupInfo(s, "g")
		require.Equal(t, xstream.DeadLetterPolicy{}, g.DeadLetter)
		require.Equal(t, int64(1), g.DeadLettered)
	}},
	{"Errors", func(t *T) {
		t.needs(t.caps.DeadLetterPolicy, "DeadLetterPolicy")
		s, dead := t.pel(), t.key("dead")
		p := xstream.DeadLetterPolicy{MaxDeliveries: 1, Stream: dead}
		isErr(t, xstream.SetDeadLetterPolicy(t.ctx, t.e, t.key("missing"), "g", p), xstream.ErrNoStream, "missing stream")
		isErr(t, xstream.SetDeadLetterPolicy(t.ctx, t.e, s, "nope", p), xstream.ErrNoGroup, "missing group")
		for _, bad := range []xstream.DeadLetterPolicy{{MaxDeliveries: 0, Stream: dead}, {MaxDeliveries: -1, Stream: dead}, {MaxDeliveries: 1}, {MaxDeliveries: 1, Stream: s}} {
			isErr(t, xstream.SetDeadLetterPolicy(t.ctx, t.e, s, "g", bad), xstream.ErrInvalidArgument, "%+v", bad)
			isErr(t, t.e.CreateGroup(t.ctx, s, "h", "0", xstream.GroupOptions{DeadLetter: bad}), xstream.ErrInvalidArgument, "%+v", bad)
		}
		require.Equal(t, xstream.DeadLetterPolicy{}, t.groupInfo(s, "g").DeadLetter, "a failed call changes nothing")
		gs, err := t.e.Groups(t.ctx, s)
		require.NoError(t, err)
		require.Len(t, gs, 1)
		require.Equal(t, pelRows, t.pendingOwners(s, "g"))
		require.Zero(t, t.length(dead))
	}},
	unsupported(func(c Caps) bool { return c.DeadLetterPolicy }, "DeadLetterPolicy", func(t *T) error {
		err := t.e.CreateGroup(t.ctx, t.key("s"), "h", "0", xstream.GroupOptions{DeadLetter: xstream.DeadLetterPolicy{MaxDeliveries: 1, Stream: t.key("dead")}})
		isErr(t, err, errors.ErrUnsupported, "CreateGroup with a policy")
		gs, gerr := t.e.Groups(t.ctx, t.key("s"))
		require.NoError(t, gerr)
		require.Len(t, gs, 1, "no group made")
		return xstream.SetDeadLetterPolicy(t.ctx, t.e, t.key("s"), "g", xstream.DeadLetterPolicy{MaxDeliveries: 1, Stream: t.key("dead")})
	}),
}
