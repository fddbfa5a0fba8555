package xstreamtest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream"
)

var groupCases = []tcase{
	{"Create", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "2-1", "3-1")
		t.group(s, "dollar", "$")
		t.group(s, "zero", "0")
		t.group(s, "id", "2-1")
		t.group(s, "ms", "2")
		t.group(s, "future", "9-9")
		gs, err := t.e.Groups(t.ctx, s)
		require.NoError(t, err)
		require.Len(t, gs, 5)
		var names []string
		last := map[string]xstream.ID{}
		for _, g := range gs {
			names = append(names, g.Name)
			last[g.Name] = g.LastDeliveredID
			require.Zero(t, g.Consumers)
			require.Zero(t, g.Pending)
		}
		require.Equal(t, []string{"dollar", "future", "id", "ms", "zero"}, names, "groups in name order")
		require.Equal(t, map[string]xstream.ID{
			"dollar": id("3-1"), "zero": {}, "id": id("2-1"), "ms": id("2-0"), "future": id("9-9"),
		}, last)
		require.Equal(t, 5, t.info(s).Groups)
		require.Equal(t, []string{"1-1", "2-1", "3-1"}, t.readNew(s, "zero", "c", 0))
		require.Equal(t, []string{"2-1", "3-1"}, t.readNew(s, "ms", "c", 0))
		require.Equal(t, []string{"3-1"}, t.readNew(s, "id", "c", 0))
		require.Empty(t, t.readNew(s, "dollar", "c", 0))
		t.add(s, "4-1")
		require.Equal(t, []string{"4-1"}, t.readNew(s, "dollar", "c", 0))
	}},
	{"MkStream", func(t *T) {
		s := t.key("s")
		err := t.e.CreateGroup(t.ctx, s, "g", "$", xstream.GroupOptions{})
		isErr(t, err, xstream.ErrNoStream, "CreateGroup needs a stream, or MkStream")
		_, err = t.e.Info(t.ctx, s)
		isErr(t, err, xstream.ErrNoStream)
		require.NoError(t, t.e.CreateGroup(t.ctx, s, "g", "$", xstream.GroupOptions{MkStream: true}))
		require.Equal(t, infoFields{Groups: 1}, fieldsOf(t.info(s)))
		require.Equal(t, xstream.GroupInfo{Name: "g", LagKnown: true}, t.groupInfo(s, "g"))
		t.fill(s, "1-1")
		require.NoError(t, t.e.CreateGroup(t.ctx, s, "h", "0", xstream.GroupOptions{MkStream: true}), "MkStream on an existing stream")
		require.Equal(t, []string{"1-1"}, t.readNew(s, "h", "c", 0))
		require.Equal(t, []string{"1-1"}, t.readNew(s, "g", "c", 0))

		// A bad call with MkStream creates nothing.
		m := t.key("m")
		err = t.e.CreateGroup(t.ctx, m, "g", "x", xstream.GroupOptions{MkStream: true})
		isErr(t, err, xstream.ErrInvalidID)
		err = t.e.CreateGroup(t.ctx, m, "g", "0", xstream.GroupOptions{MkStream: true, EntriesRead: ptr(int64(-2))})
		isErr(t, err, xstream.ErrInvalidArgument)
		_, err = t.e.Info(t.ctx, m)
		isErr(t, err, xstream.ErrNoStream)
	}},
	{"Exists", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1")
		t.group(s, "g", "0")
		require.Len(t, t.readNew(s, "g", "c", 0), 1)
		err := t.e.CreateGroup(t.ctx, s, "g", "$", xstream.GroupOptions{})
		isErr(t, err, xstream.ErrGroupExists)
		err = t.e.CreateGroup(t.ctx, s, "g", "0", xstream.GroupOptions{MkStream: true})
		isErr(t, err, xstream.ErrGroupExists)
		g := t.groupInfo(s, "g")
		require.Equal(t, id("1-1"), g.LastDeliveredID, "the group is left as it was")
		require.Equal(t, int64(1), g.Pending)
	}},
	{"CreateErrors", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1")
		for _, bad := range []string{"x", "", ">", "*", "(1-1", "1-*"} {
			err := t.e.CreateGroup(t.ctx, s, "g", bad, xstream.GroupOptions{})
			isErr(t, err, xstream.ErrInvalidID, "CreateGroup %q", bad)
		}
		err := t.e.CreateGroup(t.ctx, s, "g", "0", xstream.GroupOptions{EntriesRead: ptr(int64(-2))})
		isErr(t, err, xstream.ErrInvalidArgument)
		gs, err := t.e.Groups(t.ctx, s)
		require.NoError(t, err)
		require.Empty(t, gs, "a failed CreateGroup creates nothing")
	}},
	{"EntriesRead", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "2-1", "3-1", "4-1")
		require.NoError(t, t.e.CreateGroup(t.ctx, s, "g", "1-1", xstream.GroupOptions{EntriesRead: ptr(int64(1))}))
		g := t.groupInfo(s, "g")
		require.True(t, g.EntriesReadKnown)
		require.Equal(t, int64(1), g.EntriesRead)
		require.True(t, g.LagKnown)
		require.Equal(t, int64(3), g.Lag)
		require.NoError(t, t.e.CreateGroup(t.ctx, s, "h", "0", xstream.GroupOptions{EntriesRead: ptr(int64(-1))}))
		require.False(t, t.groupInfo(s, "h").EntriesReadKnown, "-1: unknown")
	}},
	{"SetGroupID", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "2-1", "3-1")
		t.group(s, "g", "0")
		require.Equal(t, []string{"1-1", "2-1", "3-1"}, t.readNew(s, "g", "alice", 0))
		require.NoError(t, t.e.SetGroupID(t.ctx, s, "g", "1-1", xstream.GroupOptions{}))
		require.Equal(t, id("1-1"), t.groupInfo(s, "g").LastDeliveredID)
		// Entries delivered again move to their new reader and start over.
		require.Equal(t, []string{"2-1"}, t.readNew(s, "g", "bob", 1))
		require.Equal(t, []string{"1-1:alice:1", "2-1:bob:1", "3-1:alice:1"}, t.pendingOwners(s, "g"))
		require.Equal(t, []string{"3-1"}, t.readNew(s, "g", "alice", 0))
		require.Equal(t, []string{"1-1:alice:1", "2-1:bob:1", "3-1:alice:1"}, t.pendingOwners(s, "g"))

		require.NoError(t, t.e.SetGroupID(t.ctx, s, "g", "0", xstream.GroupOptions{}))
		require.Equal(t, xstream.ID{}, t.groupInfo(s, "g").LastDeliveredID)
		require.NoError(t, t.e.SetGroupID(t.ctx, s, "g", "$", xstream.GroupOptions{}))
		require.Equal(t, id("3-1"), t.groupInfo(s, "g").LastDeliveredID)
		require.Empty(t, t.readNew(s, "g", "alice", 0))
		require.NoError(t, t.e.SetGroupID(t.ctx, s, "g", "2", xstream.GroupOptions{EntriesRead: ptr(int64(1))}))
		g := t.groupInfo(s, "g")
		require.Equal(t, id("2-0"), g.LastDeliveredID)
		require.True(t, g.EntriesReadKnown)
		require.Equal(t, int64(1), g.EntriesRead)
		require.Equal(t, int64(2), g.Lag)
	}},
	{"SetGroupIDErrors", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1")
		t.group(s, "g", "0")
		err := t.e.SetGroupID(t.ctx, t.key("missing"), "g", "0", xstream.GroupOptions{})
		isErr(t, err, xstream.ErrNoStream)
		err = t.e.SetGroupID(t.ctx, s, "nope", "0", xstream.GroupOptions{})
		isErr(t, err, xstream.ErrNoGroup)
		for _, bad := range []string{"x", "", ">", "*", "(1-1"} {
			err := t.e.SetGroupID(t.ctx, s, "g", bad, xstream.GroupOptions{})
			isErr(t, err, xstream.ErrInvalidID, "SetGroupID %q", bad)
		}
		err = t.e.SetGroupID(t.ctx, s, "g", "1-1", xstream.GroupOptions{EntriesRead: ptr(int64(-2))})
		isErr(t, err, xstream.ErrInvalidArgument)
		require.Equal(t, xstream.ID{}, t.groupInfo(s, "g").LastDeliveredID, "a failed SetGroupID changes nothing")
	}},
	{"Destroy", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1")
		t.group(s, "g", "0")
		t.group(s, "h", "0")
		require.Len(t, t.readNew(s, "g", "c", 0), 1)
		ok, err := t.e.DestroyGroup(t.ctx, s, "g")
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = t.e.DestroyGroup(t.ctx, s, "g")
		require.NoError(t, err)
		require.False(t, ok, "destroyed already")
		gs, err := t.e.Groups(t.ctx, s)
		require.NoError(t, err)
		require.Len(t, gs, 1)
		require.Equal(t, "h", gs[0].Name)
		require.Equal(t, 1, t.info(s).Groups)
		_, err = t.e.ReadGroup(t.ctx, "g", "c", xstream.ReadGroupArgs{}, s, ">")
		isErr(t, err, xstream.ErrNoGroup)
		_, err = t.e.Pending(t.ctx, s, "g")
		isErr(t, err, xstream.ErrNoGroup, "the PEL went with the group")
		t.group(s, "g", "0")
		require.Zero(t, t.groupInfo(s, "g").Pending, "a new group of the same name starts afresh")
		_, err = t.e.DestroyGroup(t.ctx, t.key("missing"), "g")
		isErr(t, err, xstream.ErrNoStream)
	}},
	{"DestroyBlocked", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1")
		t.group(s, "g", "$")
		// The reader is blocked or not yet there: either way it ends
		// with ErrNoGroup.
		ch := async(func() ([]xstream.StreamEntries, error) {
			return t.e.ReadGroup(t.ctx, "g", "c", xstream.ReadGroupArgs{Block: xstream.BlockForever}, s, ">")
		})
		ok, err := t.e.DestroyGroup(t.ctx, s, "g")
		require.NoError(t, err)
		require.True(t, ok)
		_, err = await(t, ch, "a ReadGroup blocked on a destroyed group")
		isErr(t, err, xstream.ErrNoGroup)
	}},
	{"Consumers", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "2-1", "3-1")
		t.group(s, "g", "0")
		created, err := t.e.CreateConsumer(t.ctx, s, "g", "carol")
		require.NoError(t, err)
		require.True(t, created)
		created, err = t.e.CreateConsumer(t.ctx, s, "g", "carol")
		require.NoError(t, err)
		require.False(t, created, "exists already")
		require.Len(t, t.readNew(s, "g", "bob", 2), 2)
		require.Len(t, t.readNew(s, "g", "alice", 0), 1)
		cs, err := t.e.Consumers(t.ctx, s, "g")
		require.NoError(t, err)
		var pend []string
		for _, c := range cs {
			pend = append(pend, c.Name+":"+itoa(int(c.Pending)))
			require.GreaterOrEqual(t, c.Idle, time.Duration(0))
		}
		require.Equal(t, []string{"alice:1", "bob:2", "carol:0"}, pend, "consumers in name order")
		require.Equal(t, 3, t.groupInfo(s, "g").Consumers)
		created, err = t.e.CreateConsumer(t.ctx, s, "g", "bob")
		require.NoError(t, err)
		require.False(t, created, "ReadGroup created it")

		n, err := t.e.DeleteConsumer(t.ctx, s, "g", "bob")
		require.NoError(t, err)
		require.Equal(t, int64(2), n, "its pending entries")
		require.Equal(t, []string{"3-1:alice:1"}, t.pendingOwners(s, "g"), "they left the group's PEL")
		n, err = t.e.DeleteConsumer(t.ctx, s, "g", "bob")
		require.NoError(t, err)
		require.Zero(t, n, "a missing consumer")
		n, err = t.e.DeleteConsumer(t.ctx, s, "g", "carol")
		require.NoError(t, err)
		require.Zero(t, n)
		cs, err = t.e.Consumers(t.ctx, s, "g")
		require.NoError(t, err)
		require.Len(t, cs, 1)
		require.Equal(t, "alice", cs[0].Name)
		require.Equal(t, 1, t.groupInfo(s, "g").Consumers)
		require.Equal(t, int64(1), t.groupInfo(s, "g").Pending)
		require.Empty(t, t.readNew(s, "g", "bob", 0), "their entries are not delivered again")
	}},
	{"ConsumersClock", func(t *T) {
		t.needClock()
		s := t.key("s")
		t.fill(s, "1-1")
		t.group(s, "g", "0")
		require.Len(t, t.readNew(s, "g", "alice", 0), 1)
		_, err := t.e.CreateConsumer(t.ctx, s, "g", "bob")
		require.NoError(t, err)
		t.advance(3 * time.Second)
		cs, err := t.e.Consumers(t.ctx, s, "g")
		require.NoError(t, err)
		require.Len(t, cs, 2)
		for _, c := range cs {
			require.GreaterOrEqual(t, c.Idle, 3*time.Second, c.Name)
			require.Less(t, c.Idle, 3*time.Second+time.Minute, c.Name)
		}
		require.True(t, cs[0].InactiveKnown)
		require.GreaterOrEqual(t, cs[0].Inactive, 3*time.Second)
		require.False(t, cs[1].InactiveKnown, "bob never read anything")
		require.Empty(t, t.readNew(s, "g", "alice", 0))
		cs, err = t.e.Consumers(t.ctx, s, "g")
		require.NoError(t, err)
		require.Less(t, cs[0].Idle, 3*time.Second, "an attempted read resets the idle time")
		require.GreaterOrEqual(t, cs[0].Inactive, 3*time.Second, "but not the inactive time")
	}},
	{"Errors", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1")
		t.group(s, "g", "0")
		missing := t.key("missing")
		_, err := t.e.Groups(t.ctx, missing)
		isErr(t, err, xstream.ErrNoStream)
		_, err = t.e.Consumers(t.ctx, missing, "g")
		isErr(t, err, xstream.ErrNoStream)
		_, err = t.e.Consumers(t.ctx, s, "nope")
		isErr(t, err, xstream.ErrNoGroup)
		_, err = t.e.CreateConsumer(t.ctx, missing, "g", "c")
		isErr(t, err, xstream.ErrNoStream)
		_, err = t.e.CreateConsumer(t.ctx, s, "nope", "c")
		isErr(t, err, xstream.ErrNoGroup)
		_, err = t.e.DeleteConsumer(t.ctx, missing, "g", "c")
		isErr(t, err, xstream.ErrNoStream)
		_, err = t.e.DeleteConsumer(t.ctx, s, "nope", "c")
		isErr(t, err, xstream.ErrNoGroup)
		_, err = t.e.Info(t.ctx, missing)
		isErr(t, err, xstream.ErrNoStream, "no call created the stream")
	}},
}
