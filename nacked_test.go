package xstream

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// GroupDetail.Nacked counts, over the whole PEL whatever InfoFull's
// count, the entries given back by Nack and not delivered since (Redis
// 8.8's nacked-count: the entries of the NACK zone).
func TestInfoFullNackedCount(t *testing.T) {
	s, _ := nkStream(t, 5)
	nackedOf := func(count int) int64 {
		t.Helper()
		info, err := s.InfoFull(count)
		require.NoError(t, err)
		require.Len(t, info.GroupDetails, 1)
		return info.GroupDetails[0].Nacked
	}
	require.Zero(t, nackedOf(0))
	doNack(t, s, NackFail, NackArgs{}, "2", "4", "5")
	require.EqualValues(t, 3, nackedOf(0))
	require.EqualValues(t, 3, nackedOf(1), "the count caps the rows, not the nacked count")

	// A claim takes an entry out (AutoClaim takes given-back entries
	// whatever their idle time); an ack too.
	res, err := s.AutoClaim("g", "c2", time.Hour, "-", AutoClaimArgs{Count: 1})
	require.NoError(t, err)
	require.Len(t, res.Entries, 1)
	require.EqualValues(t, 2, nackedOf(0), "c2 got the first given-back entry")
	n, err := s.Ack("g", "4")
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	require.EqualValues(t, 1, nackedOf(0))
	_, err = s.Claim("g", "c3", 0, []string{"5"}, ClaimArgs{})
	require.NoError(t, err)
	require.Zero(t, nackedOf(0))
}
