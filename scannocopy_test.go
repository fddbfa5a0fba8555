package xstream

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// collectNoCopy copies what ScanNoCopy yields, as a caller that keeps it
// must.
func collectNoCopy(t *testing.T, s *Stream, start, end string, count int, rev bool) []Entry {
	t.Helper()
	seq, err := s.ScanNoCopy(start, end, count, rev)
	require.NoError(t, err)
	var got []Entry
	for id, fs := range seq {
		e := Entry{ID: id}
		for _, f := range fs {
			e.Fields = append(e.Fields, Field{strings.Clone(f.Name), strings.Clone(f.Value)})
		}
		got = append(got, e)
	}
	return got
}

// ScanNoCopy yields what Range and RevRange return, over many batches,
// blocks of shared and own field names, deleted entries and random bounds
// (inclusive, exclusive, bare ms, reversed).
func TestScanNoCopyMatchesRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	s := NewStream()
	for i := 1; i <= 3000; i++ {
		fs := Fields("n", fmt.Sprint(i), "v", strings.Repeat("x", rng.IntN(40)))
		if rng.IntN(5) == 0 {
			fs = Fields(fmt.Sprint("k", i%7), "", "e", fmt.Sprint(i))
		}
		_, err := s.Add(AddArgs{ID: fmt.Sprintf("%d-%d", i/4+1, i%4)}, fs...)
		require.NoError(t, err)
	}
	for range 300 {
		_, err := s.Delete(fmt.Sprintf("%d-%d", rng.IntN(760), rng.IntN(4)))
		require.NoError(t, err)
	}
	bound := func() string {
		switch rng.IntN(6) {
		case 0:
			return "-"
		case 1:
			return "+"
		case 2:
			return fmt.Sprint(rng.IntN(800))
		case 3:
			return fmt.Sprintf("(%d-%d", rng.IntN(800), rng.IntN(4))
		}
		return fmt.Sprintf("%d-%d", rng.IntN(800), rng.IntN(4))
	}
	for range 300 {
		lo, hi := bound(), bound()
		count := []int{0, 0, 1, 10, 1023, 1024, 1025, 2100, rng.IntN(3000)}[rng.IntN(9)]
		want, err := s.Range(lo, hi, count)
		require.NoError(t, err)
		require.Equal(t, want, collectNoCopy(t, s, lo, hi, count, false), "[%s, %s] count %d", lo, hi, count)
		rwant, err := s.RevRange(hi, lo, count)
		require.NoError(t, err)
		require.Equal(t, rwant, collectNoCopy(t, s, lo, hi, count, true), "rev [%s, %s] count %d", lo, hi, count)
	}
}

// The loop may stop early and may write to the stream (the lock is not
// held while it runs); a bad bound fails before any iteration, naming it.
func TestScanNoCopyStopsAllowsWritesAndRefusesBadBounds(t *testing.T) {
	s := NewStream()
	for i := 1; i <= 200; i++ {
		_, err := s.Add(AddArgs{ID: fmt.Sprint(i)}, Fields("n", fmt.Sprint(i))...)
		require.NoError(t, err)
	}
	seq, err := s.ScanNoCopy("-", "+", 0, true)
	require.NoError(t, err)
	n := 0
	for _, fs := range seq {
		require.Equal(t, fmt.Sprint(200-n), fs[0].Value, "newest first; later Adds are above the scan")
		_, err := s.Add(AddArgs{}, Fields("n", "x")...)
		require.NoError(t, err)
		if n++; n == 150 {
			break
		}
	}
	require.Equal(t, 150, n)
	require.Equal(t, int64(350), s.Len())

	for _, b := range [][3]string{{"x", "+", `"x"`}, {"-", "1-x", `"1-x"`}} {
		_, err := s.ScanNoCopy(b[0], b[1], 0, false)
		require.ErrorIs(t, err, ErrInvalidID)
		require.ErrorContains(t, err, b[2])
	}
	_, err = s.ScanNoCopy("-", "+", -1, false)
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.ErrorContains(t, err, "-1")
	require.Equal(t, int64(350), s.Len())
}

// Once its buffer has grown, a scan allocates nothing per entry or batch:
// a scan of 10,000 entries costs what one of 1,000 does.
func TestScanNoCopyAllocations(t *testing.T) {
	if crashRace { // true under the race detector
		t.Skip("the race detector's sync.Pool drops pooled buffers at random")
	}
	s := NewStream()
	for i := 1; i <= 10_000; i++ {
		_, err := s.Add(AddArgs{ID: fmt.Sprint(i)}, Fields("sensor", "1234", "temperature", "19.8")...)
		require.NoError(t, err)
	}
	scan := func(end string) func() {
		return func() {
			seq, _ := s.ScanNoCopy("-", end, 0, false)
			for range seq {
			}
		}
	}
	scan("+")() // grow the pooled buffers
	small, big := testing.AllocsPerRun(20, scan("1000")), testing.AllocsPerRun(20, scan("+"))
	require.LessOrEqual(t, big, small+1, "10,000 entries: %.0f allocations, 1,000: %.0f", big, small)
	require.Less(t, big, 10.0)
}
