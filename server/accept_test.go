package server

import (
	"bufio"
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// fakeListener is a net.Listener whose Accept returns, in order, the
// errors and connections queued in it, noting when each call was made;
// with nothing queued it waits for Close.
type fakeListener struct {
	mu     sync.Mutex
	queue  []acceptResult
	calls  []time.Time
	closed chan struct{}
	more   chan struct{} // closed and replaced when queue grows
}

type acceptResult struct {
	nc  net.Conn
	err error
}

func newFakeListener() *fakeListener {
	return &fakeListener{closed: make(chan struct{}), more: make(chan struct{})}
}

func (l *fakeListener) push(r ...acceptResult) {
	l.mu.Lock()
	l.queue = append(l.queue, r...)
	close(l.more)
	l.more = make(chan struct{})
	l.mu.Unlock()
}

func (l *fakeListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	l.calls = append(l.calls, time.Now())
	for len(l.queue) == 0 {
		more := l.more
		l.mu.Unlock()
		select {
		case <-more:
		case <-l.closed:
			return nil, net.ErrClosed
		}
		l.mu.Lock()
	}
	r := l.queue[0]
	l.queue = l.queue[1:]
	l.mu.Unlock()
	return r.nc, r.err
}

func (l *fakeListener) Close() error {
	select {
	case <-l.closed:
	default:
		close(l.closed)
	}
	return nil
}

func (l *fakeListener) Addr() net.Addr { return &net.TCPAddr{} }

// gaps returns the time between successive Accept calls.
func (l *fakeListener) gaps() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var d []time.Duration
	for i := 1; i < len(l.calls); i++ {
		d = append(d, l.calls[i].Sub(l.calls[i-1]))
	}
	return d
}

// emfile is the error Accept returns when the process has no file
// descriptor left.
var emfile = &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}

// fakeServer is a server on a fakeListener, its accept loop not started
// (srv.wg counts it), and the buffer its log goes to.
func fakeServer() (*Server, *fakeListener, *bytes.Buffer) {
	logs := new(bytes.Buffer)
	srv := New(Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	ln := newFakeListener()
	srv.ln = ln
	srv.wg.Add(1)
	return srv, ln, logs
}

// Accept failing with "too many open files" does not stop the server: it
// waits 5 ms, then twice as long after each failure up to 1 s (as
// net/http), and serves the client that comes once descriptors are free;
// a successful accept starts the waits from 5 ms again.
func TestAcceptRetriesTemporaryErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, ln, logs := fakeServer()
		go srv.acceptLoop(ln)

		ping := func() {
			t.Helper()
			client, server := net.Pipe()
			defer client.Close()
			ln.push(acceptResult{nc: server})
			if _, err := client.Write([]byte(resp("PING"))); err != nil {
				t.Fatal(err)
			}
			r, err := readReply(bufio.NewReader(client))
			if err != nil || r.String() != `+"PONG"` {
				t.Fatalf("PING after the failed accepts: %v, %v", r, err)
			}
		}
		for range 10 {
			ln.push(acceptResult{err: emfile})
		}
		ping()
		ln.push(acceptResult{err: emfile}, acceptResult{err: emfile})
		ping()
		synctest.Wait()

		ms := time.Millisecond
		want := []time.Duration{5 * ms, 10 * ms, 20 * ms, 40 * ms, 80 * ms, 160 * ms, 320 * ms, 640 * ms, time.Second, time.Second,
			0, 5 * ms, 10 * ms, 0}
		if got := ln.gaps(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("times between the accepts: %v, want %v", got, want)
		}
		if n := strings.Count(logs.String(), "too many open files"); n != 12 {
			t.Errorf("%d of 12 failed accepts logged:\n%s", n, logs.String())
		}
		srv.Close()
	})
}

// An error of Accept that will not go away (here EINVAL) ends the loop
// with a log record instead of spinning.
func TestAcceptStopsOnPermanentError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, ln, logs := fakeServer()
		ln.push(acceptResult{err: &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EINVAL)}})
		srv.acceptLoop(ln) // returns
		if !strings.Contains(logs.String(), "no longer accepting") || !strings.Contains(logs.String(), "invalid argument") {
			t.Fatalf("log: %s", logs.String())
		}
		srv.Close()
	})
}

