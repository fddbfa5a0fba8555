package xredis_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/xredis"
	"github.com/xstreamgo/xstream/xstreamtest"
)

func TestLeaseTableConformance(t *testing.T) {
	eachShardedKind(t, func(t *testing.T, kind string) {
		s, _ := newSharded(t, kind, xstream.ShardedArgs{Shards: 1})
		n := 0
		xstreamtest.RunLeaseTable(t, func(t *testing.T) xstream.LeaseTable {
			n++
			lt, err := s.LeaseTable("app" + strconv.Itoa(n))
			require.NoError(t, err)
			return lt
		})
		_, err := s.LeaseTable("")
		require.ErrorIs(t, err, xstream.ErrInvalidArgument)
	})
}

// The lease workers across processes: this test binary run again as
// TestShardedHelperProcess in a role (see leaseRole):
//
//   - "lease-producer": puts records of keys p<P>k0..k3 with per-key sequence
//     numbers (field n) until the stop key exists, pausing a little
//     between rounds, then prints "records <count per key>";
//   - "lease-resharder": XREDIS_N random reshards, one every 300 ms;
//   - "lease-worker": runs an xstream.Worker (ID XREDIS_WORKER) until the stop
//     key exists, and prints what its processors do, one line an event,
//     each with the time in Unix nanoseconds: "init <shard> <t>",
//     "recs <shard> <t> <key>:<n> ...", "end <shard> <t> <why>",
//     "fenced <shard> <t>" (a checkpoint refused with ErrLeaseLost),
//     "held <t> <leases>" every 100 ms, "err <shard> <error>".

const (
	leaseDuration = 1500 * time.Millisecond
	leaseRenew    = 500 * time.Millisecond
	leaseKeys     = 4 // per producer
)

// leaseRole runs a role of TestLeaseWorkersAcrossProcesses in a helper
// process (TestShardedHelperProcess).
func leaseRole(t *testing.T, ctx context.Context, e xredis.Engine, s *xredis.Sharded, role string) {
	c := e.Client()
	stopped := func() bool {
		n, err := c.Do(ctx, c.B().Exists().Key(os.Getenv("XREDIS_STOP")).Build()).AsInt64()
		require.NoError(t, err)
		return n > 0
	}
	switch role {
	case "lease-producer":
		p, i := os.Getenv("XREDIS_PRODUCER"), 0
		for ; i%20 != 0 || !stopped(); i++ {
			for k := range leaseKeys {
				_, err := s.Put(ctx, "p"+p+"k"+strconv.Itoa(k), xstream.PutArgs{}, xstream.Fields("n", strconv.Itoa(i))...)
				require.NoError(t, err)
			}
			time.Sleep(2 * time.Millisecond)
		}
		fmt.Printf("records %d\n", i)
	case "lease-resharder":
		n, _ := strconv.Atoi(os.Getenv("XREDIS_N"))
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
		for i := 0; i < n; {
			time.Sleep(300 * time.Millisecond)
			err := reshardOnce(ctx, s, rng)
			if errors.Is(err, xstream.ErrResourceInUse) {
				continue
			}
			require.NoError(t, err)
			i++
		}
	case "lease-worker":
		runLeaseWorker(t, ctx, s, os.Getenv("XREDIS_WORKER"), stopped)
	}
}

// eventOut writes the lines of a worker process, whole.
type eventOut struct {
	mu sync.Mutex
	w  io.Writer
}

func (o *eventOut) printf(format string, args ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	fmt.Fprintf(o.w, format+"\n", args...)
}

func runLeaseWorker(t *testing.T, ctx context.Context, s *xredis.Sharded, id string, stop func() bool) {
	out := &eventOut{w: os.Stdout}
	table, err := s.LeaseTable("app")
	require.NoError(t, err)
	w, err := xstream.NewWorker(s, table, func(string) xstream.ShardProcessor { return &lineProc{out: out} }, xstream.WorkerOptions{
		ID: id, LeaseDuration: leaseDuration, RenewPeriod: leaseRenew, BatchSize: 100, IdleWait: 20 * time.Millisecond,
		OnError: func(shardID string, err error) {
			out.printf("err %s %v", shardID, strings.ReplaceAll(err.Error(), "\n", " "))
		},
	})
	require.NoError(t, err)
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- w.Run(wctx) }()
	for !stop() {
		out.printf("held %d %d", time.Now().UnixNano(), len(w.Shards()))
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	require.NoError(t, <-done)
}

