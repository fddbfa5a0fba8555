package xstream_test

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/xstreamtest"
)

func TestLeaseTableConformance(t *testing.T) {
	t.Run("Memory", func(t *testing.T) {
		xstreamtest.RunLeaseTable(t, func(*testing.T) xstream.LeaseTable { return xstream.NewLeaseTable() })
	})
	t.Run("DB", func(t *testing.T) {
		n := 0
		xstreamtest.RunLeaseTable(t, func(t *testing.T) xstream.LeaseTable {
			db, err := xstream.Open(t.TempDir())
			require.NoError(t, err)
			t.Cleanup(func() { db.Close() })
			n++
			_, err = db.CreateShardedStream("s", xstream.ShardedArgs{Shards: 1})
			require.NoError(t, err)
			lt, err := db.LeaseTable("s", "app"+strconv.Itoa(n))
			require.NoError(t, err)
			return lt
		})
	})
}

// TestLeaseTableDurable: the checkpoints of a DB's lease table survive a
// reopen (owners and counters do not: no worker outlives its process),
// and a worker of the reopened DB resumes after them.
func TestLeaseTableDurable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := xstream.Open(dir)
	require.NoError(t, err)
	ss, err := db.CreateShardedStream("s", xstream.ShardedArgs{Shards: 2})
	require.NoError(t, err)
	lt, err := db.LeaseTable("s", "app")
	require.NoError(t, err)
	again, err := db.LeaseTable("s", "app")
	require.NoError(t, err)
	require.Same(t, lt, again, "one table per name")
	_, err = db.LeaseTable("nope", "app")
	require.ErrorIs(t, err, xstream.ErrNoStream)
	_, err = db.LeaseTable("s", "")
	require.ErrorIs(t, err, xstream.ErrInvalidArgument)

	var puts []xstream.PutResult
	for i := range 6 {
		r, err := ss.Put("k"+strconv.Itoa(i), xstream.PutArgs{}, xstream.Fields("n", "0")...)
		require.NoError(t, err)
		puts = append(puts, r)
	}
	shard := puts[0].ShardID
	_, err = lt.CreateLease(ctx, shard)
	require.NoError(t, err)
	_, err = lt.CreateLease(ctx, "shardId-000000000009")
	require.NoError(t, err)
	l, err := lt.UpdateLease(ctx, xstream.Lease{Checkpoint: xstream.Checkpoint{ShardID: shard}, Owner: "w"})
	require.NoError(t, err)
	for _, cp := range []xstream.ID{puts[0].SequenceNumber, puts[0].SequenceNumber} { // twice: one entry kept
		l.SequenceNumber = cp
		l, err = lt.UpdateLease(ctx, l)
		require.NoError(t, err)
	}
	require.NoError(t, db.Close())

	db, err = xstream.Open(dir)
	require.NoError(t, err)
	defer db.Close()
	lt, err = db.LeaseTable("s", "app")
	require.NoError(t, err)
	ls, err := lt.Leases(ctx)
	require.NoError(t, err)
	require.Equal(t, []xstream.Lease{{Checkpoint: xstream.Checkpoint{ShardID: shard, SequenceNumber: puts[0].SequenceNumber}}}, ls,
		"the checkpoint, with no owner; the lease without one was not kept")
	s, ok := db.Lookup(xstream.LeaseStreamName("s", "app"))
	require.True(t, ok)
	require.Equal(t, int64(1), s.Len(), "one entry per checkpointed shard")

	// A worker of the new process goes on after the checkpoint.
	ss, _ = db.ShardedStream("s")
	tr := newTracker()
	ctx, cancel := context.WithCancel(ctx)
	batch := make(chan struct{}, 1)
	w, err := xstream.NewWorker(xstream.LocalSharded(ss), lt, tr.processor("w2", func() {
		select {
		case batch <- struct{}{}:
		default:
		}
	}), xstream.WorkerOptions{LeaseDuration: time.Second, IdleWait: time.Millisecond})
	require.NoError(t, err)
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()
	for tr.total() < len(puts)-1 {
		<-batch
	}
	cancel()
	require.NoError(t, <-done)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	require.Equal(t, len(puts)-1, tr.processed, "every record after the checkpoint, once")
	require.Zero(t, tr.seen[puts[0].ShardID+"/"+puts[0].SequenceNumber.String()])
}

// tracker records what the processors of a test's workers do and checks
// it as it goes: a shard has at most one live holder (from Initialize to
// its last call), and a partition key's record n is processed only after
// its records 0..n-1 were.
type tracker struct {
	mu        sync.Mutex
	holder    map[string]string // by shard: the worker processing it
	since     map[string]time.Time
	next      map[string]int // by key: the first record never processed
	seen      map[string]int // by shard/sequence number: times processed
	processed int
	fenced    int // checkpoints refused with ErrLeaseLost
	inits     []initEvent
	errs      []string
	dead      map[string]bool // workers killed: their calls no longer count
}

