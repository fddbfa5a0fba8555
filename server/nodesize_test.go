package server

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// Blocks end where Redis's listpack nodes end, by entries and by bytes
// counted as Redis's listpacks count them (integers, short and long
// strings, repeated and new field names), so approximate trims remove
// what Redis's remove: random entries, node sizes and trims, compared
// with redis-server call by call.
func TestDiffNodeBoundaries(t *testing.T) {
	p := newPair(t)
	defer p.do("CONFIG", "SET", "stream-node-max-entries", "100", "stream-node-max-bytes", "4096")
	rng := rand.New(rand.NewPCG(7, 11))
	value := func() string {
		switch rng.IntN(6) {
		case 0:
			return strconv.Itoa(rng.IntN(200) - 100) // small integers
		case 1:
			return strconv.FormatInt(rng.Int64N(1<<40)-1<<39, 10) // big integers
		case 2:
			return "0" + strconv.Itoa(rng.IntN(100)) // not canonical: a string
		case 3:
			return strings.Repeat("v", 60+rng.IntN(10)) // around the 64-byte step
		case 4:
			return strings.Repeat("w", rng.IntN(300))
		}
		return "x" + strconv.Itoa(rng.IntN(1000))
	}
	for round := range 20 {
		entries, bytes := []string{"0", "3", "10", "100"}[rng.IntN(4)], []string{"0", "64", "200", "1000", "4096", "1kb"}[rng.IntN(6)]
		if entries == "0" && bytes == "0" {
			bytes = "500"
		}
		t.Logf("round %d: entries %s, bytes %s", round, entries, bytes)
		p.do("CONFIG", "SET", "stream-node-max-entries", entries, "stream-node-max-bytes", bytes)
		key := "nb" + strconv.Itoa(round)
		p.do("DEL", key)
		ms := 1
		for i := range 150 {
			ms += rng.IntN(3)
			args := []string{"XADD", key, strconv.Itoa(ms) + "-" + strconv.Itoa(i)}
			names := []string{"a", "b", "c"}
			if rng.IntN(4) == 0 {
				names = []string{"n" + strconv.Itoa(rng.IntN(3)), "12"}
			}
			for _, n := range names[:1+rng.IntN(len(names))] {
				args = append(args, n, value())
			}
			p.do(args...)
			if rng.IntN(40) == 0 {
				p.do("XTRIM", key, "MAXLEN", "~", strconv.Itoa(rng.IntN(100)))
			}
			if rng.IntN(30) == 0 {
				p.do("XDEL", key, strconv.Itoa(ms)+"-"+strconv.Itoa(i))
			}
		}
		p.do("XTRIM", key, "MAXLEN", "~", "10")
		p.do("XLEN", key)
		p.do("XRANGE", key, "-", "+", "COUNT", "1")
	}
}
