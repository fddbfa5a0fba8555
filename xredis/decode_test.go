package xredis_test

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream"
)

// binaryFields are fields whose order, repeated names and bytes a decoder
// could lose: a map-based reply keeps one "a", in no order, and a text
// decoder may choke on NUL, CR LF or invalid UTF-8.
var binaryFields = []xstream.Field{
	{Name: "z", Value: "1"},
	{Name: "a", Value: "2"},
	{Name: "z", Value: "3"},
	{Name: "", Value: ""},
	{Name: "nul\x00name", Value: "v\x00al\r\n*1\r\n$3\r\n"},
	{Name: "bad\xff\xfeutf8", Value: "\x80\x81"},
	{Name: "a", Value: strings.Repeat("x", 70000)},
}

// TestDecode checks that every call returning entries keeps their fields
// as they were added, over RESP3 (rueidis's default, maps for XREAD) and
// RESP2 (arrays).
func TestDecode(t *testing.T) {
	for _, kind := range kinds {
		for _, resp2 := range []bool{false, true} {
			name := kind + "/RESP3"
			if resp2 {
				name = kind + "/RESP2"
			}
			t.Run(name, func(t *testing.T) {
				e := newEngineWith(t, kind, rueidis.ClientOption{AlwaysRESP2: resp2})
				ctx := bg()
				k := keys(t)
				s, other := k("s"), k("other")
				want := []xstream.Entry{
					{ID: xstream.ID{Ms: 1, Seq: 1}, Fields: binaryFields},
					{ID: xstream.ID{Ms: 2, Seq: 0}, Fields: xstream.Fields("b", "1", "a", "2", "b", "3")},
				}
				for _, w := range want {
					_, err := e.Add(ctx, s, xstream.AddArgs{ID: w.ID.String()}, w.Fields...)
					require.NoError(t, err)
				}
				_, err := e.Add(ctx, other, xstream.AddArgs{ID: "5-5"}, xstream.Fields("x", "y")...)
				require.NoError(t, err)

				es, err := e.Range(ctx, s, "-", "+", 0)
				require.NoError(t, err)
				require.Equal(t, want, es)
				es, err = e.RevRange(ctx, s, "+", "-", 1)
				require.NoError(t, err)
				require.Equal(t, want[1:], es)

				// Several streams, also in different slots of a cluster:
				// each keeps its entries, in the order the streams were
				// given.
				out, err := e.Read(ctx, xstream.ReadArgs{}, other, "0", s, "0")
				require.NoError(t, err)
				require.Equal(t, []xstream.StreamEntries{
					{Stream: other, Entries: []xstream.Entry{{ID: xstream.ID{Ms: 5, Seq: 5}, Fields: xstream.Fields("x", "y")}}},
					{Stream: s, Entries: want},
				}, out)
				out, err = e.Read(ctx, xstream.ReadArgs{}, s, "+")
				require.NoError(t, err)
				require.Equal(t, []xstream.StreamEntries{{Stream: s, Entries: want[1:]}}, out)

				info, err := e.Info(ctx, s)
				require.NoError(t, err)
				require.Equal(t, want[0], *info.FirstEntry)
				require.Equal(t, want[1], *info.LastEntry)

				require.NoError(t, e.CreateGroup(ctx, s, "g", "0", xstream.GroupOptions{}))
				out, err = e.ReadGroup(ctx, "g", "c", xstream.ReadGroupArgs{}, s, ">")
				require.NoError(t, err)
				require.Equal(t, []xstream.StreamEntries{{Stream: s, Entries: want}}, out)
				out, err = e.ReadGroup(ctx, "g", "c", xstream.ReadGroupArgs{}, s, "0")
				require.NoError(t, err)
				require.Equal(t, []xstream.StreamEntries{{Stream: s, Entries: want}}, out)

				full, err := e.InfoFull(ctx, s, 0)
				require.NoError(t, err)
				require.Equal(t, want, full.Entries)
				require.Equal(t, want[1], *full.LastEntry)
				require.Len(t, full.GroupDetails, 1)
				require.Len(t, full.GroupDetails[0].PEL, 2)
				require.Equal(t, "c", full.GroupDetails[0].PEL[0].Consumer)
				require.Equal(t, int64(2), full.GroupDetails[0].PEL[0].Deliveries)
				require.Less(t, full.GroupDetails[0].PEL[0].Idle, time.Minute)
				require.Len(t, full.GroupDetails[0].Consumers, 1)
				require.Equal(t, "c", full.GroupDetails[0].Consumers[0].Name)
				require.WithinDuration(t, time.Now(), full.GroupDetails[0].Consumers[0].SeenTime, time.Minute)

				es, err = e.Claim(ctx, s, "g", "c2", 0, []string{"1-1", "2-0"}, xstream.ClaimArgs{})
				require.NoError(t, err)
				require.Equal(t, want, es)
				res, err := e.AutoClaim(ctx, s, "g", "c3", 0, "-", xstream.AutoClaimArgs{})
				require.NoError(t, err)
				require.Equal(t, want, res.Entries)
				require.True(t, res.Next.IsZero())

				// A pending entry whose message was deleted: an ID with no
				// fields (history), or one that AutoClaim reports deleted.
				n, err := e.Delete(ctx, s, "1-1")
				require.NoError(t, err)
				require.Equal(t, int64(1), n)
				out, err = e.ReadGroup(ctx, "g", "c3", xstream.ReadGroupArgs{}, s, "0")
				require.NoError(t, err)
				require.Equal(t, []xstream.StreamEntries{{Stream: s, Entries: []xstream.Entry{{ID: want[0].ID}, want[1]}}}, out)
				res, err = e.AutoClaim(ctx, s, "g", "c", 0, "-", xstream.AutoClaimArgs{JustID: true})
				require.NoError(t, err)
				require.Equal(t, []xstream.ID{want[0].ID}, res.Deleted)
				require.Equal(t, []xstream.Entry{{ID: want[1].ID}}, res.Entries)
			})
		}
	}
}
