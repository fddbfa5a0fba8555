package xredis_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/xredis"
)

// The failover tests each start a Redis Cluster of their own, three
// masters with one replica each and a cluster-node-timeout of 1 s, kill
// a master with SIGKILL while producers put, and restart it once its
// replica is promoted (it joins as the new master's replica), as a
// supervisor would.

// failoverNodeTimeout is the clusters' cluster-node-timeout (ms).
const failoverNodeTimeout = 1000

// failoverCluster is a cluster of one test, stopped at its end.
type failoverCluster struct {
	t     *testing.T
	path  string
	addrs []string
	mu    sync.Mutex
	procs map[string]*exec.Cmd // by address, the last process started
	args  map[string][]string  // by address, its cluster options
	clis  map[string]rueidis.Client
}

func newFailoverCluster(t *testing.T) *failoverCluster {
	path := redisServer(t)
	var err error
	fc := &failoverCluster{t: t, path: path, procs: map[string]*exec.Cmd{}, args: map[string][]string{}, clis: map[string]rueidis.Client{}}
	t.Cleanup(func() {
		fc.mu.Lock()
		defer fc.mu.Unlock()
		for _, c := range fc.clis {
			c.Close()
		}
		for _, cmd := range fc.procs {
			stopNode(cmd)
		}
	})
	start := time.Now()
	fc.addrs, err = makeCluster(3, 1, failoverNodeTimeout, func(port int, extra ...string) error {
		// A replica's full sync starts at once, not 5 s later in case
		// other replicas come (Redis 7's diskless sync).
		extra = append(extra, "--repl-diskless-sync-delay", "0")
		// A directory of its own: a replica writes the RDB of its sync
		// there, which a node sharing it would load at its start.
		dir := filepath.Join(scratch, "failover-"+strconv.Itoa(port))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		extra = append(extra, "--dir", dir)
		cmd, err := startNode(path, port, extra...)
		if cmd != nil {
			addr := "127.0.0.1:" + strconv.Itoa(port)
			fc.mu.Lock()
			fc.procs[addr], fc.args[addr] = cmd, extra
			fc.mu.Unlock()
		}
		return err
	})
	require.NoError(t, err)
	t.Logf("cluster of 3 masters and 3 replicas up in %s", time.Since(start).Round(time.Millisecond))
	return fc
}

// redisServer returns the path of redis-server, skipping the test
// without it, and makes the scratch directory.
func redisServer(t *testing.T) string {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server:", errNoServer)
	}
	serversMu.Lock()
	err = makeScratch()
	serversMu.Unlock()
	require.NoError(t, err)
	return path
}

// node returns a client of the node at addr alone (no redirections).
func (fc *failoverCluster) node(addr string) rueidis.Client {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if c, ok := fc.clis[addr]; ok {
		return c
	}
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, ForceSingleClient: true, DisableCache: true, DisableRetry: true})
	require.NoError(fc.t, err)
	fc.clis[addr] = c
	return c
}

// slotNodes returns the master holding slot, as addr (a live node) sees
// it in CLUSTER NODES, and that master's replica.
func (fc *failoverCluster) slotNodes(addr string, slot uint16) (master, replica string) {
	c := fc.node(addr)
	text, err := c.Do(bg(), c.B().ClusterNodes().Build()).ToString()
	require.NoError(fc.t, err)
	text = strings.TrimPrefix(text, "txt:") // a verbatim string of RESP3
	// <id> <ip:port@cport> <flags> <master> <ping> <pong> <epoch> <link> <slot>...
	var masterID string
	byID := map[string]string{}
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		a, _, _ := strings.Cut(f[1], "@")
		byID[f[0]] = a
		for _, r := range f[8:] {
			lo, hi, ok := strings.Cut(r, "-")
			if !ok {
				hi = lo
			}
			l, err1 := strconv.Atoi(lo)
			h, err2 := strconv.Atoi(hi)
			if err1 == nil && err2 == nil && int(slot) >= l && int(slot) <= h {
				masterID = f[0]
			}
		}
	}
	for line := range strings.Lines(text) {
		if f := strings.Fields(line); len(f) >= 8 && f[3] == masterID {
			replica = byID[f[0]]
		}
	}
	if masterID == "" || replica == "" {
		fc.t.Fatalf("slot %d: no master or no replica in CLUSTER NODES of %s:\n%s", slot, addr, text)
	}
	return byID[masterID], replica
}

