package server

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/xstreamgo/xstream"
)

// The log barrier before replies (conn.logBarrier): under always, one
// sync for all the commands before it, and for all the clients an event
// loop served in a pass; MISCONF for the writes whose sync failed.

// barrierServer starts a durable server with the policy and loops
// (Options.EventLoops; -1: a goroutine per client) whose log barriers go
// through hook, given DB i and the barrier's real work.
func barrierServer(t *testing.T, policy xstream.SyncPolicy, loops int, hook func(i int, real func(int) error) error) *Server {
	t.Helper()
	srv := New(Options{Dir: t.TempDir(), AppendFsync: policy, EventLoops: loops})
	real := srv.barrierLog
	srv.barrierLog = func(i int) error { return hook(i, real) }
	return startT(t, srv)
}

// eachLoops runs f with the server's clients on an event loop and on
// goroutines of their own.
func eachLoops(t *testing.T, f func(t *testing.T, loops int)) {
	for _, loops := range []int{1, -1} {
		t.Run(fmt.Sprintf("loops=%d", loops), func(t *testing.T) { f(t, loops) })
	}
}

// Under always, the XADDs of a pipeline are synced together: one barrier
// for the batch, not one sync a command.
func TestLogBarrierOnePerBatch(t *testing.T) {
	eachLoops(t, func(t *testing.T, loops int) {
		var barriers atomic.Int64
		srv := barrierServer(t, xstream.SyncAlways, loops, func(i int, real func(int) error) error {
			barriers.Add(1)
			return real(i)
		})
		rc := dialRaw(t, srv.Addr())
		const n = 200
		cmds := make([][]string, n)
		for i := range cmds {
			cmds[i] = []string{"XADD", "s", "*", "n", fmt.Sprint(i)}
		}
		if err := rc.send(cmds); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			r, err := rc.read()
			if err != nil || r.kind != '$' {
				t.Fatalf("reply %d: %v %v", i, r, err)
			}
		}
		if b := barriers.Load(); b > 10 {
			t.Fatalf("%d barriers for a pipeline of %d XADDs", b, n)
		}
	})
}

// Under always, no reply goes out before the sync of the changes it
// acknowledges: while the sync hangs, the client has no reply.
func TestLogBarrierRepliesWaitForSync(t *testing.T) {
	eachLoops(t, func(t *testing.T, loops int) {
		var hold atomic.Bool
		release := make(chan struct{})
		srv := barrierServer(t, xstream.SyncAlways, loops, func(i int, real func(int) error) error {
			if hold.Load() {
				<-release
			}
			return real(i)
		})
		rc := dialRaw(t, srv.Addr())
		rc.do(t, "XADD", "s", "*", "n", "0")
		hold.Store(true)
		if err := rc.send([][]string{{"XADD", "s", "*", "n", "1"}}); err != nil {
			t.Fatal(err)
		}
		got := make(chan *reply, 1)
		go func() {
			r, _ := rc.read()
			got <- r
		}()
		select {
		case r := <-got:
			t.Fatalf("reply %v before the sync", r)
		case <-time.After(200 * time.Millisecond):
		}
		hold.Store(false)
		close(release)
		if r := <-got; r == nil || r.kind != '$' {
			t.Fatalf("reply after the sync: %v", r)
		}
	})
}

// errNoSpace is a failure of a log barrier, as the core reports one.
var errNoSpace = fmt.Errorf("%w: writing 0/log: %w", xstream.ErrLogFailed, syscall.ENOSPC)

// failingServer is barrierServer whose barriers of DB 0 fail with errNoSpace
// (after doing their work) once the flag it returns is set.
func failingServer(t *testing.T, policy xstream.SyncPolicy, loops int) (*Server, *atomic.Bool) {
	fail := new(atomic.Bool)
	srv := barrierServer(t, policy, loops, func(i int, real func(int) error) error {
		if err := real(i); err != nil {
			return err
		}
		if i == 0 && fail.Load() {
			return errNoSpace
		}
		return nil
	})
	return srv, fail
}

// Under always and everysec, when the barrier of a DB fails, the reply
// of each write to that DB before it becomes MISCONF, whole, also inside
// EXEC and for a reply too large to be gathered otherwise; the replies of
// other commands, and of writes to other DBs, go out as they were, and
// the connection goes on.
func TestLogBarrierMisconf(t *testing.T) {
	for _, policy := range []xstream.SyncPolicy{xstream.SyncAlways, xstream.SyncEverySecond} {
		t.Run(policy.String(), func(t *testing.T) { testLogBarrierMisconf(t, policy) })
	}
}