type initEvent struct {
	shard, worker string
	at            time.Time
}

func newTracker() *tracker {
	return &tracker{holder: map[string]string{}, since: map[string]time.Time{}, next: map[string]int{}, seen: map[string]int{}, dead: map[string]bool{}}
}

func (tr *tracker) failf(format string, args ...any) {
	tr.errs = append(tr.errs, fmt.Sprintf(format, args...))
}

func (tr *tracker) total() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.processed
}

// kill ends the intervals of worker's shards now: a killed process
// processes nothing more.
func (tr *tracker) kill(worker string) []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.dead[worker] = true
	var shards []string
	for sh, w := range tr.holder {
		if w == worker {
			delete(tr.holder, sh)
			shards = append(shards, sh)
		}
	}
	return shards
}

func (tr *tracker) processor(worker string, onBatch func()) func(string) xstream.ShardProcessor {
	return func(string) xstream.ShardProcessor { return &trackProc{tr: tr, worker: worker, onBatch: onBatch} }
}

type trackProc struct {
	tr      *tracker
	worker  string
	shard   string
	onBatch func()
}

func (p *trackProc) Initialize(_ context.Context, shardID string, _ xstream.Checkpoint) error {
	tr := p.tr
	tr.mu.Lock()
	defer tr.mu.Unlock()
	p.shard = shardID
	if tr.dead[p.worker] {
		return nil
	}
	if h, ok := tr.holder[shardID]; ok {
		tr.failf("%s: %s starts processing while %s does", shardID, p.worker, h)
	}
	tr.holder[shardID] = p.worker
	tr.inits = append(tr.inits, initEvent{shardID, p.worker, time.Now()})
	return nil
}

func (p *trackProc) end() {
	tr := p.tr
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.dead[p.worker] {
		return
	}
	if h := tr.holder[p.shard]; h != p.worker {
		tr.failf("%s: %s ends but %q holds it", p.shard, p.worker, h)
	}
	delete(tr.holder, p.shard)
}

func (p *trackProc) ProcessRecords(ctx context.Context, records []xstream.Record, cp *xstream.Checkpointer, _ int64) error {
	tr := p.tr
	tr.mu.Lock()
	if tr.dead[p.worker] {
		tr.mu.Unlock()
		return nil
	}
	if h := tr.holder[p.shard]; h != p.worker {
		tr.failf("%s: %s processes records while %q holds it", p.shard, p.worker, h)
	}
	for _, r := range records {
		n, _ := strconv.Atoi(r.Fields[0].Value)
		if want := tr.next[r.PartitionKey]; n > want {
			tr.failf("key %s: record %d processed before record %d (shard %s, %s)", r.PartitionKey, n, want, r.ShardID, p.worker)
		} else if n == want {
			tr.next[r.PartitionKey]++
		}
		tr.seen[r.ShardID+"/"+r.SequenceNumber.String()]++
		tr.processed++
	}
	tr.mu.Unlock()
	if p.onBatch != nil {
		p.onBatch()
	}
	return p.checkpoint(ctx, cp)
}

// checkpoint checkpoints and checks that a checkpoint is accepted only
// from the shard's holder: once another worker holds it, it fails with
// ErrLeaseLost. (Under synctest no time passes between the write and
// the check, and another holder starts a lease duration after a take.)
func (p *trackProc) checkpoint(ctx context.Context, cp *xstream.Checkpointer) error {
	tr := p.tr
	err := cp.Checkpoint(ctx)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	switch {
	case tr.dead[p.worker]:
		return nil
	case errors.Is(err, xstream.ErrLeaseLost):
		tr.fenced++
		return nil
	case err == nil && tr.holder[p.shard] != p.worker:
		tr.failf("%s: a checkpoint of %s accepted while %q holds it", p.shard, p.worker, tr.holder[p.shard])
	}
	return err
}

func (p *trackProc) ShardEnded(ctx context.Context, cp *xstream.Checkpointer) error {
	err := p.checkpoint(ctx, cp)
	p.end()
	return err
}

func (p *trackProc) LeaseLost(ctx context.Context) { p.end() }

func (p *trackProc) Shutdown(ctx context.Context, cp *xstream.Checkpointer) {
	p.checkpoint(ctx, cp)
	p.end()
}

// killableTable is a lease table that fails every call once killed, as
// the table of a process killed with SIGKILL would, for it.
type killableTable struct {
	xstream.LeaseTable
	killed atomic.Bool
}

var errKilled = errors.New("killed")