// kill kills the node at addr with SIGKILL.
func (fc *failoverCluster) kill(addr string) {
	fc.mu.Lock()
	cmd := fc.procs[addr]
	fc.mu.Unlock()
	stopNode(cmd) // Kill is SIGKILL
}

// restart starts the node at addr again, with its cluster config file.
func (fc *failoverCluster) restart(addr string) {
	_, port, _ := strings.Cut(addr, ":")
	p, _ := strconv.Atoi(port)
	cmd, err := startNode(fc.path, p, fc.args[addr]...)
	fc.mu.Lock()
	if cmd != nil {
		fc.procs[addr] = cmd
	}
	fc.mu.Unlock()
	require.NoError(fc.t, err)
}

// waitFor polls cond until it holds, failing the test with every node's
// log after timeout.
func (fc *failoverCluster) waitFor(what string, timeout time.Duration, cond func() bool) time.Time {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, a := range fc.addrs {
				_, port, _ := strings.Cut(a, ":")
				l := filepath.Join(scratch, "redis-"+port+".log")
				fmt.Fprintf(&b, "--- %s\n%s\n", l, tail(l))
			}
			fc.t.Fatalf("%s: not within %s; the nodes' logs:\n%s", what, timeout, b.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Now()
}

// info returns the section of INFO of the node at addr ("" when it does
// not answer).
func (fc *failoverCluster) info(addr, section string) string {
	c := fc.node(addr)
	ctx, cancel := context.WithTimeout(bg(), time.Second)
	defer cancel()
	s, _ := c.Do(ctx, c.B().Info().Section(section).Build()).ToString()
	return s
}

// promoted waits until replica is a master, then restarts the killed
// master, which joins it as its replica, and waits until the new master
// has it online. It returns when the promotion and the rejoin were seen.
func (fc *failoverCluster) promoted(killed, replica string) (promotedAt, rejoinedAt time.Time) {
	promotedAt = fc.waitFor("the replica "+replica+" promoted", 20*time.Second, func() bool {
		return strings.Contains(fc.info(replica, "replication"), "role:master")
	})
	fc.restart(killed)
	rejoinedAt = fc.waitFor("the restarted "+killed+" online as the replica of "+replica, 20*time.Second, func() bool {
		in := fc.info(replica, "replication")
		return strings.Contains(in, "connected_slaves:1") && strings.Contains(in, "state=online")
	})
	return promotedAt, rejoinedAt
}

// acked is a put that returned no error.
type acked struct {
	shard string
	seq   xstream.ID
	pk, k string
	at    time.Time
}

// producers put records from several goroutines and sort the outcomes.
type producers struct {
	mu            sync.Mutex
	acked         []acked
	notReplicated int     // ErrNotReplicated: on the master, not confirmed
	unknown       int     // ErrUnknownOutcome
	other         []error // anything else: the test fails on them
	stop          chan struct{}
	wg            sync.WaitGroup
}

// startProducers runs n producers on s until stop, each put with a
// deadline of 15 s.
func startProducers(s *xredis.Sharded, n int) *producers {
	p := &producers{stop: make(chan struct{})}
	for g := range n {
		p.wg.Go(func() {
			for k := 0; ; k++ {
				select {
				case <-p.stop:
					return
				default:
				}
				pk := fmt.Sprintf("p%d-%d", g, k%16)
				ctx, cancel := context.WithTimeout(bg(), 15*time.Second)
				res, err := s.Put(ctx, pk, xstream.PutArgs{}, xstream.Fields("k", strconv.Itoa(k))...)
				cancel()
				p.mu.Lock()
				switch {
				case err == nil:
					p.acked = append(p.acked, acked{res.ShardID, res.SequenceNumber, pk, strconv.Itoa(k), time.Now()})
				case errors.Is(err, xredis.ErrNotReplicated):
					p.notReplicated++
				case errors.Is(err, xredis.ErrUnknownOutcome):
					p.unknown++
				default:
					p.other = append(p.other, err)
				}
				p.mu.Unlock()
			}
		})
	}
	return p
}

// count returns how many puts to shard were written after t (by their
// sequence numbers, the servers' clocks being the test's) and
// acknowledged.
func (p *producers) count(shard string, t time.Time) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, a := range p.acked {
		if a.shard == shard && a.seq.Ms > uint64(t.UnixMilli()) {
			n++
		}
	}
	return n
}

