package xstream

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestScanMatchesRange(t *testing.T) {
	s := NewStream()
	for i := 1; i <= 1000; i++ {
		_, err := s.Add(AddArgs{ID: fmt.Sprintf("%d-%d", i/3+1, i%3)}, Fields("n", fmt.Sprint(i))...)
		require.NoError(t, err)
	}
	_, err := s.Delete("10-0", "50-1", "200-2")
	require.NoError(t, err)
	for _, b := range [][2]string{{"-", "+"}, {"5", "70"}, {"(5-1", "(300-2"}, {"400", "+"}, {"9", "3"}} {
		want, err := s.Range(b[0], b[1], 0)
		require.NoError(t, err)
		seq, err := s.Scan(b[0], b[1])
		require.NoError(t, err)
		var got []Entry
		for id, fs := range seq {
			got = append(got, Entry{id, fs})
		}
		require.Equal(t, want, got, "bounds %v", b)
	}
}

func TestScanStopsEarlyAndAllowsWrites(t *testing.T) {
	s := NewStream()
	for i := 1; i <= 200; i++ {
		_, err := s.Add(AddArgs{ID: fmt.Sprint(i)}, Fields("n", fmt.Sprint(i))...)
		require.NoError(t, err)
	}
	seq, err := s.Scan("-", "+")
	require.NoError(t, err)
	n := 0
	for id := range seq {
		n++
		// Writing inside the loop must not deadlock; entries added
		// during the scan are seen.
		_, err := s.Add(AddArgs{ID: fmt.Sprint(1000 + id.Ms)}, Fields("n", "x")...)
		require.NoError(t, err)
		if n == 250 {
			break
		}
	}
	require.Equal(t, 250, n)
	require.Equal(t, int64(450), s.Len())
}

func TestScanBadBound(t *testing.T) {
	s := NewStream()
	_, err := s.Scan("x", "+")
	require.ErrorIs(t, err, ErrInvalidID)
	require.ErrorContains(t, err, `"x"`)
}
