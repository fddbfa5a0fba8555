package xstream

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"
)

// Every test is checked as bbolt's test helper checks a database after
// each test: checkStream registers a check of a stream's invariants
// (Stream.checkLocked) in t.Cleanup, and TestMain checks every stream
// that any test made, once all tests ran.

var (
	madeMu  sync.Mutex
	made    []*Stream
	tracked = true
)

func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		tracked = false // benchmarks make millions of entries: keep none
	}
	if tracked {
		testHookNewStream = func(s *Stream) {
			madeMu.Lock()
			made = append(made, s)
			madeMu.Unlock()
		}
	}
	code := m.Run()
	if code == 0 && tracked {
		testHookNewStream = nil
		for _, s := range made {
			if err := checkNow(s); err != nil {
				fmt.Fprintf(os.Stderr, "invariants broken after the tests: %v\n", err)
				code = 1
				break
			}
		}
	}
	os.Exit(code)
}

// checkStream checks the invariants of s when t ends.
func checkStream(t testing.TB, s *Stream) {
	t.Helper()
	t.Cleanup(func() {
		if err := checkNow(s); err != nil {
			t.Errorf("invariants broken: %v", err)
		}
	})
}

func checkNow(s *Stream) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.checkLocked()
}

// TestCheckFindsBrokenState shows that the invariant check is not a check
// that cannot fail: each kind of damage is reported.
func TestCheckFindsBrokenState(t *testing.T) {
	build := func() (*Stream, *group) {
		s := NewStream() // not streamWith: its check would fail the test
		for _, id := range []string{"1", "2", "3"} {
			mustAdd(t, s, id)
		}
		if err := s.CreateGroup("g", "0", GroupOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ReadGroup(t.Context(), "g", "alice", ">", ReadGroupArgs{}); err != nil {
			t.Fatal(err)
		}
		if err := checkNow(s); err != nil {
			t.Fatalf("a sound stream fails the check: %v", err)
		}
		g, _ := s.groupLocked("g")
		return s, g
	}
	damage := map[string]func(s *Stream, g *group){
		"entry missing from its owner's PEL": func(s *Stream, g *group) {
			c := g.byNum[1]
			c.pel.Delete(sid(ID{2, 0}))
		},
		"owner number unknown": func(s *Stream, g *group) {
			g.pel.Get(sid(ID{1, 0})).owner = 7
		},
		"given back with a delivery time": func(s *Stream, g *group) {
			rec := g.pel.Get(sid(ID{3, 0}))
			g.byNum[1].pel.Delete(sid(ID{3, 0}))
			rec.owner = 0
		},
		"dead-letter policies miscounted": func(s *Stream, g *group) {
			g.dead = DeadLetterPolicy{MaxDeliveries: 1, Stream: "x"}
		},
		"storage length": func(s *Stream, g *group) {
			s.st.SetLast(sid(ID{0, 1}), -1, sid(ID{}))
		},
	}
	for name, f := range damage {
		s, g := build()
		f(s, g)
		if err := checkNow(s); err == nil {
			t.Errorf("%s: the check found nothing", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
		// Repair, or the check after the tests would fail the run.
		madeMu.Lock()
		for i, m := range made {
			if m == s {
				made = append(made[:i], made[i+1:]...)
				break
			}
		}
		madeMu.Unlock()
	}
}