func (k *killableTable) Leases(ctx context.Context) ([]xstream.Lease, error) {
	if k.killed.Load() {
		return nil, errKilled
	}
	return k.LeaseTable.Leases(ctx)
}

func (k *killableTable) CreateLease(ctx context.Context, id string) (bool, error) {
	if k.killed.Load() {
		return false, errKilled
	}
	return k.LeaseTable.CreateLease(ctx, id)
}

func (k *killableTable) UpdateLease(ctx context.Context, l xstream.Lease) (xstream.Lease, error) {
	if k.killed.Load() {
		return xstream.Lease{}, errKilled
	}
	return k.LeaseTable.UpdateLease(ctx, l)
}

func (k *killableTable) DeleteLease(ctx context.Context, id string) error {
	if k.killed.Load() {
		return errKilled
	}
	return k.LeaseTable.DeleteLease(ctx, id)
}

// reshardOnce splits, merges or rescales ss at random, as a resharder
// would.
func reshardOnce(ss *xstream.ShardedStream, rng *rand.Rand) error {
	open, err := ss.ListShards(xstream.ShardFilter{Type: xstream.FilterAtLatest})
	if err != nil {
		return err
	}
	slices.SortFunc(open, func(a, b xstream.ShardInfo) int {
		return a.HashKeyRange.StartingHashKey.Compare(b.HashKeyRange.StartingHashKey)
	})
	switch r := rng.IntN(10); {
	case r < 2:
		lo, hi := (len(open)+1)/2, min(2*len(open), 8)
		return ss.UpdateShardCount(lo + rng.IntN(hi-lo+1))
	case (r < 6 && len(open) < 8) || len(open) == 1:
		sh := open[rng.IntN(len(open))]
		mid := new(big.Int).Add(bigHashKey(sh.HashKeyRange.StartingHashKey), bigHashKey(sh.HashKeyRange.EndingHashKey))
		return ss.SplitShard(sh.ShardID, mid.Rsh(mid, 1).String())
	default:
		i := rng.IntN(len(open) - 1)
		return ss.MergeShards(open[i].ShardID, open[i+1].ShardID)
	}
}

func bigHashKey(h xstream.HashKey) *big.Int {
	b := new(big.Int).SetUint64(h.Hi)
	return b.Lsh(b, 64).Or(b, new(big.Int).SetUint64(h.Lo))
}

