package xredis_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream"
)

// Groups reads the dead-letter fields that xstream's server adds to XINFO
// GROUPS for a group with a policy (set there with XGROUPCFG, which the
// engine does not send); on every server a group without one has none.
func TestGroupsDeadLetterFields(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			e := newEngine(t, kind)
			k := keys(t)
			s, dead := k("s"), k("dead")
			_, err := e.Add(bg(), s, xstream.AddArgs{ID: "1-1"}, xstream.Fields("f", "v")...)
			require.NoError(t, err)
			require.NoError(t, e.CreateGroup(bg(), s, "g", "0", xstream.GroupOptions{}))
			gs, err := e.Groups(bg(), s)
			require.NoError(t, err)
			require.Equal(t, xstream.DeadLetterPolicy{}, gs[0].DeadLetter)
			require.Zero(t, gs[0].DeadLettered)
			if kind != "xstream" {
				return
			}
			c := e.Client()
			require.NoError(t, c.Do(bg(), c.B().Arbitrary("XGROUPCFG").Keys(s).Args("g", "MAXDELIVER", "1", "DEADLETTER", dead).Build()).Error())
			_, err = e.ReadGroup(bg(), "g", "alice", xstream.ReadGroupArgs{}, s, ">")
			require.NoError(t, err)
			got, err := e.Claim(bg(), s, "g", "bob", 0, []string{"1-1"}, xstream.ClaimArgs{})
			require.NoError(t, err)
			require.Empty(t, got, "moved to the dead-letter stream by the server")
			gs, err = e.Groups(bg(), s)
			require.NoError(t, err)
			require.Equal(t, xstream.DeadLetterPolicy{MaxDeliveries: 1, Stream: dead}, gs[0].DeadLetter)
			require.Equal(t, int64(1), gs[0].DeadLettered)
			require.Equal(t, int64(1), must[int64](t)(e.Len(bg(), dead)))
		})
	}
}