func testLogBarrierMisconf(t *testing.T, policy xstream.SyncPolicy) {
	eachLoops(t, func(t *testing.T, loops int) {
		srv, fail := failingServer(t, policy, loops)
		rc := dialRaw(t, srv.Addr())
		big := strings.Repeat("v", 400<<10)
		for range 4 {
			rc.do(t, "XADD", "big", "*", "f", big)
		}
		rc.do(t, "XGROUP", "CREATE", "big", "g", "0")

		fail.Store(true)
		cmds := [][]string{
			{"XADD", "s", "*", "n", "1"},
			{"XLEN", "s"},
			{"SELECT", "1"},
			{"XADD", "t", "*", "n", "1"},
			{"SELECT", "0"},
			{"MULTI"},
			{"XADD", "s", "*", "n", "2"},
			{"XLEN", "s"},
			{"EXEC"},
			{"CLIENT", "REPLY", "OFF"},
			{"XADD", "s", "*", "n", "3"},
			{"CLIENT", "REPLY", "ON"},
			{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "big", ">"},
			{"PING"},
		}
		if err := rc.send(cmds); err != nil {
			t.Fatal(err)
		}
		var got []*reply
		for range len(cmds) - 2 {
			r, err := rc.read()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, r)
		}
		want := []string{"-" + misconfNoSpace, ":1", "+OK", "$", "+OK", "+OK", "+QUEUED", "+QUEUED", "*", "+OK", "-" + misconfNoSpace, "+PONG"}
		for i, w := range want {
			if g := brief(got[i]); g != w && !(len(w) == 1 && g[0] == w[0]) {
				t.Fatalf("reply %d: %s, want %s", i, g, w)
			}
		}
		if exec := got[8]; len(exec.kids) != 2 || brief(exec.kids[0]) != "-"+misconfNoSpace || brief(exec.kids[1]) != ":2" {
			t.Fatalf("EXEC: %s", brief(exec))
		}

		// The barrier works again: the same large reply goes out.
		fail.Store(false)
		rc.do(t, "XGROUP", "CREATE", "big", "g2", "0")
		r := rc.do(t, "XREADGROUP", "GROUP", "g2", "c", "STREAMS", "big", ">")
		if len(r.kids) != 1 || len(r.kids[0].kids) != 2 || len(r.kids[0].kids[1].kids) != 4 {
			t.Fatalf("XREADGROUP: %s", brief(r))
		}
		for _, e := range r.kids[0].kids[1].kids {
			if v := e.kids[1].kids[1].s; v != big {
				t.Fatalf("XREADGROUP: a value of %d bytes", len(v))
			}
		}
	})
}

// A client's replies that wait for two barriers in turn, the first made
// to hang while the client sends more: the replies of the writes before
// the barrier that fails are MISCONF, the others go out as they were.
func TestLogBarrierTwoInTurn(t *testing.T) {
	for _, tc := range []struct {
		name   string
		second bool   // the second barrier fails, not the first
		want   string // the replies' types
	}{{"first fails", false, "-:$:"}, {"second fails", true, "$:-:"}} {
		t.Run(tc.name, func(t *testing.T) {
			eachLoops(t, func(t *testing.T, loops int) {
				var armed atomic.Int32 // 2: hang the next barrier of DB 0; 1: the one after
				release := make(chan struct{})
				srv := barrierServer(t, xstream.SyncAlways, loops, func(i int, real func(int) error) error {
					err := real(i)
					if i != 0 {
						return err
					}
					switch armed.Load() {
					case 2:
						armed.Store(1)
						<-release
						if !tc.second {
							return errNoSpace
						}
					case 1:
						armed.Store(0)
						if tc.second {
							return errNoSpace
						}
					}
					return err
				})
				rc := dialRaw(t, srv.Addr())
				rc.do(t, "PING")
				armed.Store(2)
				if err := rc.send([][]string{{"XADD", "s", "*", "n", "a"}, {"XLEN", "s"}}); err != nil {
					t.Fatal(err)
				}
				for armed.Load() == 2 { // the first barrier hangs
					time.Sleep(time.Millisecond)
				}
				if err := rc.send([][]string{{"XADD", "s", "*", "n", "b"}, {"XLEN", "s"}}); err != nil {
					t.Fatal(err)
				}
				time.Sleep(50 * time.Millisecond)
				close(release)
				var got []string
				types := ""
				for range 4 {
					r, err := rc.read()
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, brief(r))
					types += string(r.kind)
				}
				if types != tc.want {
					t.Fatalf("replies %q, want the types %s", got, tc.want)
				}
			})
		})
	}
}

// A barrier after a SWAPDB that the connection's commands may have run
// across does every DB: the DB a command changed may now be at another
// index.
func TestLogBarrierAfterSwapDB(t *testing.T) {
	eachLoops(t, func(t *testing.T, loops int) {
		var mu sync.Mutex
		done := map[int]bool{}
		srv := barrierServer(t, xstream.SyncAlways, loops, func(i int, real func(int) error) error {
			mu.Lock()
			done[i] = true
			mu.Unlock()
			return real(i)
		})
		a, b := dialRaw(t, srv.Addr()), dialRaw(t, srv.Addr())
		a.do(t, "XADD", "s", "*", "n", "0")
		b.do(t, "SWAPDB", "0", "1")
		mu.Lock()
		clear(done)
		mu.Unlock()
		a.do(t, "XADD", "s", "*", "n", "1")
		mu.Lock()
		defer mu.Unlock()
		if len(done) != numDBs {
			t.Fatalf("the barrier after a SWAPDB did DBs %v", done)
		}
	})
}