// TestLeaseWorkers runs, in a synctest bubble (fake time, so the test is
// quick and its timing exact), three workers of one application over a
// sharded stream while two producers put records with per-key sequence
// numbers and a resharder splits, merges and rescales; at 6 s one worker
// is killed (its table calls fail from then on and its processors' calls
// no longer count, as after a SIGKILL) and a fourth one starts. It
// checks that every record is processed at least once, a shard never by
// two live holders at once, each key's records in order, a checkpoint
// accepted only from the shard's holder (others are fenced with
// ErrLeaseLost), the killed
// worker's shards taken over within a lease duration plus a renewal
// period, the leases balanced (max - min <= 1) once stable, and that
// Run leaves no goroutine behind (synctest.Test waits for them).
func TestLeaseWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			lease    = 3 * time.Second
			renew    = time.Second
			keys     = 12 // per producer
			reshards = 20
		)
		ss, err := xstream.NewShardedStream(xstream.ShardedArgs{Shards: 3}, xstream.WithClock(time.Now))
		require.NoError(t, err)
		e := xstream.LocalSharded(ss)
		table := xstream.NewLeaseTable()
		tr := newTracker()
		opts := xstream.WorkerOptions{LeaseDuration: lease, RenewPeriod: renew, BatchSize: 20, IdleWait: 50 * time.Millisecond}

		type running struct {
			w      *xstream.Worker
			table  *killableTable
			cancel context.CancelFunc
			done   chan error
		}
		var workers []*running
		start := func(id string) *running {
			kt := &killableTable{LeaseTable: table}
			o := opts
			o.ID = id
			o.OnError = func(sh string, err error) { t.Logf("%s: %s: %v", id, sh, err) }
			w, err := xstream.NewWorker(e, kt, tr.processor(id, nil), o)
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(t.Context())
			r := &running{w: w, table: kt, cancel: cancel, done: make(chan error, 1)}
			go func() { r.done <- w.Run(ctx) }()
			workers = append(workers, r)
			return r
		}
		for i := range 3 {
			start("w" + strconv.Itoa(i))
		}

		// Producers and the resharder.
		var stop atomic.Bool
		var bg sync.WaitGroup
		puts := make([]int, 2)
		for p := range puts {
			bg.Go(func() {
				for i := 0; !stop.Load(); i++ {
					for k := range keys {
						_, err := ss.Put(fmt.Sprintf("p%dk%d", p, k), xstream.PutArgs{}, xstream.Fields("n", strconv.Itoa(i))...)
						if err != nil {
							panic(err)
						}
					}
					puts[p] = i + 1
					time.Sleep(20 * time.Millisecond)
				}
			})
		}
		bg.Go(func() {
			rng := rand.New(rand.NewPCG(1, 2))
			for range reshards {
				time.Sleep(500 * time.Millisecond)
				if err := reshardOnce(ss, rng); err != nil {
					panic(err)
				}
			}
		})

		// The kill, and a new worker.
		// The victim is the worker processing the most shards.
		time.Sleep(6 * time.Second)
		victim := workers[0]
		for _, r := range workers {
			if len(r.w.Shards()) > len(victim.w.Shards()) {
				victim = r
			}
		}
		victim.table.killed.Store(true)
		killedAt := time.Now()
		orphans := tr.kill(victim.w.ID())
		victim.cancel()
		start("w3")
		require.NotEmpty(t, orphans, "the killed worker held leases")

		time.Sleep(10 * time.Second)
		stop.Store(true)
		bg.Wait()
		want := 0
		for _, n := range puts {
			want += n * keys
		}
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
			tr.mu.Lock()
			caught := len(tr.next) == len(puts)*keys
			for p, n := range puts {
				for k := range keys {
					caught = caught && tr.next[fmt.Sprintf("p%dk%d", p, k)] == n
				}
			}
			tr.mu.Unlock()
			if caught {
				break
			}
			require.True(t, time.Now().Before(deadline), "records left unprocessed a minute after the producers stopped")
		}

		// Balance once stable: the same max - min <= 1 over five renewal
		// periods in a row.
		var live []*running
		for _, r := range workers {
			if r != victim {
				live = append(live, r)
			}
		}
		stable := 0
		var counts []int
		for deadline := time.Now().Add(10 * lease); stable < 5; time.Sleep(renew) {
			require.True(t, time.Now().Before(deadline), "leases not balanced: %v", counts)
			counts = counts[:0]
			for _, r := range live {
				counts = append(counts, len(r.w.Shards()))
			}
			if slices.Max(counts)-slices.Min(counts) <= 1 {
				stable++
			} else {
				stable = 0
			}
		}
		open, err := ss.ListShards(xstream.ShardFilter{Type: xstream.FilterAtLatest})
		require.NoError(t, err)
		sum := 0
		for _, n := range counts {
			sum += n
		}
		require.Equal(t, len(open), sum, "every OPEN shard leased once: %v", counts)

		for _, r := range workers {
			r.cancel()
			require.NoError(t, <-r.done)
		}

		tr.mu.Lock()
		defer tr.mu.Unlock()
		require.Empty(t, tr.errs)
		require.Empty(t, tr.holder, "every processor got its last call")
		require.GreaterOrEqual(t, tr.processed, want)
		lin, _ := e.Lineage(t.Context())
		all, _ := e.ListShards(t.Context(), xstream.ShardFilter{})
		// The killed worker's shards were taken over within a lease
		// duration and a renewal period, but for those that need no more
		// processing: checkpointed at their end (killed in ShardEnded),
		// or CLOSED with no record.
		leases, err := table.Leases(t.Context())
		require.NoError(t, err)
		var slowest time.Duration
		taken := 0
		for _, sh := range orphans {
			var at time.Time
			for _, ev := range tr.inits {
				if ev.shard == sh && ev.at.After(killedAt) {
					at = ev.at
					break
				}
			}
			if at.IsZero() {
				require.True(t, slices.ContainsFunc(leases, func(l xstream.Lease) bool { return l.ShardID == sh && l.ShardEnd }) ||
					slices.ContainsFunc(all, func(s xstream.ShardInfo) bool {
						r := s.SequenceNumberRange
						return s.ShardID == sh && s.State == xstream.ShardClosed && r.EndingSequenceNumber == r.StartingSequenceNumber
					}), "%s, held by the killed worker, was never taken over\n%s", sh, lin)
				t.Logf("%s, held by the killed worker, needed no more processing", sh)
				continue
			}
			require.LessOrEqual(t, at.Sub(killedAt), lease+renew, "%s taken over %s after the kill", sh, at.Sub(killedAt))
			slowest = max(slowest, at.Sub(killedAt))
			taken++
		}
		require.Positive(t, taken, "a shard of the killed worker was taken over")
		t.Logf("%d shards of the killed worker taken over, the last %s after the kill", taken, slowest)
		t.Logf("%d records put, %d processed (%d again after a takeover), %d shards, %d leases taken, %d checkpoints fenced, balance %v",
			want, tr.processed, tr.processed-want, len(all), len(tr.inits), tr.fenced, counts)
	})
}

