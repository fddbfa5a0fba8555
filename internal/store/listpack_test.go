package store

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// The bound fitsBytes relies on (openBound, from lpEntryBound) is never
// below the block's listpack size, for any entries: integers of every
// width and sign, strings around every length step, IDs whose sequence
// difference to the master is negative.
func TestListpackBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	value := func() string {
		switch rng.IntN(7) {
		case 0:
			return strconv.FormatInt(rng.Int64()-1<<62, 10)
		case 1:
			return strconv.Itoa(rng.IntN(300) - 150)
		case 2:
			return strings.Repeat("s", []int{0, 1, 62, 63, 64, 126, 127, 128, 4094, 4095, 4096, 5000}[rng.IntN(12)])
		case 3:
			return "-0"
		case 4:
			return "007"
		case 5:
			return "9223372036854775808" // past int64: a string
		}
		return "v" + strconv.Itoa(rng.IntN(10))
	}
	for round := range 300 {
		var s Blocks
		s.SetLimits(Limits{MaxEntries: -1, MaxBytes: -1})
		id := ID{Ms: uint64(rng.IntN(1000)), Seq: rng.Uint64N(1 << 63)}
		for range 1 + rng.IntN(40) {
			var fields []Field
			for range 1 + rng.IntN(4) {
				fields = append(fields, Field{Name: []string{"a", "b", "12", value()}[rng.IntN(4)], Value: value()})
			}
			s.Append(id, fields)
			if lp := blockLP(s.open, s.openNames); lp > s.openBound {
				t.Fatalf("round %d: listpack size %d over the bound %d", round, lp, s.openBound)
			}
			if rng.IntN(2) == 0 {
				id = ID{Ms: id.Ms + uint64(1+rng.IntN(1<<20)), Seq: rng.Uint64N(10)} // seq below the master's
			} else {
				id.Seq++
			}
		}
		if lp := blockLP(s.open, s.openNames); lp > s.openBound {
			t.Fatalf("round %d: listpack size %d over the bound %d (%d bytes, %d entries)", round, lp, s.openBound, len(s.open.data), len(s.open.offs))
		}
	}
}

// Sizes of single elements, as Redis's listpack encodes them.
func TestListpackSizes(t *testing.T) {
	for _, c := range []struct {
		s    string
		want int
	}{
		{"0", 2}, {"127", 2}, {"128", 3}, {"-1", 3}, {"4095", 3}, {"-4096", 3}, {"4096", 4}, {"32767", 4},
		{"32768", 5}, {"8388607", 5}, {"8388608", 6}, {"2147483647", 6}, {"2147483648", 10},
		{"-0", 4}, {"01", 4}, {"", 2}, {"a", 3}, {strings.Repeat("a", 63), 65}, {strings.Repeat("a", 64), 67},
		{strings.Repeat("a", 125), 128}, {strings.Repeat("a", 126), 130}, {strings.Repeat("a", 4095), 4099},
		{strings.Repeat("a", 4096), 4103}, {"9223372036854775807", 10}, {"9223372036854775808", 21},
	} {
		if got := lpStrSize(c.s); got != c.want {
			t.Errorf("lpStrSize(%.20q, len %d) = %d, want %d", c.s, len(c.s), got, c.want)
		}
	}
}

// lpEntryBound is lpEntrySize for entries without integers, of names and
// values of every length step, with the master's names or not, and above
// it by what the integers save.
func TestListpackBoundExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	master := ID{1 << 40, 50}
	for range 3000 {
		fields := make([]Field, 1+rng.IntN(4))
		saved := 0
		for i := range fields {
			fields[i].Name = strings.Repeat("n", rng.IntN(70))
			fields[i].Value = "v" + strings.Repeat("s", []int{0, 1, 62, 63, 64, 126, 127, 4094, 4095, 5000}[rng.IntN(10)])
			if rng.IntN(3) == 0 {
				fields[i].Value = strconv.FormatInt(rng.Int64N(1<<40)-1<<39, 10)
				saved += lpStrMax(fields[i].Value) - lpStrSize(fields[i].Value)
			}
		}
		id := ID{master.Ms + rng.Uint64N(1<<20), rng.Uint64N(1 << 20)}
		same := rng.IntN(2) == 0
		if got, want := lpEntryBound(master, id, same, fields), lpEntrySize(master, id, same, fields)+saved; got != want {
			t.Fatalf("lpEntryBound of %v (same %v) = %d, want %d", fields, same, got, want)
		}
	}
}