// Under always, a write whose DB a SWAPDB moved before its barrier ran,
// and whose sync then fails at the DB's new index, gets MISCONF: the
// barrier's failures count against every write once the DBs moved.
func TestLogBarrierSwapDBFails(t *testing.T) {
	var armed, swapped atomic.Bool
	var swapper *rawConn
	srv := barrierServer(t, xstream.SyncAlways, -1, func(i int, real func(int) error) error {
		if err := real(i); err != nil {
			return err
		}
		if i == 0 && armed.CompareAndSwap(true, false) {
			// The XADD ran on DB 0; before its barrier ends, DB 0 and
			// DB 1 swap, and the barrier does every DB again.
			swapper.send([][]string{{"SWAPDB", "0", "1"}})
			swapper.read()
			swapped.Store(true)
		}
		if i == 1 && swapped.Load() {
			return errNoSpace
		}
		return nil
	})
	swapper = dialRaw(t, srv.Addr())
	rc := dialRaw(t, srv.Addr())
	armed.Store(true)
	if r := rc.do(t, "XADD", "s", "*", "n", "0"); r.kind != '-' || r.s != misconfNoSpace {
		t.Fatalf("the XADD whose DB's sync failed after a SWAPDB got %s", brief(r))
	}
}

// brief is r in a line: its type, its text or number, its elements, each
// string cut to 100 bytes.
func brief(r *reply) string {
	s := string(r.kind)
	switch {
	case r.kind == ':':
		s += fmt.Sprint(r.n)
	case len(r.s) > 100:
		s += r.s[:100] + "..."
	default:
		s += r.s
	}
	if r.kids != nil {
		var kids []string
		for _, k := range r.kids {
			kids = append(kids, brief(k))
		}
		s += "[" + strings.Join(kids, " ") + "]"
	}
	return s
}

// On an event loop, the clients served in one pass share one barrier:
// while a sync runs, the requests of 20 clients come, and are synced
// together once it is done, before their replies.
func TestLogBarrierOnePerPass(t *testing.T) {
	var barriers atomic.Int64
	var hold atomic.Bool
	release := make(chan struct{})
	srv := barrierServer(t, xstream.SyncAlways, 1, func(i int, real func(int) error) error {
		barriers.Add(1)
		if hold.Load() {
			<-release
		}
		return real(i)
	})
	const n = 20
	rcs := make([]*rawConn, n)
	for i := range rcs {
		rcs[i] = dialRaw(t, srv.Addr())
		rcs[i].do(t, "PING")
	}
	first := dialRaw(t, srv.Addr())
	base := barriers.Load()
	hold.Store(true)
	if err := first.send([][]string{{"XADD", "s", "*", "n", "first"}}); err != nil {
		t.Fatal(err)
	}
	for barriers.Load() == base { // the sync of the first XADD hangs
		time.Sleep(time.Millisecond)
	}
	for i, rc := range rcs {
		if err := rc.send([][]string{{"XADD", "s", "*", "n", fmt.Sprint(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond) // the requests reach the server's sockets
	before := barriers.Load()
	hold.Store(false)
	close(release)
	for _, rc := range append(rcs, first) {
		if r, err := rc.read(); err != nil || r.kind != '$' {
			t.Fatalf("XADD: %v %v", r, err)
		}
	}
	if b := barriers.Load() - before; b > 2 {
		t.Fatalf("%d barriers for the XADDs of %d clients served in one pass", b, n)
	}
}

// Under everysec, when the barrier of a DB fails, a connection whose
// commands changed it gets MISCONF for them (their replies would
// acknowledge changes the log does not hold yet) and stays open; one
// that only read gets its replies; the change in doubt stays in the DB,
// which writes it once the log works again.
func TestLogBarrierEverysecFails(t *testing.T) {
	eachLoops(t, func(t *testing.T, loops int) {
		srv, fail := failingServer(t, xstream.SyncEverySecond, loops)
		writer, reader := dialRaw(t, srv.Addr()), dialRaw(t, srv.Addr())
		writer.do(t, "XADD", "s", "*", "n", "0")
		fail.Store(true)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			writer.send([][]string{{"XADD", "s", "*", "n", "1"}})
			if r, err := writer.read(); err != nil || r.kind != '-' || r.s != misconfNoSpace {
				t.Errorf("the writer got %v, %v; want %s", r, err, misconfNoSpace)
			}
		}()
		go func() {
			defer wg.Done()
			reader.send([][]string{{"XLEN", "s"}})
			if r, err := reader.read(); err != nil || r.kind != ':' {
				t.Errorf("the reader got %v, %v", r, err)
			}
		}()
		wg.Wait()
		fail.Store(false)
		if r := writer.do(t, "XLEN", "s"); r.kind != ':' || r.n != 2 {
			t.Fatalf("XLEN once the log works: %s; the change in doubt stays", brief(r))
		}
		if r := writer.do(t, "XADD", "s", "*", "n", "2"); r.kind != '$' {
			t.Fatalf("XADD once the log works: %s", brief(r))
		}
	})
}