// first returns when the first put to shard written after t was
// acknowledged.
func (p *producers) first(shard string, t time.Time) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range p.acked {
		if a.shard == shard && a.seq.Ms > uint64(t.UnixMilli()) {
			return a.at
		}
	}
	return time.Time{}
}

func (p *producers) halt() {
	close(p.stop)
	p.wg.Wait()
}

// lost returns the acknowledged puts that the shards' streams do not
// hold (read from the masters after the failover).
func (p *producers) lost(t *testing.T, e xredis.Engine, s *xredis.Sharded, shards int) []acked {
	have := map[string]map[xstream.ID][]xstream.Field{}
	for n := range shards {
		es, err := e.Range(bg(), s.StreamKey(n), "-", "+", 0)
		require.NoError(t, err)
		m := map[xstream.ID][]xstream.Field{}
		for _, en := range es {
			m[en.ID] = en.Fields
		}
		have[fmt.Sprintf("shardId-%012d", n)] = m
	}
	var out []acked
	for _, a := range p.acked {
		f, ok := have[a.shard][a.seq]
		if !ok {
			out = append(out, a)
			continue
		}
		require.Equal(t, xstream.Fields("pk", a.pk, "k", a.k), f, "record %s of %s", a.seq, a.shard)
	}
	return out
}

// failoverRun is what one kill of a master showed.
type failoverRun struct {
	killed, promoted, rejoined, resumed time.Time
	p                                   *producers
	lost                                []acked
}