// recordingProc is a processor that tells a test what happens to it.
type recordingProc struct {
	shard  string
	events chan<- string
	cps    chan<- *xstream.Checkpointer
	delay  time.Duration // in each ProcessRecords
	keep   bool          // do not checkpoint in ProcessRecords
}

func (p *recordingProc) Initialize(_ context.Context, shardID string, from xstream.Checkpoint) error {
	p.shard = shardID
	p.events <- "init " + shardID + " " + from.SequenceNumber.String()
	return nil
}

func (p *recordingProc) ProcessRecords(ctx context.Context, records []xstream.Record, cp *xstream.Checkpointer, _ int64) error {
	time.Sleep(p.delay)
	for _, r := range records {
		p.events <- "rec " + p.shard + " " + r.PartitionKey + " " + r.Fields[0].Value
	}
	if p.cps != nil {
		p.cps <- cp
	}
	if p.keep {
		return nil
	}
	return cp.Checkpoint(ctx)
}

func (p *recordingProc) ShardEnded(ctx context.Context, cp *xstream.Checkpointer) error {
	p.events <- "end " + p.shard
	return cp.Checkpoint(ctx)
}

func (p *recordingProc) LeaseLost(context.Context) { p.events <- "lost " + p.shard }

func (p *recordingProc) Shutdown(ctx context.Context, cp *xstream.Checkpointer) {
	p.events <- "shutdown " + p.shard
	cp.Checkpoint(ctx)
}

// drain returns the events sent so far, once every goroutine of the
// bubble is blocked.
func drain(events chan string) []string {
	synctest.Wait()
	var out []string
	for {
		select {
		case ev := <-events:
			out = append(out, ev)
		default:
			return out
		}
	}
}

// TestLeaseWorkersFencedCheckpoint: once another holder took the lease
// (its counter moved), the old holder's checkpoint is refused with
// ErrLeaseLost, its processor gets LeaseLost and no more records; a
// direct write with the old counter is refused too; and when the other
// holder stops renewing, the worker takes the lease back a lease
// duration after it last saw the counter move, from the checkpoint.
func TestLeaseWorkersFencedCheckpoint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		ss, err := xstream.NewShardedStream(xstream.ShardedArgs{Shards: 1}, xstream.WithClock(time.Now))
		require.NoError(t, err)
		table := xstream.NewLeaseTable()
		events := make(chan string, 100)
		cps := make(chan *xstream.Checkpointer, 100)
		w, err := xstream.NewWorker(xstream.LocalSharded(ss), table, func(string) xstream.ShardProcessor {
			return &recordingProc{events: events, cps: cps, keep: true}
		}, xstream.WorkerOptions{LeaseDuration: 3 * time.Second, RenewPeriod: time.Second, IdleWait: 10 * time.Millisecond})
		require.NoError(t, err)
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		go func() { done <- w.Run(wctx) }()
		put := func(n int) {
			_, err := ss.Put("k", xstream.PutArgs{}, xstream.Fields("n", strconv.Itoa(n))...)
			require.NoError(t, err)
		}
		put(0)
		put(1)
		time.Sleep(1500 * time.Millisecond) // the first take waits a renewal period
		const sh = "shardId-000000000000"
		require.Equal(t, []string{"init " + sh + " 0-0", "rec " + sh + " k 0", "rec " + sh + " k 1"}, drain(events))
		cp := <-cps
		require.NoError(t, cp.Checkpoint(ctx), "the holder checkpoints")

		// Another holder takes the lease.
		ls, err := table.Leases(ctx)
		require.NoError(t, err)
		l := ls[0]
		require.Equal(t, w.ID(), l.Owner)
		old := l
		l.Owner = "intruder"
		intruder, err := table.UpdateLease(ctx, l)
		require.NoError(t, err)
		require.ErrorIs(t, cp.Checkpoint(ctx), xstream.ErrLeaseLost, "fenced by the counter")
		old.SequenceNumber = xstream.ID{Ms: 1}
		_, err = table.UpdateLease(ctx, old)
		require.ErrorIs(t, err, xstream.ErrLeaseLost)
		require.Equal(t, []string{"lost " + sh}, drain(events))
		require.Empty(t, w.Shards())

		// Records put now are not processed while the intruder holds
		// the lease, renewing it.
		put(2)
		for range 3 {
			time.Sleep(time.Second)
			intruder, err = table.UpdateLease(ctx, intruder)
			require.NoError(t, err)
			require.Empty(t, drain(events))
		}
		// The intruder stops renewing: the lease is taken back within a
		// lease duration and a renewal period, from the checkpoint.
		stopped := time.Now()
		var evs []string
		for len(evs) == 0 {
			time.Sleep(10 * time.Millisecond)
			evs = drain(events)
		}
		require.LessOrEqual(t, time.Since(stopped), 4*time.Second)
		require.GreaterOrEqual(t, time.Since(stopped), 3*time.Second)
		require.Equal(t, "init "+sh+" "+intruder.SequenceNumber.String(), evs[0])
		evs = append(evs[1:], drain(events)...)
		require.Equal(t, []string{"rec " + sh + " k 2"}, evs, "only the record after the checkpoint")
		cancel()
		require.NoError(t, <-done)
		require.Equal(t, []string{"shutdown " + sh}, drain(events))
		ls, err = table.Leases(ctx)
		require.NoError(t, err)
		require.Len(t, ls, 1, "the worker's own entry is gone")
		require.Empty(t, ls[0].Owner, "the lease was given up")
	})
}

