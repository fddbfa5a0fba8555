package kinesis

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream"
)

// The mapping is injective and order-preserving within a shard, and
// decodes back.
func TestSeqNumMapping(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	edge := []xstream.ID{{}, {Ms: 1}, {Seq: 1}, {Ms: 1<<48 - 1, Seq: 1<<56 - 1}, {Ms: 1733000000000, Seq: 7}}
	for range 2000 {
		edge = append(edge, xstream.ID{Ms: r.Uint64N(1 << 48), Seq: r.Uint64N(1 << 56)},
			xstream.ID{Ms: 1733000000000 + r.Uint64N(10), Seq: r.Uint64N(5)})
	}
	shards := []int{0, 1, 2, 1<<24 - 1, 77}
	seen := map[seqNum]bool{}
	for _, sh := range shards {
		for _, id := range edge {
			n, ok := encodeSeq(sh, id)
			require.True(t, ok)
			gs, gid := decodeSeq(n)
			require.Equal(t, sh, gs)
			require.Equal(t, id, gid)
			seen[n] = true
			require.Equal(t, n.String(), string(appendDecimal(nil, n)))
			// Through the decimal form too.
			ps, pid, ok := parseSeq(n.String())
			require.True(t, ok)
			require.Equal(t, sh, ps)
			require.Equal(t, id, pid)
		}
		for i := 1; i < len(edge); i++ {
			a, _ := encodeSeq(sh, edge[i-1])
			b, _ := encodeSeq(sh, edge[i])
			require.Equal(t, edge[i-1].Compare(edge[i]), a.Compare(b), "%v vs %v", edge[i-1], edge[i])
		}
	}
	distinct := map[[3]uint64]bool{}
	for _, sh := range shards {
		for _, id := range edge {
			distinct[[3]uint64{uint64(sh), id.Ms, id.Seq}] = true
		}
	}
	require.Len(t, seen, len(distinct))

	for _, n := range []seqNum{{}, {Lo: 1<<64 - 1}, {Hi: 1}, {Hi: 1<<64 - 1, Lo: 1<<64 - 1}, {Hi: 5421010862427522170, Lo: 687399551400673280}} {
		require.Equal(t, n.String(), string(appendDecimal(nil, n)))
	}
	_, ok := encodeSeq(0, xstream.ID{Ms: 1 << 48})
	require.False(t, ok)
	_, ok = encodeSeq(0, xstream.ID{Seq: 1 << 56})
	require.False(t, ok)
	_, ok = encodeSeq(1<<24, xstream.ID{})
	require.False(t, ok)
}