// MaxClients is lowered to the limit on open files minus the files open
// and Redis's reserve of 32, with a log record; a MaxClients that fits is
// left alone. Start does it with the process's limit.
func TestMaxClientsFitsOpenFileLimit(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	srv := New(Options{Logger: log})
	srv.fitMaxClientsTo(1024, 40)
	if got := srv.opts.MaxClients; got != 1024-40-32 {
		t.Fatalf("MaxClients %d with RLIMIT_NOFILE 1024 and 40 files open, want %d", got, 1024-40-32)
	}
	if want := "max_clients=952 asked=10000 rlimit_nofile=1024 open_files=40 reserve=32"; !strings.Contains(logs.String(), want) {
		t.Fatalf("log %q, want %s", logs.String(), want)
	}
	logs.Reset()
	srv.fitMaxClientsTo(1024, 40)
	srv.fitMaxClientsTo(1<<20, 40)
	if got := srv.opts.MaxClients; got != 952 || logs.Len() != 0 {
		t.Fatalf("MaxClients %d, log %q", got, logs.String())
	}
	srv.fitMaxClientsTo(20, 40) // nothing left: one client still
	if got := srv.opts.MaxClients; got != 1 {
		t.Fatalf("MaxClients %d with no descriptor left, want 1", got)
	}

	limit, ok := openFileLimit()
	if !ok {
		t.Skip("no limit on open files here")
	}
	srv = RunTWith(t, Options{MaxClients: int(limit), Logger: log})
	if got := srv.opts.MaxClients; got > int(limit)-32 {
		t.Fatalf("MaxClients %d after Start with RLIMIT_NOFILE %d", got, limit)
	}
}

// A server process whose limit on open files is 1024 serves new clients
// after 1,100 connected at once and went away: it answered the ones past
// its limit with Redis's "max number of clients reached" (MaxClients
// lowered at start to 1024 minus its open files and a reserve of 32) and kept accepting. A server that stopped
// accepting on "too many open files" would leave the last client
// unanswered.
func TestAcceptSurvivesFDExhaustion(t *testing.T) {
	if err := limitOpenFiles(1 << 20); err != nil && strings.Contains(err.Error(), "Linux only") {
		t.Skip(err)
	}
	ch := startChild(t, t.TempDir(), 0, helperNofileEnv+"=1024")
	select {
	case line := <-ch.out:
		// Checked after the burst, which shows more.
		defer func() {
			n, err := strconv.Atoi(strings.TrimPrefix(line, helperMaxClientsLine))
			if err != nil || n > 1024-32 || n < 900 {
				t.Errorf("the server process says %q, want %sN with N at most 1024-32", line, helperMaxClientsLine)
			}
		}()
	case <-time.After(time.Minute):
		t.Fatal("the server process did not say its MaxClients")
	}
	const burst = 1100
	conns := make([]net.Conn, 0, burst)
	defer func() {
		for _, nc := range conns {
			nc.Close()
		}
	}()
	for range burst {
		nc, err := net.Dial("tcp", ch.addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, nc)
	}
	// Every client gets an answer: PONG or the error of MaxClients.
	answers := make([]string, burst)
	var wg sync.WaitGroup
	deadline := time.Now().Add(30 * time.Second)
	for i, nc := range conns {
		wg.Go(func() {
			nc.SetDeadline(deadline)
			nc.Write([]byte(resp("PING")))
			r, err := readReply(bufio.NewReader(nc))
			if err != nil {
				answers[i] = err.Error()
				return
			}
			answers[i] = r.String()
		})
	}
	wg.Wait()
	count := map[string]int{}
	for _, a := range answers {
		count[a]++
	}
	if count[`+"PONG"`]+count[`-"ERR max number of clients reached"`] != burst {
		t.Fatalf("answers of the %d clients: %v", burst, count)
	}
	for _, nc := range conns {
		nc.Close()
	}
	conns = conns[:0]
	// Once the server has seen them go, it serves again.
	for {
		nc, err := net.Dial("tcp", ch.addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, nc)
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		nc.Write([]byte(resp("PING")))
		r, err := readReply(bufio.NewReader(nc))
		if err != nil {
			t.Fatalf("PING after the burst: %v (answers during it: %v)", err, count)
		}
		if r.String() == `+"PONG"` {
			break
		}
		if r.String() != `-"ERR max number of clients reached"` || time.Now().After(deadline) {
			t.Fatalf("PING after the burst: %v", r)
		}
		nc.Close()
	}
	ch.stop(t)
}