// TestLeaseWorkersHandoff: a worker that stops gives its leases up
// (Shutdown, then no owner), and the other worker takes them at its next
// scan, within a renewal period rather than a lease duration; then the
// leases stay balanced when a worker joins, by steals that start a lease
// duration after the take.
func TestLeaseWorkersHandoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ss, err := xstream.NewShardedStream(xstream.ShardedArgs{Shards: 4}, xstream.WithClock(time.Now))
		require.NoError(t, err)
		table := xstream.NewLeaseTable()
		tr := newTracker()
		opts := xstream.WorkerOptions{LeaseDuration: 3 * time.Second, RenewPeriod: time.Second, IdleWait: 10 * time.Millisecond}
		type running struct {
			w      *xstream.Worker
			cancel context.CancelFunc
			done   chan error
		}
		start := func(id string) *running {
			o := opts
			o.ID = id
			w, err := xstream.NewWorker(xstream.LocalSharded(ss), table, tr.processor(id, nil), o)
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(t.Context())
			r := &running{w: w, cancel: cancel, done: make(chan error, 1)}
			go func() { r.done <- w.Run(ctx) }()
			return r
		}
		a, b := start("a"), start("b")
		time.Sleep(2 * time.Second)
		synctest.Wait()
		require.Len(t, a.w.Shards(), 2)
		require.Len(t, b.w.Shards(), 2)

		a.cancel()
		require.NoError(t, <-a.done)
		stopped := time.Now()
		for len(b.w.Shards()) < 4 {
			time.Sleep(10 * time.Millisecond)
		}
		require.LessOrEqual(t, time.Since(stopped), opts.RenewPeriod+10*time.Millisecond, "given-up leases are taken at the next scan")

		c := start("c")
		for len(c.w.Shards()) < 2 {
			time.Sleep(10 * time.Millisecond)
		}
		joined := time.Now()
		for len(b.w.Shards()) > 2 {
			time.Sleep(10 * time.Millisecond)
		}
		require.LessOrEqual(t, time.Since(joined), opts.RenewPeriod+10*time.Millisecond, "the worker stolen from sees it at its next renewal")
		for !slices.ContainsFunc(c.w.Shards(), func(s xstream.WorkerShard) bool { return s.Processing }) {
			time.Sleep(10 * time.Millisecond)
		}
		require.LessOrEqual(t, time.Since(joined), opts.LeaseDuration, "stolen leases are processed a lease duration after the old holder's last renewal at most")
		b.cancel()
		c.cancel()
		require.NoError(t, <-b.done)
		require.NoError(t, <-c.done)
		require.Empty(t, tr.errs)
	})
}