// lineProc prints what it does (see TestLeaseWorkersHelperProcess) and
// checkpoints after each batch.
type lineProc struct {
	out   *eventOut
	shard string
}

func nowNano() int64 { return time.Now().UnixNano() }

func (p *lineProc) Initialize(_ context.Context, shardID string, _ xstream.Checkpoint) error {
	p.shard = shardID
	p.out.printf("init %s %d", shardID, nowNano())
	return nil
}

func (p *lineProc) ProcessRecords(ctx context.Context, records []xstream.Record, cp *xstream.Checkpointer, _ int64) error {
	var b strings.Builder
	fmt.Fprintf(&b, "recs %s %d", p.shard, nowNano())
	for _, r := range records {
		fmt.Fprintf(&b, " %s:%s", r.PartitionKey, r.Fields[0].Value)
	}
	p.out.printf("%s", b.String())
	return p.checkpoint(ctx, cp)
}

func (p *lineProc) checkpoint(ctx context.Context, cp *xstream.Checkpointer) error {
	err := cp.Checkpoint(ctx)
	if errors.Is(err, xstream.ErrLeaseLost) {
		p.out.printf("fenced %s %d", p.shard, nowNano())
		return nil
	}
	return err
}

func (p *lineProc) ShardEnded(ctx context.Context, cp *xstream.Checkpointer) error {
	err := p.checkpoint(ctx, cp)
	p.out.printf("end %s %d ended", p.shard, nowNano())
	return err
}

func (p *lineProc) LeaseLost(context.Context) { p.out.printf("end %s %d lost", p.shard, nowNano()) }

func (p *lineProc) Shutdown(ctx context.Context, cp *xstream.Checkpointer) {
	p.checkpoint(ctx, cp)
	p.out.printf("end %s %d shutdown", p.shard, nowNano())
}

// workerEvent is a line of a worker process.
type workerEvent struct {
	worker string
	kind   string // init, recs, end, fenced, held
	shard  string
	at     int64
	recs   []string // key:n
	held   int
}

// workerLog gathers the events of the worker processes.
type workerLog struct {
	mu     sync.Mutex
	events []workerEvent
	errs   []string
	held   map[string]int // by worker: leases at its last "held" line
}

func (l *workerLog) read(t *testing.T, worker string, r io.Reader, done chan<- struct{}) {
	defer close(done)
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		ev := workerEvent{worker: worker, kind: f[0], shard: f[1]}
		switch f[0] {
		case "err":
			l.mu.Lock()
			l.errs = append(l.errs, worker+": "+sc.Text())
			l.mu.Unlock()
			continue
		case "held":
			ev.shard = ""
			ev.at, _ = strconv.ParseInt(f[1], 10, 64)
			ev.held, _ = strconv.Atoi(f[2])
			l.mu.Lock()
			l.held[worker] = ev.held
			l.mu.Unlock()
			continue
		case "init", "recs", "end", "fenced":
			ev.at, _ = strconv.ParseInt(f[2], 10, 64)
			if f[0] == "recs" {
				ev.recs = f[3:]
			}
		default:
			continue
		}
		l.mu.Lock()
		l.events = append(l.events, ev)
		l.mu.Unlock()
	}
}

