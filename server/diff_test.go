package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The differential tests send the same commands through go-redis to a
// real redis-server and to the xstream server and compare the replies as
// they came over the wire. The real server is XSTREAM_REDIS_ADDR when set;
// otherwise TestMain starts redis-server from PATH on a free loopback port
// and stops it by its process ID at the end. With neither, the
// differential tests are skipped.

var realAddr = os.Getenv("XSTREAM_REDIS_ADDR")

// logTail is how many of the last commands a difference report shows.
var logTail = 60

func TestMain(m *testing.M) {
	// The servers of the tests serve their clients with one event loop,
	// as xstream-server does by default, or with a goroutine each when
	// XSTREAM_TEST_EVENT_LOOPS=0 (any other number: that many loops).
	defaultEventLoops = 1
	if v := os.Getenv("XSTREAM_TEST_EVENT_LOOPS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			fmt.Fprintln(os.Stderr, "XSTREAM_TEST_EVENT_LOOPS:", err)
			os.Exit(2)
		}
		defaultEventLoops = n
	}
	var proc *exec.Cmd
	if realAddr == "" && !isHelper() { // a server process of the crash tests needs none
		if path, err := exec.LookPath("redis-server"); err == nil {
			var err error
			proc, realAddr, err = startRedis(path)
			if err != nil {
				fmt.Fprintln(os.Stderr, "starting redis-server:", err)
				os.Exit(1)
			}
		}
	}
	code := m.Run()
	if proc != nil {
		proc.Process.Kill()
		proc.Wait()
	}
	os.Exit(code)
}

// startRedis runs redis-server without persistence on a free loopback port
// and returns once it accepts connections (it says so on its output).
func startRedis(path string) (*exec.Cmd, string, error) {
	return startRedisWith(path, "", "--appendonly", "no")
}