// TestLeaseWorkersGrandparentFirst is issue 24's five records for
// workers: three records of K in the only shard, a split, a split of K's
// child while it is still empty, two more records of K in the
// grandchild. With the grandparent's processing slow, the grandchild's
// lease is taken only after the grandparent's ShardEnded checkpoint: the
// empty child between them does not let it out early.
func TestLeaseWorkersGrandparentFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		ss, err := xstream.NewShardedStream(xstream.ShardedArgs{Shards: 1}, xstream.WithClock(time.Now))
		require.NoError(t, err)
		const k = "K"
		for i := range 3 {
			_, err := ss.Put(k, xstream.PutArgs{}, xstream.Fields("n", strconv.Itoa(i))...)
			require.NoError(t, err)
		}
		half := new(big.Int).Lsh(big.NewInt(1), 127)
		require.NoError(t, ss.SplitShard("shardId-000000000000", half.String()))
		child := ownerOf(t, ss, k)
		var info xstream.ShardInfo
		shards, err := ss.ListShards(xstream.ShardFilter{})
		require.NoError(t, err)
		for _, s := range shards {
			if s.ShardID == child {
				info = s
			}
		}
		mid := new(big.Int).Add(bigHashKey(info.HashKeyRange.StartingHashKey), bigHashKey(info.HashKeyRange.EndingHashKey))
		require.NoError(t, ss.SplitShard(child, mid.Rsh(mid, 1).String()))
		grandchild := ownerOf(t, ss, k)
		for i := 3; i < 5; i++ {
			r, err := ss.Put(k, xstream.PutArgs{}, xstream.Fields("n", strconv.Itoa(i))...)
			require.NoError(t, err)
			require.Equal(t, grandchild, r.ShardID)
		}

		events := make(chan string, 100)
		var workers []chan error
		wctx, cancel := context.WithCancel(ctx)
		table := xstream.NewLeaseTable()
		for i := range 3 {
			w, err := xstream.NewWorker(xstream.LocalSharded(ss), table, func(shardID string) xstream.ShardProcessor {
				p := &recordingProc{events: events}
				if shardID == "shardId-000000000000" {
					p.delay = 5 * time.Second
				}
				return p
			}, xstream.WorkerOptions{ID: strconv.Itoa(i), LeaseDuration: 30 * time.Second, BatchSize: 1, IdleWait: 10 * time.Millisecond})
			require.NoError(t, err)
			done := make(chan error, 1)
			go func() { done <- w.Run(wctx) }()
			workers = append(workers, done)
		}
		var got []string
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
			got = append(got, drain(events)...)
		}
		cancel()
		for _, done := range workers {
			require.NoError(t, <-done)
		}
		var recs []string
		endAt, grandAt := -1, -1
		for i, ev := range got {
			switch {
			case strings.HasPrefix(ev, "rec "):
				recs = append(recs, ev[strings.LastIndexByte(ev, ' ')+1:])
			case ev == "end shardId-000000000000":
				endAt = i
			case strings.HasPrefix(ev, "init "+grandchild):
				grandAt = i
			}
		}
		require.Equal(t, []string{"0", "1", "2", "3", "4"}, recs, "%v", got)
		require.Positive(t, endAt)
		require.Greater(t, grandAt, endAt, "the grandchild starts after the grandparent's end: %v", got)
	})
}

func ownerOf(t *testing.T, ss *xstream.ShardedStream, pk string) string {
	t.Helper()
	open, err := ss.ListShards(xstream.ShardFilter{Type: xstream.FilterAtLatest})
	require.NoError(t, err)
	h := xstream.PartitionHashKey(pk)
	for _, s := range open {
		if !h.Less(s.HashKeyRange.StartingHashKey) && !s.HashKeyRange.EndingHashKey.Less(h) {
			return s.ShardID
		}
	}
	t.Fatalf("no OPEN shard owns %s", pk)
	return ""
}

// TestLeaseWorkersCheckpointKept: a holder that starts from a checkpoint
// and checkpoints before it got any record (here in Shutdown) keeps the
// checkpoint where it was.
func TestLeaseWorkersCheckpointKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		ss, err := xstream.NewShardedStream(xstream.ShardedArgs{Shards: 1}, xstream.WithClock(time.Now))
		require.NoError(t, err)
		r, err := ss.Put("k", xstream.PutArgs{}, xstream.Fields("n", "0")...)
		require.NoError(t, err)
		table := xstream.NewLeaseTable()
		_, err = table.CreateLease(ctx, r.ShardID)
		require.NoError(t, err)
		_, err = table.UpdateLease(ctx, xstream.Lease{Checkpoint: xstream.Checkpoint{ShardID: r.ShardID, SequenceNumber: r.SequenceNumber}})
		require.NoError(t, err)
		events := make(chan string, 10)
		w, err := xstream.NewWorker(xstream.LocalSharded(ss), table, func(string) xstream.ShardProcessor {
			return &recordingProc{events: events}
		}, xstream.WorkerOptions{LeaseDuration: 3 * time.Second})
		require.NoError(t, err)
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		go func() { done <- w.Run(wctx) }()
		time.Sleep(2 * time.Second)
		cancel()
		require.NoError(t, <-done)
		require.Equal(t, []string{"init " + r.ShardID + " " + r.SequenceNumber.String(), "shutdown " + r.ShardID}, drain(events))
		ls, err := table.Leases(ctx)
		require.NoError(t, err)
		require.Equal(t, xstream.Checkpoint{ShardID: r.ShardID, SequenceNumber: r.SequenceNumber}, ls[0].Checkpoint)
	})
}

// failingRenewals is a lease table whose UpdateLease of a shard's lease
// fails with a plain error once one succeeded: the worker takes the
// lease, then cannot renew it. (The workers' own entries, "worker:…",
// are updated as usual.)
type failingRenewals struct {
	xstream.LeaseTable
	ok atomic.Bool
}

var errRenew = errors.New("renewal failed")