// TestLeaseWorkersAcrossProcesses: on a 3-master cluster, three worker
// processes of one application share a sharded stream while two producer
// processes put records with per-key sequence numbers and a resharder
// process splits, merges and rescales; after 3 s the worker processing
// the most shards is killed with SIGKILL and a fourth one starts. Then:
// every record was processed at least once; a shard was never processed
// by two live lease holders at once (the intervals from a processor's
// Initialize to its last call, the killed worker's ending at its death,
// do not overlap); each key's records were processed in order (record n
// only once 0..n-1 were); the killed worker's shards were taken over
// within the lease duration plus one renewal period (and 100 ms for
// the round trips); and the leases end up balanced, max - min <= 1.
func TestLeaseWorkersAcrossProcesses(t *testing.T) {
	addrs, e, s := processStream(t, 3)
	name := s.Name()
	c := e.Client()
	pstop, wstop := "{"+name+"}:pstop", "{"+name+"}:wstop"
	t.Cleanup(func() { c.Do(bg(), c.B().Del().Key(pstop, wstop).Build()) })
	run := func(role string, env ...string) *exec.Cmd {
		cmd := helper(t, addrs, name, "lease-"+role, env...)
		dieWithTest(cmd)
		return cmd
	}

	log := &workerLog{held: map[string]int{}}
	type proc struct {
		cmd  *exec.Cmd
		read chan struct{}
	}
	workers := map[string]*proc{}
	startWorker := func(id string) {
		cmd := run("worker", "XREDIS_WORKER="+id, "XREDIS_STOP="+wstop)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		p := &proc{cmd: cmd, read: make(chan struct{})}
		go log.read(t, id, out, p.read)
		workers[id] = p
	}
	for i := range 3 {
		startWorker("w" + strconv.Itoa(i))
	}
	var producers []*exec.Cmd
	var counts []*strings.Builder
	for p := range 2 {
		cmd := run("producer", "XREDIS_PRODUCER="+strconv.Itoa(p), "XREDIS_STOP="+pstop)
		var out strings.Builder
		cmd.Stdout = &out
		require.NoError(t, cmd.Start())
		producers, counts = append(producers, cmd), append(counts, &out)
	}
	resharder := run("resharder", "XREDIS_N=12")
	require.NoError(t, resharder.Start())

	// The kill, of the worker processing the most shards (3 s after the
	// start, or once one processes a shard: a process takes a while to
	// start on a loaded machine), and a new worker.
	time.Sleep(3 * time.Second)
	victim := ""
	for deadline := time.Now().Add(30 * time.Second); victim == ""; time.Sleep(50 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "no worker processes a shard 33 s after the start")
		processing := map[string]int{}
		log.mu.Lock()
		for _, ev := range log.events {
			switch ev.kind {
			case "init":
				processing[ev.worker]++
			case "end":
				processing[ev.worker]--
			}
		}
		log.mu.Unlock()
		for id, n := range processing {
			if n > 0 && (victim == "" || n > processing[victim]) {
				victim = id
			}
		}
	}
	killedFrom := time.Now().UnixNano()
	require.NoError(t, workers[victim].cmd.Process.Signal(syscall.SIGKILL))
	// The output is read to its end before Wait, which closes the pipe
	// and would drop what is still in it.
	<-workers[victim].read
	workers[victim].cmd.Wait()
	killedTo := time.Now().UnixNano()
	startWorker("w3")

	require.NoError(t, resharder.Wait(), "the resharder")
	time.Sleep(time.Second)
	require.NoError(t, c.Do(bg(), c.B().Set().Key(pstop).Value("1").Build()).Error())
	perKey := map[string]int{}
	for p, cmd := range producers {
		require.NoError(t, cmd.Wait(), "a producer")
		var n int
		_, err := fmt.Sscanf(counts[p].String(), "records %d", &n)
		require.NoError(t, err, "producer output %q", counts[p].String())
		for k := range leaseKeys {
			perKey["p"+strconv.Itoa(p)+"k"+strconv.Itoa(k)] = n
		}
	}

	// Every record processed, each key in order.
	check := func() (missing int, order []string) {
		log.mu.Lock()
		evs := slices.Clone(log.events)
		log.mu.Unlock()
		slices.SortStableFunc(evs, func(a, b workerEvent) int { return int(a.at - b.at) })
		next := map[string]int{}
		for _, ev := range evs {
			for _, kn := range ev.recs {
				k, ns, _ := strings.Cut(kn, ":")
				n, _ := strconv.Atoi(ns)
				switch want := next[k]; {
				case n > want:
					order = append(order, fmt.Sprintf("key %s: record %d processed by %s (%s) before record %d", k, n, ev.worker, ev.shard, want))
				case n == want:
					next[k]++
				}
			}
		}
		for k, n := range perKey {
			missing += n - next[k]
		}
		return missing, order
	}
	deadline := time.Now().Add(time.Minute)
	for {
		missing, order := check()
		require.Empty(t, order)
		if missing == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "%d records not processed a minute after the producers stopped", missing)
		time.Sleep(100 * time.Millisecond)
	}

	// Balance once stable.
	open, err := s.ListShards(bg(), xstream.ShardFilter{Type: xstream.FilterAtLatest})
	require.NoError(t, err)
	var held []int
	for stable, deadline := 0, time.Now().Add(10*leaseDuration); stable < 5; time.Sleep(leaseRenew / 2) {
		require.True(t, time.Now().Before(deadline), "leases not balanced over the live workers: %v, %d OPEN shards", held, len(open))
		held = held[:0]
		log.mu.Lock()
		for id, n := range log.held {
			if id != victim {
				held = append(held, n)
			}
		}
		log.mu.Unlock()
		sum := 0
		for _, n := range held {
			sum += n
		}
		if slices.Max(held)-slices.Min(held) <= 1 && sum == len(open) {
			stable++
		} else {
			stable = 0
		}
	}

	require.NoError(t, c.Do(bg(), c.B().Set().Key(wstop).Value("1").Build()).Error())
	for id, p := range workers {
		if id != victim {
			<-p.read // all of it, before Wait closes the pipe
			require.NoError(t, p.cmd.Wait(), "worker %s", id)
		}
	}

	// No two live holders at once: per shard, the intervals from init to
	// end, the killed worker's ending at its death.
	log.mu.Lock()
	defer log.mu.Unlock()
	type interval struct {
		worker   string
		from, to int64
	}
	byShard := map[string][]interval{}
	open1 := map[string]int64{} // worker/shard: init time
	fenced, recs, inits := 0, 0, 0
	for _, ev := range log.events {
		key := ev.worker + "/" + ev.shard
		switch ev.kind {
		case "init":
			open1[key] = ev.at
			inits++
		case "end":
			byShard[ev.shard] = append(byShard[ev.shard], interval{ev.worker, open1[key], ev.at})
			delete(open1, key)
		case "fenced":
			fenced++
		case "recs":
			recs += len(ev.recs)
		}
	}
	var orphans []string
	for key, from := range open1 {
		worker, shard, _ := strings.Cut(key, "/")
		require.Equal(t, victim, worker, "%s has no end", key)
		byShard[shard] = append(byShard[shard], interval{worker, from, killedTo})
		orphans = append(orphans, shard)
	}
	for shard, ivs := range byShard {
		slices.SortFunc(ivs, func(a, b interval) int { return int(a.from - b.from) })
		for i := 1; i < len(ivs); i++ {
			require.LessOrEqual(t, ivs[i-1].to, ivs[i].from, "%s: %s holds it from %d to %d, %s from %d", shard, ivs[i-1].worker, ivs[i-1].from, ivs[i-1].to, ivs[i].worker, ivs[i].from)
		}
	}

	// The killed worker's shards taken over in time (those that needed
	// more processing).
	table, err := s.LeaseTable("app")
	require.NoError(t, err)
	leases, err := table.Leases(bg())
	require.NoError(t, err)
	all, err := s.ListShards(bg(), xstream.ShardFilter{})
	require.NoError(t, err)
	require.NotEmpty(t, orphans, "the killed worker was processing shards")
	var slowest time.Duration
	taken := 0
	for _, sh := range orphans {
		var at int64
		for _, iv := range byShard[sh] {
			if iv.worker != victim && iv.from > killedFrom && (at == 0 || iv.from < at) {
				at = iv.from
			}
		}
		if at == 0 {
			require.True(t, slices.ContainsFunc(leases, func(l xstream.Lease) bool { return l.ShardID == sh && l.ShardEnd }) ||
				slices.ContainsFunc(all, func(s xstream.ShardInfo) bool {
					r := s.SequenceNumberRange
					return s.ShardID == sh && s.State == xstream.ShardClosed && r.EndingSequenceNumber == r.StartingSequenceNumber
				}), "%s, held by the killed worker, was never taken over", sh)
			continue
		}
		took := time.Duration(at - killedFrom)
		require.LessOrEqual(t, took, leaseDuration+leaseRenew+100*time.Millisecond, "%s taken over %s after the kill", sh, took)
		slowest = max(slowest, took)
		taken++
	}
	want := 0
	for _, n := range perKey {
		want += n
	}
	t.Logf("%d records put, %d processed, %d shards, %d leases taken, %d checkpoints fenced; killed %s processing %d shards, %d taken over (the others needed no more processing), the last %s after the kill; balance %v; %d errors handled",
		want, recs, len(all), inits, fenced, victim, len(orphans), taken, slowest, held, len(log.errs))
	for i, e := range log.errs {
		if i < 10 {
			t.Log(e)
		}
	}
}