// startRedisWith runs redis-server with RDB snapshots off and the
// arguments args, in the directory dir ("": the current one).
func startRedisWith(path, dir string, args ...string) (*exec.Cmd, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(path, append([]string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--daemonize", "no"}, args...)...)
	cmd.Dir = dir
	dieWithTest(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		var log []string
		for sc.Scan() {
			log = append(log, sc.Text())
			if strings.Contains(sc.Text(), "Ready to accept connections") {
				ready <- nil
				for sc.Scan() { // keep draining so redis never blocks on its log
				}
				return
			}
		}
		ready <- fmt.Errorf("redis-server exited: %s", strings.Join(log, "\n"))
	}()
	select {
	case err := <-ready:
		if err != nil {
			cmd.Wait()
			return nil, "", err
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		return nil, "", fmt.Errorf("redis-server did not start within 30s")
	}
	return cmd, addr, nil
}

// redisWithT starts a redis-server of its own for the test t, with the
// arguments args (beyond those of startRedis), stops it when the test
// ends, and returns its address. It skips the test when redis-server is
// not installed.
func redisWithT(t *testing.T, args ...string) string {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	proc, addr, err := startRedisWith(path, "", append([]string{"--appendonly", "no"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		proc.Process.Kill()
		proc.Wait()
	})
	return addr
}

// recConn records what a client reads, so that a test sees each reply's
// exact bytes.
type recConn struct {
	net.Conn
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *recConn) Read(p []byte) (int, error) {
	n, err := r.Conn.Read(p)
	r.mu.Lock()
	r.buf.Write(p[:n])
	r.mu.Unlock()
	return n, err
}

func (r *recConn) take() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := bytes.Clone(r.buf.Bytes())
	r.buf.Reset()
	return b
}

// client is a go-redis client on one connection whose reads are recorded.
type client struct {
	rdb *redis.Client
	rc  *recConn
}

// newClient is a RESP2 client of addr.
func newClient(t testing.TB, addr string) *client { return newClientProto(t, addr, 2) }

// newClientProto is a client of addr speaking protocol proto: with 3 it
// sends HELLO 3 on connecting.
func newClientProto(t testing.TB, addr string, proto int) *client {
	c := &client{}
	c.rdb = redis.NewClient(&redis.Options{
		Addr:            addr,
		Protocol:        proto,
		DisableIdentity: true,
		PoolSize:        1,
		MaxRetries:      -1,
		ReadTimeout:     -1,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var d net.Dialer
			nc, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			c.rc = &recConn{Conn: nc}
			return c.rc, nil
		},
	})
	t.Cleanup(func() { c.rdb.Close() })
	if err := c.rdb.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("PING %s: %v", addr, err)
	}
	c.rc.take()
	return c
}

// do sends one command and returns its reply as read from the wire.
func (c *client) do(t testing.TB, args ...string) *reply {
	t.Helper()
	r, err := c.send(args...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// send is do for a goroutine other than the test's.
func (c *client) send(args ...string) (*reply, error) {
	rs, err := parseReplies(c.exchange(args...))
	if err != nil || len(rs) != 1 {
		return nil, fmt.Errorf("%q: %d replies, %v", args, len(rs), err)
	}
	return rs[0], nil
}

// exchange sends one command and returns the bytes of its reply.
func (c *client) exchange(args ...string) []byte {
	c.rc.take()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	iargs := make([]any, len(args))
	for i, a := range args {
		iargs[i] = a
	}
	c.rdb.Do(ctx, iargs...)
	return c.rc.take()
}

// pair is a real Redis and an xstream server, with a client on each.
type pair struct {
	t     testing.TB
	proto int        // the protocol both clients speak: 2 or 3
	log   [][]string // commands sent, for the report of a difference
	multi bool       // the clients are in MULTI
	// trimmedPast holds "key group" for the groups whose entries-read
	// and lag follow Redis 7.2 rather than 7.0 (see trackTrimmedPast).
	trimmedPast map[string]bool
	// seen holds, for "key group consumer", when an XCLAIM or XAUTOCLAIM
	// of the real Redis refreshed the consumer's seen-time by Redis 7.2's
	// rule (in ms, the clock of this machine, which Redis shares).
	seen   map[string]int64
	queued [][]string // commands queued in MULTI
	srv    *Server
	real   *client
	xs     *client
}

// newPair flushes the real Redis and starts an xstream server, with RESP2
// clients. It skips the test when there is no real Redis.
func newPair(t testing.TB) *pair { return newPairProto(t, 2) }

// newPairProto is newPair with clients speaking protocol proto.
func newPairProto(t testing.TB, proto int) *pair {
	t.Helper()
	if realAddr == "" {
		t.Skip("no Redis to compare with: set XSTREAM_REDIS_ADDR or put redis-server on PATH")
	}
	p := &pair{t: t, proto: proto, srv: RunT(t), trimmedPast: map[string]bool{}, seen: map[string]int64{}}
	p.real = newClientProto(t, realAddr, proto)
	p.xs = newClientProto(t, p.srv.Addr(), proto)
	if r := p.real.do(t, "FLUSHALL"); r.s != "OK" {
		t.Fatalf("FLUSHALL: %v", r)
	}
	return p
}

// eachProtocol runs a differential test twice, as subtests: over RESP2
// connections and over RESP3 ones (after HELLO 3).
func eachProtocol(t *testing.T, fn func(t *testing.T, p *pair)) {
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+itoa(proto), func(t *testing.T) { fn(t, newPairProto(t, proto)) })
	}
}

// do sends a command to both servers and fails the test unless the
// replies are the same (after normalize). It returns the real reply.
func (p *pair) do(args ...string) *reply {
	p.t.Helper()
	p.log = append(p.log, args)
	want := p.real.do(p.t, args...)
	got := p.xs.do(p.t, args...)
	switch {
	case strings.EqualFold(args[0], "MULTI") && want.kind != '-':
		p.multi = true
	case strings.EqualFold(args[0], "EXEC") || strings.EqualFold(args[0], "DISCARD"):
		if p.multi && want.kind == '*' {
			for i, q := range p.queued {
				if i < len(want.kids) {
					p.after(q, want.kids[i])
				}
			}
		}
		p.multi, p.queued = false, nil
	case p.multi:
		p.queued = append(p.queued, args)
	default:
		p.after(args, want)
	}
	return p.check(args, want, got)
}

func (p *pair) check(args []string, want, got *reply) *reply {
	p.t.Helper()
	p.seenByClaim(args, want)
	normalize(args, want)
	normalize(args, got)
	p.trackTrimmedPast()
	if len(args) > 2 && strings.EqualFold(args[0], "XINFO") {
		p.hideCounters(args[2], want)
		p.hideCounters(args[2], got)
	}
	if !equalReplies(want, got) {
		for _, l := range p.log[max(0, len(p.log)-logTail):] {
			p.t.Logf("  %s", strings.Join(l, " "))
		}
		p.t.Fatalf("%q:\n  redis:   %v\n  xstream: %v", args, want, got)
	}
	return want
}

// after brings the real Redis 7.0 to the state Redis 7.2 would be in
// after a command, for the differences the xstream server follows the
// newer Redis in: XREADGROUP, XCLAIM and XAUTOCLAIM create their
// consumer even when they read or claim nothing, and XCLAIM and
// XAUTOCLAIM refresh its seen-time then too.
func (p *pair) after(args []string, want *reply) {
	if want.kind == '-' {
		return
	}
	if (strings.EqualFold(args[0], "XCLAIM") || strings.EqualFold(args[0], "XAUTOCLAIM")) && len(args) > 3 {
		p.real.do(p.t, "XGROUP", "CREATECONSUMER", args[1], args[2], args[3])
		// Redis 7.2 also refreshes the consumer's seen-time when it
		// claims nothing; Redis 7.0 has no command that does only that
		// (a history read past the last pending ID does, unless that ID
		// is the largest). The time is noted and put into Redis's later
		// XINFO replies (see seenByClaim).
		p.claimSeen(args[1], args[2], args[3])
		return
	}
	if !strings.EqualFold(args[0], "XREADGROUP") {
		return
	}
	var group, consumer string
	streams := -1
	for i := 1; i < len(args); i++ {
		switch {
		case strings.EqualFold(args[i], "GROUP") && i+2 < len(args):
			group, consumer = args[i+1], args[i+2]
			i += 2
		case strings.EqualFold(args[i], "COUNT"), strings.EqualFold(args[i], "BLOCK"):
			i++
		case strings.EqualFold(args[i], "STREAMS"):
			streams = i + 1
			i = len(args)
		}
	}
	if streams < 0 {
		return
	}
	n := (len(args) - streams) / 2
	for _, key := range args[streams : streams+n] {
		p.real.do(p.t, "XGROUP", "CREATECONSUMER", key, group, consumer)
		// Redis 7.2 refreshes the seen-time of a consumer whose read
		// returns nothing too, Redis 7.0 only when it delivers: noted as
		// for the claims.
		p.claimSeen(key, group, consumer)
	}
}

// script runs commands given one per line, arguments split on spaces.
func (p *pair) script(lines string) {
	p.t.Helper()
	for _, line := range strings.Split(lines, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p.do(strings.Fields(line)...)
	}
}

// trackTrimmedPast notes the groups that the stream's first entry has
// passed (trimmed past the group's last delivered ID, while the stream
// holds entries). From then on the core follows Redis 7.2, which no longer
// trusts such a group's entries-read counter, where Redis 7.0 keeps
// counting (and can report a negative lag): the two servers' entries-read
// and lag of that group are not compared until the group is destroyed.
func (p *pair) trackTrimmedPast() {
	for k := range p.trimmedPast {
		key, group, _ := strings.Cut(k, " ")
		s, ok := p.srv.DB(0).Lookup(key)
		if !ok || !hasGroup(s, group) {
			delete(p.trimmedPast, k)
		}
	}
	for _, key := range p.srv.DB(0).Names("") {
		s, _ := p.srv.DB(0).Lookup(key)
		info, err := s.Info()
		if err != nil {
			panic(err) // an in-memory DB's Info does not fail
		}
		if info.Length == 0 {
			continue
		}
		for _, g := range s.Groups() {
			if g.LastDeliveredID.Less(info.RecordedFirstEntryID) {
				p.trimmedPast[key+" "+g.Name] = true
			}
		}
	}
}

// hideCounters makes the entries-read and lag of the groups noted by
// trackTrimmedPast match anything in an XINFO GROUPS or XINFO STREAM FULL
// reply about key.
func (p *pair) hideCounters(key string, r *reply) {
	hide := func(g *reply) {
		name := ""
		mapFields(g, nil, func(n string, v *reply) {
			if n == "name" {
				name = v.s
			}
		})
		if !p.trimmedPast[key+" "+name] {
			return
		}
		mapFields(g, nil, func(n string, v *reply) {
			if n == "entries-read" || n == "lag" {
				v.kind = 'w'
			}
		})
	}
	if !isAggregate(r.kind) {
		return
	}
	if len(r.kids) > 0 && isAggregate(r.kids[0].kind) { // XINFO GROUPS
		for _, g := range r.kids {
			hide(g)
		}
		return
	}
	mapFields(r, nil, func(n string, v *reply) { // XINFO STREAM FULL
		if n == "groups" {
			for _, g := range v.kids {
				hide(g)
			}
		}
	})
}

// claimSeen notes that an XCLAIM or XAUTOCLAIM of consumer c of group g
// of key just ran on the real Redis.
func (p *pair) claimSeen(key, g, c string) {
	p.seen[key+" "+g+" "+c] = time.Now().UnixMilli()
}

// seenByClaim puts into the real Redis's reply to an XINFO STREAM FULL or
// XINFO CONSUMERS the seen-times Redis 7.2 would have after the claims
// noted by claimSeen: a consumer's seen-time is the later of Redis 7.0's
// and its last claim's, its idle time the shorter. The consumer's
// seen-time is then compared with the xstream server's from the same
// event, however long ago Redis 7.0 last refreshed it.
func (p *pair) seenByClaim(args []string, r *reply) {
	if len(args) < 3 || !strings.EqualFold(args[0], "XINFO") || r.kind == '-' {
		return
	}
	now := time.Now().UnixMilli()
	fix := func(key, g string, cons *reply) {
		var name string
		mapFields(cons, nil, func(n string, v *reply) {
			if n == "name" {
				name = v.s
			}
		})
		at, ok := p.seen[key+" "+g+" "+name]
		if !ok {
			return
		}
		mapFields(cons, nil, func(n string, v *reply) {
			switch n {
			case "seen-time":
				v.n = max(v.n, at)
			case "idle":
				v.n = min(v.n, now-at)
			}
		})
	}
	key := args[2]
	switch {
	case strings.EqualFold(args[1], "CONSUMERS") && len(args) > 3:
		for _, cons := range r.kids {
			fix(key, args[3], cons)
		}
	case strings.EqualFold(args[1], "STREAM") && len(args) > 3 && strings.EqualFold(args[3], "FULL"):
		mapFields(r, nil, func(n string, groups *reply) {
			if n != "groups" {
				return
			}
			for _, g := range groups.kids {
				var gname string
				var consumers *reply
				mapFields(g, nil, func(n string, v *reply) {
					switch n {
					case "name":
						gname = v.s
					case "consumers":
						consumers = v
					}
				})
				if consumers != nil {
					for _, cons := range consumers.kids {
						fix(key, gname, cons)
					}
				}
			}
		})
	}
}