func (f *failingRenewals) UpdateLease(ctx context.Context, l xstream.Lease) (xstream.Lease, error) {
	if !strings.HasPrefix(l.ShardID, "worker:") && f.ok.Swap(true) {
		return xstream.Lease{}, errRenew
	}
	return f.LeaseTable.UpdateLease(ctx, l)
}

// OnError is called without the worker's locks held: one that calls
// Shards, on a renewal that failed, does not hang the worker.
func TestLeaseWorkersOnErrorCallsShards(t *testing.T) {
	ss, err := xstream.NewShardedStream(xstream.ShardedArgs{Shards: 1})
	require.NoError(t, err)
	var w *xstream.Worker
	reported := make(chan error, 100)
	w, err = xstream.NewWorker(xstream.LocalSharded(ss), &failingRenewals{LeaseTable: xstream.NewLeaseTable()},
		func(string) xstream.ShardProcessor {
			return &recordingProc{events: make(chan string, 100), cps: make(chan *xstream.Checkpointer, 100)}
		},
		xstream.WorkerOptions{LeaseDuration: 300 * time.Millisecond, RenewPeriod: 20 * time.Millisecond, IdleWait: 10 * time.Millisecond,
			OnError: func(_ string, err error) {
				w.Shards()
				select {
				case reported <- err:
				default:
				}
			}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	select {
	case err := <-reported:
		require.ErrorIs(t, err, errRenew)
	case <-time.After(10 * time.Second):
		t.Fatal("no renewal failure reported: OnError, calling Shards, hung the worker")
	}
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return: OnError, calling Shards, hung the worker")
	}
}

// A DB's lease tables go with their sharded stream: one made again under
// the name starts with no lease and no checkpoint, after a reopen too.
func TestLeaseTableRemovedWithStream(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := xstream.Open(dir)
	require.NoError(t, err)
	_, err = db.CreateShardedStream("s", xstream.ShardedArgs{Shards: 1})
	require.NoError(t, err)
	lt, err := db.LeaseTable("s", "app")
	require.NoError(t, err)
	_, err = lt.CreateLease(ctx, "shardId-000000000000")
	require.NoError(t, err)
	l, err := lt.UpdateLease(ctx, xstream.Lease{Checkpoint: xstream.Checkpoint{ShardID: "shardId-000000000000", ShardEnd: true}})
	require.NoError(t, err)
	require.True(t, l.ShardEnd)

	removed, err := db.RemoveShardedStream("s")
	require.NoError(t, err)
	require.True(t, removed)
	_, ok := db.Lookup(xstream.LeaseStreamName("s", "app"))
	require.False(t, ok, "the checkpoints' stream is removed")
	_, err = db.CreateShardedStream("s", xstream.ShardedArgs{Shards: 1})
	require.NoError(t, err)
	lt2, err := db.LeaseTable("s", "app")
	require.NoError(t, err)
	require.NotSame(t, lt, lt2)
	ls, err := lt2.Leases(ctx)
	require.NoError(t, err)
	require.Empty(t, ls, "the new stream's table has no lease of the old one")
	require.NoError(t, db.Close())

	db, err = xstream.Open(dir)
	require.NoError(t, err)
	defer db.Close()
	lt, err = db.LeaseTable("s", "app")
	require.NoError(t, err)
	ls, err = lt.Leases(ctx)
	require.NoError(t, err)
	require.Empty(t, ls)
}

// A lease table whose load failed (an entry that is not a checkpoint)
// loads again, once the entry is gone, without losing a checkpoint.
func TestLeaseTableLoadRetried(t *testing.T) {
	ctx := context.Background()
	db := xstream.NewDB()
	_, err := db.CreateShardedStream("s", xstream.ShardedArgs{Shards: 1})
	require.NoError(t, err)
	name := xstream.LeaseStreamName("s", "app")
	_, err = db.Add(name, xstream.AddArgs{}, xstream.Fields("shard", "shardId-000000000000", "seq", "1-1", "end", "0")...)
	require.NoError(t, err)
	bad, err := db.Add(name, xstream.AddArgs{}, xstream.Fields("not", "a checkpoint")...)
	require.NoError(t, err)
	_, err = db.LeaseTable("s", "app")
	require.ErrorIs(t, err, xstream.ErrCorrupt)

	s, _ := db.Lookup(name)
	_, err = s.Delete(bad.String())
	require.NoError(t, err)
	lt, err := db.LeaseTable("s", "app")
	require.NoError(t, err)
	ls, err := lt.Leases(ctx)
	require.NoError(t, err)
	require.Equal(t, []xstream.Lease{{Checkpoint: xstream.Checkpoint{ShardID: "shardId-000000000000", SequenceNumber: xstream.ID{Ms: 1, Seq: 1}}}}, ls)
	require.Equal(t, int64(1), s.Len(), "the checkpoint's entry is kept")
}