// killDuringPuts runs 4 producers on a new sharded stream name of 3
// shards on fc, kills the master of the slot that key(s) names once puts flow,
// waits for its replica's promotion and restarts it, waits until 100 more
// puts to shard 0 were acknowledged after the kill, and returns what
// happened. during runs alongside the producers (until they stop) when
// not nil.
func killDuringPuts(t *testing.T, fc *failoverCluster, name string, opts []xredis.Option, key func(s *xredis.Sharded) string,
	during func(ctx context.Context, s *xredis.Sharded)) failoverRun {
	ctx := bg()
	e, err := xredis.New(ctx, rueidis.ClientOption{InitAddress: fc.addrs}, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	const shards = 3
	s, err := xredis.CreateSharded(ctx, e, name, xstream.ShardedArgs{Shards: shards})
	require.NoError(t, err)
	master, replica := fc.slotNodes(fc.addrs[0], xredis.Slot(key(s)))
	shard0Master, _ := fc.slotNodes(fc.addrs[0], xredis.Slot(s.StreamKey(0)))
	t.Logf("killing %s (its replica %s); shard 0 is on %s", master, replica, shard0Master)

	p := startProducers(s, 4)
	var dwg sync.WaitGroup
	dctx, dcancel := context.WithCancel(ctx)
	if during != nil {
		dwg.Go(func() { during(dctx, s) })
	}
	start := time.Now()
	fc.waitFor("100 puts to shard 0", 10*time.Second, func() bool { return p.count("shardId-000000000000", start) >= 100 })

	var run failoverRun
	fc.kill(master)
	run.killed = time.Now() // the process is gone
	run.promoted, run.rejoined = fc.promoted(master, replica)
	fc.waitFor("100 puts to shard 0 after the kill", 20*time.Second, func() bool {
		return p.count("shardId-000000000000", run.killed) >= 100
	})
	run.resumed = p.first("shardId-000000000000", run.killed)
	p.halt()
	dcancel()
	dwg.Wait()
	require.Empty(t, p.other, "puts failed with errors other than the engine's sentinels")
	run.p = p
	run.lost = p.lost(t, e, s, shards)
	t.Logf("promotion %s after the kill, old master online as replica %s after; first put to shard 0 acknowledged %s after the kill",
		run.promoted.Sub(run.killed).Round(time.Millisecond), run.rejoined.Sub(run.killed).Round(time.Millisecond),
		run.resumed.Sub(run.killed).Round(time.Millisecond))
	t.Logf("puts: %d acknowledged (%d lost), %d not confirmed by a replica (ErrNotReplicated), %d of unknown outcome (ErrUnknownOutcome)",
		len(p.acked), len(run.lost), p.notReplicated, p.unknown)
	return run
}

// TestFailoverShardMaster kills (SIGKILL) the master holding shard 0 while
// 4 producers put with WithReplicaWait(1, 200ms): no acknowledged put is
// lost once the replica is promoted, and the puts resume on their own:
// the producers see only the engine's sentinels (ErrUnknownOutcome for
// puts in flight at the kill, ErrNotReplicated while the new master has
// no replica), never a raw connection error.
func TestFailoverShardMaster(t *testing.T) {
	fc := newFailoverCluster(t)
	run := killDuringPuts(t, fc, shardedName(t), []xredis.Option{xredis.WithReplicaWait(1, 200*time.Millisecond)},
		func(s *xredis.Sharded) string { return s.StreamKey(0) }, nil)
	require.Empty(t, run.lost, "acknowledged puts lost")
	require.True(t, run.resumed.After(run.promoted), "the puts to shard 0 acknowledged after the kill came after the promotion")
}

// TestFailoverMetaMaster kills the master holding the sharded stream's
// metadata (its shard map, and the checkpoints) while producers put with
// the replica wait and a reader reads and saves its checkpoints with it
// after each read: no acknowledged put or checkpoint is lost, and neither
// the reads nor the saves fail with anything but ErrNotReplicated (the
// saves, idempotent, are retried by the engine across the failover).
func TestFailoverMetaMaster(t *testing.T) {
	fc := newFailoverCluster(t)
	var (
		mu        sync.Mutex
		saved     map[string]xstream.ID // the last save acknowledged
		saves     int
		notRepl   int
		otherErrs []error
	)
	during := func(ctx context.Context, s *xredis.Sharded) {
		r, err := s.NewReader(ctx)
		if err != nil {
			mu.Lock()
			otherErrs = append(otherErrs, err)
			mu.Unlock()
			return
		}
		for ctx.Err() == nil {
			rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			_, err := r.Read(rctx, xstream.ReadArgs{Count: 500})
			if err == nil {
				cps := r.Checkpoints()
				err = s.SaveCheckpoints(rctx, "app", cps)
				mu.Lock()
				if err == nil {
					saves++
					saved = map[string]xstream.ID{}
					for _, cp := range cps {
						saved[cp.ShardID] = cp.SequenceNumber
					}
				}
				mu.Unlock()
			}
			cancel()
			mu.Lock()
			switch {
			case err == nil || ctx.Err() != nil:
			case errors.Is(err, xredis.ErrNotReplicated):
				notRepl++
			default:
				otherErrs = append(otherErrs, err)
			}
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
	}
	// A name whose metadata is on another master than shard 0, so that
	// the puts watched are not on the master killed.
	name := shardedName(t)
	for i := 0; ; i++ {
		n := name + strconv.Itoa(i)
		meta, _ := fc.slotNodes(fc.addrs[0], xredis.Slot("{"+n+"}"))
		shard0, _ := fc.slotNodes(fc.addrs[0], xredis.Slot("{"+n+":0}"))
		if meta != shard0 {
			name = n
			break
		}
	}
	var sh *xredis.Sharded
	run := killDuringPuts(t, fc, name, []xredis.Option{xredis.WithReplicaWait(1, 200*time.Millisecond)},
		func(s *xredis.Sharded) string { sh = s; return "xs:{" + s.Name() + "}:meta" }, during)
	require.Empty(t, run.lost, "acknowledged puts lost")
	require.Empty(t, otherErrs, "reads and checkpoint saves failed with errors other than ErrNotReplicated")
	require.NotZero(t, saves)
	cps, err := sh.LoadCheckpoints(bg(), "app")
	require.NoError(t, err)
	got := map[string]xstream.ID{}
	for _, cp := range cps {
		got[cp.ShardID] = cp.SequenceNumber
	}
	for id, seq := range saved {
		require.False(t, got[id].Less(seq), "shard %s: checkpoint %s loaded, %s saved and acknowledged", id, got[id], seq)
	}
	t.Logf("checkpoints: %d saves acknowledged, %d not confirmed by a replica", saves, notRepl)
}

// TestFailoverWithoutWait is TestFailoverShardMaster without the replica
// wait. It documents what happens rather than asserting it: a put
// acknowledged by the master before it replicated it is lost when the
// replica is promoted (how many depends on timing: on loopback the
// replica is usually less than a millisecond behind, so often none);
// puts in flight fail with ErrUnknownOutcome; puts resume right after
// the promotion, without waiting for a replica.
func TestFailoverWithoutWait(t *testing.T) {
	fc := newFailoverCluster(t)
	run := killDuringPuts(t, fc, shardedName(t), nil, func(s *xredis.Sharded) string { return s.StreamKey(0) }, nil)
	require.Zero(t, run.p.notReplicated)
	for _, a := range run.lost {
		t.Logf("lost: %s %s (acknowledged %s before the kill)", a.shard, a.seq, run.killed.Sub(a.at).Round(time.Microsecond))
	}
}

// BenchmarkReplicaWait compares Sharded.Put with WithReplicaWait(1, 1s)
// (XADD then WAIT 1 1000 on a dedicated connection) against Put without
// it (XADD on the shared pipelined connections), in the same run, on a
// standalone redis-server with one replica, both on loopback, by one
// producer and by 64 concurrent producers; the sharded stream has 4
// shards. XREDIS_BENCH_ORDER=wait-first runs the wait first in each
// pair. See BENCHMARKS.md.
//
//	go test -run '^$' -bench BenchmarkReplicaWait -benchtime 2s .
func BenchmarkReplicaWait(b *testing.B) {
	kind := benchKind("replicated")
	ctx := bg()
	plain := newEngine(b, kind)
	name := shardedName(b)
	sp, err := xredis.CreateSharded(ctx, plain, name, xstream.ShardedArgs{Shards: 4})
	if err != nil {
		b.Fatal(err)
	}
	sw, err := xredis.OpenSharded(ctx, newEngine(b, kind, xredis.WithReplicaWait(1, time.Second)), name)
	if err != nil {
		b.Fatal(err)
	}
	fields := xstream.Fields("sensor-id", "1234", "temperature", "19.8")
	put := func(s *xredis.Sharded, callers int) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			if callers == 1 {
				for i := 0; b.Loop(); i++ {
					if _, err := s.Put(ctx, "k"+strconv.Itoa(i%64), xstream.PutArgs{}, fields...); err != nil {
						b.Fatal(err)
					}
				}
				return
			}
			b.SetParallelism(parallelism(callers))
			b.RunParallel(func(pb *testing.PB) {
				for i := 0; pb.Next(); i++ {
					if _, err := s.Put(ctx, "k"+strconv.Itoa(i%64), xstream.PutArgs{}, fields...); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
	for _, callers := range []int{1, 64} {
		n := strconv.Itoa(callers)
		if os.Getenv("XREDIS_BENCH_ORDER") == "wait-first" {
			b.Run(n+"/put-wait", put(sw, callers))
			b.Run(n+"/put", put(sp, callers))
		} else {
			b.Run(n+"/put", put(sp, callers))
			b.Run(n+"/put-wait", put(sw, callers))
		}
	}
}

// TestFailoverSentinels kills a standalone server under the engine: a
// put in flight fails with ErrUnknownOutcome, an Ack in flight
// (idempotent) is sent again; while the server is down a read and a write
// retry until their context ends and then match both the context's error
// and ErrNotApplied (nothing was sent); once the server is back, a put
// made during the outage completes on its own.
func TestFailoverSentinels(t *testing.T) {
	path := redisServer(t)
	port, err := freePort()
	require.NoError(t, err)
	start := func() *exec.Cmd {
		cmd, err := startNode(path, port, "--enable-debug-command", "yes")
		if cmd != nil {
			t.Cleanup(func() { stopNode(cmd) })
		}
		require.NoError(t, err)
		return cmd
	}
	node := start()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	e, err := xredis.New(bg(), rueidis.ClientOption{InitAddress: []string{addr}})
	require.NoError(t, err)
	defer e.Close()
	k := keys(t)
	add(t, e, k("s"), "1-1", "a", "1")
	require.NoError(t, e.CreateGroup(bg(), k("s"), "g", "0", xstream.GroupOptions{}))
	_, err = e.ReadGroup(bg(), "g", "c", xstream.ReadGroupArgs{}, k("s"), ">")
	require.NoError(t, err)

	// The server sleeps, an Add and an Ack wait for their replies, and
	// the server is killed.
	other, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableRetry: true})
	require.NoError(t, err)
	defer other.Close()
	go other.Do(bg(), other.B().Arbitrary("DEBUG", "SLEEP", "2").Build())
	time.Sleep(100 * time.Millisecond)
	addErr := make(chan error, 1)
	go func() {
		_, err := e.Add(bg(), k("s"), xstream.AddArgs{}, xstream.Fields("b", "2")...)
		addErr <- err
	}()
	ackCtx, ackCancel := context.WithTimeout(bg(), 3*time.Second) // the kill is seen well before, even on a loaded machine
	defer ackCancel()
	ackErr := make(chan error, 1)
	go func() {
		_, err := e.Ack(ackCtx, k("s"), "g", "1-1")
		ackErr <- err
	}()
	time.Sleep(200 * time.Millisecond)
	stopNode(node)
	err = <-addErr
	require.ErrorIs(t, err, xredis.ErrUnknownOutcome, "%v", err)
	require.NotErrorIs(t, err, xredis.ErrNotApplied)
	err = <-ackErr
	require.ErrorIs(t, err, context.DeadlineExceeded, "%v", err)
	require.True(t, errors.Is(err, xredis.ErrNotApplied) || errors.Is(err, xredis.ErrUnknownOutcome), "%v", err)

	// Down: retried until the context ends, never sent.
	ctx, cancel := context.WithTimeout(bg(), 300*time.Millisecond)
	defer cancel()
	_, err = e.Len(ctx, k("s"))
	require.ErrorIs(t, err, context.DeadlineExceeded, "%v", err)
	require.ErrorIs(t, err, xredis.ErrNotApplied, "%v", err)
	// A write may still meet the dead connection first, which rueidis
	// reports as EOF (an unknown outcome: the engine cannot tell that it
	// was not sent); the next one is refused before it is sent.
	for attempt := 0; ; attempt++ {
		ctx, cancel = context.WithTimeout(bg(), 300*time.Millisecond)
		_, err = e.Add(ctx, k("s"), xstream.AddArgs{}, xstream.Fields("c", "3")...)
		cancel()
		if attempt == 0 && errors.Is(err, xredis.ErrUnknownOutcome) && errors.Is(err, io.EOF) {
			t.Logf("the first Add while the server is down met its dead connection: %v", err)
			continue
		}
		break
	}
	require.ErrorIs(t, err, context.DeadlineExceeded, "%v", err)
	require.ErrorIs(t, err, xredis.ErrNotApplied, "%v", err)

	// Back (empty: persistence is off): an Add made meanwhile completes.
	began := time.Now()
	go func() {
		time.Sleep(300 * time.Millisecond)
		start()
	}()
	ctx2, cancel2 := context.WithTimeout(bg(), 10*time.Second)
	defer cancel2()
	_, err = e.Add(ctx2, k("s"), xstream.AddArgs{}, xstream.Fields("d", "4")...)
	require.NoError(t, err)
	t.Logf("an Add made while the server was down completed %s later, once it was back", time.Since(began).Round(time.Millisecond))
	n, err := e.Len(bg(), k("s"))
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
}

// TestFailoverReplicaWait checks WithReplicaWait's outcomes: on a server
// with a replica every write is confirmed; on servers without one (a
// standalone redis-server, the three-master cluster) each write is made
// and fails with ErrNotReplicated after the timeout, its results given
// (the ID of an Add, the sequence number of each put, PutRecords' records
// spread over the cluster's slots).
func TestFailoverReplicaWait(t *testing.T) {
	for _, kind := range []string{"replicated", "redis", "cluster"} {
		t.Run(kind, func(t *testing.T) {
			confirmed := kind == "replicated"
			timeout := 20 * time.Millisecond // spent in full where no replica confirms
			if confirmed {
				timeout = 5 * time.Second // never reached but on a stalled machine
			}
			e := newEngine(t, kind, xredis.WithReplicaWait(1, timeout))
			check := func(err error) {
				t.Helper()
				if confirmed {
					require.NoError(t, err)
				} else {
					require.ErrorIs(t, err, xredis.ErrNotReplicated)
				}
			}
			ctx := bg()
			k := keys(t)
			id, err := e.Add(ctx, k("s"), xstream.AddArgs{}, xstream.Fields("a", "1")...)
			check(err)
			require.False(t, id.IsZero())
			require.NoError(t, e.CreateGroup(ctx, k("s"), "g", "0", xstream.GroupOptions{}))
			_, err = e.ReadGroup(ctx, "g", "c", xstream.ReadGroupArgs{}, k("s"), ">")
			require.NoError(t, err)
			n, err := e.Ack(ctx, k("s"), "g", id.String())
			check(err)
			require.Equal(t, int64(1), n)

			s, err := xredis.CreateSharded(ctx, e, shardedName(t), xstream.ShardedArgs{Shards: 4})
			require.NoError(t, err)
			res, err := s.Put(ctx, "pk", xstream.PutArgs{}, xstream.Fields("a", "1")...)
			check(err)
			require.False(t, res.SequenceNumber.IsZero())
			recs := make([]xstream.PutRecordsEntry, 40)
			for i := range recs {
				recs[i] = xstream.PutRecordsEntry{PartitionKey: "pk" + strconv.Itoa(i), Fields: xstream.Fields("i", strconv.Itoa(i))}
			}
			out, failed, err := s.PutRecords(ctx, recs)
			require.NoError(t, err)
			for _, r := range out {
				check(r.Err)
				require.False(t, r.SequenceNumber.IsZero())
			}
			if confirmed {
				require.Zero(t, failed)
			} else {
				require.Equal(t, len(recs), failed, "records not confirmed count as failed")
			}
			check(s.SaveCheckpoints(ctx, "app", []xstream.Checkpoint{{ShardID: res.ShardID, SequenceNumber: res.SequenceNumber}}))
			cps, err := s.LoadCheckpoints(ctx, "app")
			require.NoError(t, err)
			require.Len(t, cps, 1)

			// Every write was made, confirmed or not.
			total := 0
			for n := range 4 {
				l, err := e.Len(ctx, s.StreamKey(n))
				require.NoError(t, err)
				total += int(l)
			}
			require.Equal(t, 1+len(recs), total)
		})
	}
}

// TestFailoverRetry checks the retry of an operation of several commands
// (for lease renewals and the like): failures that say nothing ran are
// tried again; an unknown outcome only when the operation is idempotent;
// other errors end it; the context ends it with its error and the
// sentinel.
func TestFailoverRetry(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	tries := 0
	err := xredis.Retry(bg(), false, func() error {
		tries++
		if tries < 3 {
			return refused
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 3, tries)

	tries = 0
	err = xredis.Retry(bg(), false, func() error { tries++; return io.EOF })
	require.ErrorIs(t, err, xredis.ErrUnknownOutcome)
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, 1, tries)

	tries = 0
	err = xredis.Retry(bg(), true, func() error {
		tries++
		if tries < 3 {
			return reset
		}
		return xstream.ErrNoGroup
	})
	require.ErrorIs(t, err, xstream.ErrNoGroup)
	require.NotErrorIs(t, err, xredis.ErrUnknownOutcome)
	require.Equal(t, 3, tries)

	tries = 0
	other := errors.New("CLUSTERDOWN, but not from a server")
	err = xredis.Retry(bg(), true, func() error { tries++; return other })
	require.Equal(t, other, err)
	require.Equal(t, 1, tries)

	ctx, cancel := context.WithTimeout(bg(), 100*time.Millisecond)
	defer cancel()
	err = xredis.Retry(ctx, true, func() error { return refused })
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, err, xredis.ErrNotApplied)
	require.ErrorIs(t, err, syscall.ECONNREFUSED)
}

// replProxy forwards a replica's connection to its master; paused, it
// holds what the master sends instead of forwarding it, as a slow or cut
// network would; drop closes both sides, what it held lost.
type replProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	paused bool
	conns  []net.Conn
}

func newReplProxy(t *testing.T, target string) *replProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &replProxy{ln: ln, target: target}
	t.Cleanup(p.drop)
	go func() {
		for {
			down, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				down.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, down, up)
			p.mu.Unlock()
			go io.Copy(up, down) // the replica's ACKs go through
			go func() {
				buf := make([]byte, 64<<10)
				for {
					n, err := up.Read(buf)
					if err != nil {
						down.Close()
						return
					}
					p.mu.Lock()
					paused := p.paused
					p.mu.Unlock()
					if !paused {
						down.Write(buf[:n])
					}
				}
			}()
		}
	}()
	return p
}

