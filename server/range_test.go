package server

import (
	"runtime"
	"strings"
	"testing"

	"github.com/xstreamgo/xstream"
)

// entriesReply is the reply string of es as the test client formats it.
func entriesReply(es []xstream.Entry) string {
	var b strings.Builder
	b.WriteString("[")
	for i, e := range es {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(`[$"` + e.ID.String() + `" [`)
		for j, f := range e.Fields {
			if j > 0 {
				b.WriteString(" ")
			}
			b.WriteString(`$"` + f.Name + `" $"` + f.Value + `"`)
		}
		b.WriteString("]]")
	}
	b.WriteString("]")
	return b.String()
}

// XRANGE and XREVRANGE read long ranges a page at a time; the pages join
// into exactly the reply of one Range, at every count around the page
// size, in both directions, with deleted entries in the way.
func TestRangeReplyPages(t *testing.T) {
	srv := RunT(t)
	s := srv.DB(0).Stream("s")
	const n = 3*rangePage + 17
	for i := 1; i <= n; i++ {
		if _, err := s.Add(xstream.AddArgs{ID: itoa(i) + "-1"}, xstream.Field{Name: "f", Value: itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	// Holes at a page boundary and inside pages.
	if _, err := s.Delete(itoa(rangePage)+"-1", itoa(rangePage+1)+"-1", "7-1", itoa(2*rangePage+5)+"-1"); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, srv.Addr())
	for _, count := range []int{0, 1, rangePage - 1, rangePage, rangePage + 1, 2*rangePage + 3, n, n + 5} {
		for _, bounds := range [][2]string{{"-", "+"}, {"3", itoa(n - 2)}, {"(5-1", "(" + itoa(2*rangePage) + "-1"}} {
			args := []string{"XRANGE", "s", bounds[0], bounds[1]}
			rev := []string{"XREVRANGE", "s", bounds[1], bounds[0]}
			if count > 0 {
				args = append(args, "COUNT", itoa(count))
				rev = append(rev, "COUNT", itoa(count))
			}
			want, err := s.Range(bounds[0], bounds[1], count)
			if err != nil {
				t.Fatal(err)
			}
			expect(t, c, entriesReply(want), args...)
			want, err = s.RevRange(bounds[1], bounds[0], count)
			if err != nil {
				t.Fatal(err)
			}
			expect(t, c, entriesReply(want), rev...)
		}
	}
}

// A range reply over the output limit stops being built soon after it
// passes the limit: the memory the command allocates is about the limit,
// not the size of the range.
func TestRangeReplyLimitBoundsMemory(t *testing.T) {
	const limit = 1 << 20
	srv := RunTWith(t, Options{MaxReplyBytes: limit})
	s := srv.DB(0).Stream("s")
	value := strings.Repeat("v", 1000)
	for i := 1; i <= 50_000; i++ { // 50 MB of values
		if _, err := s.Add(xstream.AddArgs{ID: itoa(i) + "-1"}, xstream.Field{Name: "f", Value: value}); err != nil {
			t.Fatal(err)
		}
	}
	c := newClient(t, srv.Addr())
	for _, cmd := range [][]string{{"XRANGE", "s", "-", "+"}, {"XREVRANGE", "s", "+", "-"}, {"XRANGE", "s", "-", "+", "COUNT", "40000"}} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r := c.do(t, cmd...)
		runtime.ReadMemStats(&after)
		if r.kind != '-' || !strings.Contains(r.s, "exceeds the output limit of 1048576 bytes") {
			t.Fatalf("%q: %v", cmd, r)
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%q allocated %d bytes", cmd, alloc)
		if alloc > 16*limit {
			t.Fatalf("%q allocated %d bytes for a reply limited to %d", cmd, alloc, limit)
		}
	}
	expect(t, c, ":50000", "XLEN", "s")
}