func (p *replProxy) port() int { return p.ln.Addr().(*net.TCPAddr).Port }

func (p *replProxy) pause() {
	p.mu.Lock()
	p.paused = true
	p.mu.Unlock()
}

func (p *replProxy) drop() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

// TestFailoverLaggingReplica shows the loss that WithReplicaWait prevents,
// which a SIGKILL on one host seldom causes (the kernel still delivers
// what the dead master wrote to its replica's socket): a master with one
// replica behind a proxy that stops forwarding the replication stream, as
// a slow or cut network would; 10 puts; the master killed; the replica
// promoted (REPLICAOF NO ONE). Without the wait, the 10 puts were
// acknowledged and are lost; with WithReplicaWait(1, 200ms), each failed
// with ErrNotReplicated, and no acknowledged put is lost.
func TestFailoverLaggingReplica(t *testing.T) {
	path := redisServer(t)
	for _, wait := range []bool{false, true} {
		t.Run(map[bool]string{false: "without-wait", true: "with-wait"}[wait], func(t *testing.T) {
			ports := [2]int{}
			for i := range ports {
				var err error
				ports[i], err = freePort()
				require.NoError(t, err)
			}
			master, err := startNode(path, ports[0], "--repl-diskless-sync-delay", "0")
			if master != nil {
				t.Cleanup(func() { stopNode(master) })
			}
			require.NoError(t, err)
			masterAddr := "127.0.0.1:" + strconv.Itoa(ports[0])
			proxy := newReplProxy(t, masterAddr)
			dir := filepath.Join(scratch, "lagging-"+strconv.Itoa(ports[1]))
			require.NoError(t, os.MkdirAll(dir, 0o755))
			replica, err := startNode(path, ports[1], "--dir", dir, "--replicaof", "127.0.0.1", strconv.Itoa(proxy.port()))
			if replica != nil {
				t.Cleanup(func() { stopNode(replica) })
			}
			require.NoError(t, err)
			rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"127.0.0.1:" + strconv.Itoa(ports[1])}, DisableCache: true})
			require.NoError(t, err)
			defer rc.Close()
			deadline := time.Now().Add(20 * time.Second)
			for {
				out, _ := exec.Command("redis-cli", "-p", strconv.Itoa(ports[0]), "info", "replication").Output()
				if replicated(out) {
					break
				}
				require.True(t, time.Now().Before(deadline), "the replica is not online after 20s")
				time.Sleep(20 * time.Millisecond)
			}

			var opts []xredis.Option
			if wait {
				opts = append(opts, xredis.WithReplicaWait(1, 200*time.Millisecond))
			}
			e, err := xredis.New(bg(), rueidis.ClientOption{InitAddress: []string{masterAddr}}, opts...)
			require.NoError(t, err)
			defer e.Close()
			s, err := xredis.CreateSharded(bg(), e, shardedName(t), xstream.ShardedArgs{Shards: 1})
			require.NoError(t, err)
			if wait {
				// The first WAITs after the replica came online may take
				// longer (a loaded machine, -race): add elsewhere until one
				// is confirmed.
				deadline := time.Now().Add(10 * time.Second)
				for {
					_, err := e.Add(bg(), shardedName(t)+"-warm", xstream.AddArgs{}, xstream.Fields("a", "1")...)
					if err == nil {
						break
					}
					require.ErrorIs(t, err, xredis.ErrNotReplicated)
					require.True(t, time.Now().Before(deadline), "no Add confirmed by the replica in 10s")
				}
			}
			var acked []xstream.ID
			for i := range 20 {
				if i == 10 {
					// Once the replica has the first 10.
					deadline := time.Now().Add(10 * time.Second)
					for {
						n, err := rc.Do(bg(), rc.B().Xlen().Key(s.StreamKey(0)).Build()).AsInt64()
						require.NoError(t, err)
						if n == 10 {
							break
						}
						require.True(t, time.Now().Before(deadline), "the replica has %d of the first 10 puts after 10s", n)
						time.Sleep(5 * time.Millisecond)
					}
					proxy.pause()
				}
				res, err := s.Put(bg(), "pk", xstream.PutArgs{}, xstream.Fields("i", strconv.Itoa(i))...)
				switch {
				case err == nil:
					acked = append(acked, res.SequenceNumber)
				case wait && i >= 10:
					require.ErrorIs(t, err, xredis.ErrNotReplicated)
					require.False(t, res.SequenceNumber.IsZero(), "the put was made on the master")
				default:
					t.Fatalf("put %d: %v", i, err)
				}
			}
			stopNode(master)
			proxy.drop()
			require.NoError(t, rc.Do(bg(), rc.B().Arbitrary("REPLICAOF", "NO", "ONE").Build()).Error())
			es, err := rc.Do(bg(), rc.B().Xrange().Key(s.StreamKey(0)).Start("-").End("+").Build()).AsXRange()
			require.NoError(t, err)
			have := map[string]bool{}
			for _, en := range es {
				have[en.ID] = true
			}
			lost := 0
			for _, id := range acked {
				if !have[id.String()] {
					lost++
				}
			}
			t.Logf("%d puts acknowledged, %d of them lost once the replica was promoted; the promoted replica holds %d records",
				len(acked), lost, len(es))
			if wait {
				require.Len(t, acked, 10)
				require.Zero(t, lost, "acknowledged puts lost")
			} else {
				require.Len(t, acked, 20)
				require.Equal(t, 10, lost, "the puts acknowledged while the replica lagged are lost")
			}
		})
	}
}
