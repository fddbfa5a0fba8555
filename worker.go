package xstream

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	mrand "math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Lease workers: the KCL's way of sharing a sharded stream among
// processes, on any ShardedEngine with a LeaseTable.
//
// Every shard has a lease in the table. A worker renews the leases it
// holds every RenewPeriod (each renewal increments the lease's counter);
// a lease whose counter another worker has seen unchanged for a
// LeaseDuration is abandoned, and any worker may take it. Workers balance
// the leases: each takes up to its fair share, ceil(leases / workers),
// counting the live workers (each keeps an entry "worker:ID" in the
// table, see LeaseTable) and itself; below it, it
// takes abandoned or free leases first, and else steals one lease per
// scan from the most loaded worker, when that one holds at least two
// more than it does.
//
// The guarantees, with every worker's clock running at the same rate:
//
//   - At most one worker processes a shard at a time. A worker processes
//     a shard only while its last successful write of the lease (a take,
//     a renewal or a checkpoint) was sent less than a LeaseDuration ago,
//     and another worker takes a lease only after seeing its counter
//     unchanged for a LeaseDuration, or, when it steals a live lease,
//     starts processing it a LeaseDuration after the take. The one
//     exception is a processor call that outlasts the lease: the worker
//     cannot stop it, so keep ProcessRecords shorter than the lease.
//   - A checkpoint by a worker that has lost the lease fails with
//     ErrLeaseLost (the table's counter fences it).
//   - Every record is processed at least once: a new holder starts after
//     the last checkpoint, so the records processed after it by the old
//     holder are processed again.
//   - The records of a partition key are processed in put order, across
//     reshards: a child shard's lease is taken only after every ancestor
//     that had records was checkpointed at its end (ShardEnd); an empty
//     CLOSED shard counts as ended once its own parents did, and an
//     EXPIRED one always does.
//   - Liveness: the leases of a worker that died are taken over within a
//     LeaseDuration plus one RenewPeriod of its death; when the workers
//     and shards stay the same, the leases per worker end up differing by
//     at most one.

// Defaults of WorkerOptions.
const (
	// DefaultLeaseDuration is how long a lease lasts without renewal:
	// the KCL's failoverTimeMillis.
	DefaultLeaseDuration = 10 * time.Second
	// DefaultWorkerBatch is the most records a ProcessRecords call gets.
	DefaultWorkerBatch = 1000
	// DefaultIdleWait is how long a worker waits before it reads a shard
	// again after a read that found nothing new.
	DefaultIdleWait = 250 * time.Millisecond
)

// WorkerOptions configures a Worker. The zero value takes the defaults.
type WorkerOptions struct {
	// ID names the worker in the lease table; it must differ from that
	// of every other live worker of the application. "" means a random
	// one. A worker started again with the ID of a dead one takes that
	// one's leases back at once.
	ID string
	// LeaseDuration is how long a lease lasts without renewal: the time
	// after which a dead worker's leases are taken over, and the delay
	// before a stolen lease is processed (DefaultLeaseDuration).
	LeaseDuration time.Duration
	// RenewPeriod is how often the worker renews its leases (it looks
	// for leases to take twice as often): LeaseDuration/3 by default; it
	// must be shorter than LeaseDuration.
	RenewPeriod time.Duration
	// BatchSize is the most records a ProcessRecords call gets, from 1
	// to 10,000 (DefaultWorkerBatch).
	BatchSize int
	// IdleWait is how long a shard's processor waits before reading
	// again after a read that found nothing new (DefaultIdleWait).
	IdleWait time.Duration
	// OnError, when not nil, is told the errors the worker handles by
	// itself: a failing table or engine call, which it retries, or a
	// processor's error, after which it gives the lease up. shardID is
	// "" for errors of no one shard. It is called from the worker's
	// goroutines, one at a time per shard, and must not block long.
	OnError func(shardID string, err error)
}

// ShardProcessor processes the records of one shard for a Worker, which
// makes one (with the function given to NewWorker) each time it starts
// processing a shard whose lease it holds. A processor's calls come from
// one goroutine, in this order: Initialize; ProcessRecords any number of
// times; then one of ShardEnded, LeaseLost or Shutdown. After a call
// returns an error, no other call comes, and the worker gives the lease
// up: the shard is processed again from its last checkpoint, by this
// worker or another one.
type ShardProcessor interface {
	// Initialize starts the processing of shardID after from, its
	// checkpoint (zero SequenceNumber: from the shard's start).
	Initialize(ctx context.Context, shardID string, from Checkpoint) error
	// ProcessRecords processes the next records of the shard, in order.
	// millisBehindLatest is how far the shard's newest record is ahead
	// of them (as in GetRecords: 0 when they are the newest). cp
	// records how far the shard was processed; ProcessRecords may
	// checkpoint after every call, some of them, or never. ctx ends when
	// the worker stops or loses the lease.
	ProcessRecords(ctx context.Context, records []Record, cp *Checkpointer, millisBehindLatest int64) error
	// ShardEnded says that the shard, CLOSED, was processed to its end.
	// It must call cp.Checkpoint, which records ShardEnd: the shard's
	// children are processed only after that. Returning without it is
	// an error: the lease is given up and the shard's records after the
	// last checkpoint are processed again.
	ShardEnded(ctx context.Context, cp *Checkpointer) error
	// LeaseLost says that the worker lost the lease (another worker took
	// it, or it could not be renewed in time, or the shard EXPIRED):
	// another processor may be processing the shard already, and
	// checkpoints are refused.
	LeaseLost(ctx context.Context)
	// Shutdown says that the worker is stopping (its Run's context
	// ended); cp.Checkpoint records the records processed so far, after
	// which the worker gives the lease up for another worker to take at
	// once. ctx lasts at most a LeaseDuration.
	Shutdown(ctx context.Context, cp *Checkpointer)
}

// Worker processes a sharded stream's records, shard by shard, with the
// other workers of its application (those sharing its LeaseTable), as a
// KCL worker does: see the comment at the top of worker.go, summarized
// here. Each shard is leased to one worker at a time, which runs a
// ShardProcessor for it; leases are renewed, taken over from dead
// workers, balanced among live ones, and a child shard is processed only
// after its ancestors were checkpointed at their end, so each partition
// key's records are processed in put order, at least once.
type Worker struct {
	e       ShardedEngine
	t       LeaseTable
	newProc func(shardID string) ShardProcessor
	opt     WorkerOptions
	running atomic.Bool

	mu   sync.Mutex
	held map[string]*holding // the leases held, by shard ID

	// Used by Run's goroutine only.
	obs    map[string]leaseSeen
	kick   chan struct{}
	rng    *mrand.Rand
	self   Lease // the worker's own entry (see workerPrefix), as stored
	selfOK bool
}

// leaseSeen is when the worker first saw a lease's counter and owner as
// they are.
type leaseSeen struct {
	counter uint64
	owner   string
	since   time.Time
	gone    bool
}

// NewWorker returns a worker of the sharded stream e that keeps its
// leases in t and processes each shard with a processor from newProc. It
// fails with ErrInvalidArgument for options out of range.
func NewWorker(e ShardedEngine, t LeaseTable, newProc func(shardID string) ShardProcessor, opt WorkerOptions) (*Worker, error) {
	if e == nil || t == nil || newProc == nil {
		return nil, errorf(ErrInvalidArgument, "NewWorker needs an engine, a lease table and a processor maker")
	}
	if opt.ID == "" {
		var b [8]byte
		rand.Read(b[:])
		opt.ID = hex.EncodeToString(b[:])
	}
	if opt.LeaseDuration == 0 {
		opt.LeaseDuration = DefaultLeaseDuration
	}
	if opt.RenewPeriod == 0 {
		opt.RenewPeriod = opt.LeaseDuration / 3
	}
	if opt.BatchSize == 0 {
		opt.BatchSize = DefaultWorkerBatch
	}
	if opt.IdleWait == 0 {
		opt.IdleWait = DefaultIdleWait
	}
	switch {
	case opt.LeaseDuration < 0:
		return nil, errorf(ErrInvalidArgument, "worker: LeaseDuration must be > 0, got %s", opt.LeaseDuration)
	case opt.RenewPeriod <= 0 || opt.RenewPeriod >= opt.LeaseDuration:
		return nil, errorf(ErrInvalidArgument, "worker: RenewPeriod %s must be > 0 and shorter than LeaseDuration %s", opt.RenewPeriod, opt.LeaseDuration)
	case opt.BatchSize < 0 || opt.BatchSize > maxGetRecords:
		return nil, errorf(ErrInvalidArgument, "worker: BatchSize must be from 1 to %d, got %d", maxGetRecords, opt.BatchSize)
	case opt.IdleWait < 0:
		return nil, errorf(ErrInvalidArgument, "worker: IdleWait must be >= 0, got %s", opt.IdleWait)
	}
	var seed [32]byte
	rand.Read(seed[:])
	return &Worker{e: e, t: t, newProc: newProc, opt: opt, held: map[string]*holding{},
		rng: mrand.New(mrand.NewChaCha8(seed))}, nil
}

// ID returns the worker's ID, its name in the lease table.
func (w *Worker) ID() string { return w.opt.ID }

// WorkerShard describes a shard a worker holds the lease of.
type WorkerShard struct {
	ShardID string
	// Checkpoint is the lease's checkpoint as last stored.
	Checkpoint Checkpoint
	// MillisBehindLatest is what the worker's last read of the shard
	// returned: how far behind the shard's newest record the processing
	// is, in milliseconds of the engine's clock (0: caught up).
	MillisBehindLatest int64
	// Processing is false while the worker waits before processing a
	// stolen lease (a LeaseDuration) or has not started yet.
	Processing bool
}

// Shards lists the shards whose leases the worker holds, by shard ID,
// with how far behind each one is. O(leases held).
func (w *Worker) Shards() []WorkerShard {
	w.mu.Lock()
	hs := make([]*holding, 0, len(w.held))
	for _, h := range w.held {
		hs = append(hs, h)
	}
	w.mu.Unlock()
	out := make([]WorkerShard, 0, len(hs))
	for _, h := range hs {
		h.mu.Lock()
		if !h.lost && !h.ended {
			out = append(out, WorkerShard{ShardID: h.id, Checkpoint: h.lease.Checkpoint, MillisBehindLatest: h.lag.Load(), Processing: h.processing.Load()})
		}
		h.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b WorkerShard) int { return strings.Compare(a.ShardID, b.ShardID) })
	return out
}

// Run runs the worker until ctx ends, then stops it: each processor gets
// Shutdown and the worker gives its leases up, for the other workers to
// take at once. Run returns nil once every processor call returned and
// every goroutine it started ended. Errors that Run handles by itself go
// to WorkerOptions.OnError. It fails with ErrInvalidArgument when the
// worker is running already.
func (w *Worker) Run(ctx context.Context) error {
	if !w.running.CompareAndSwap(false, true) {
		return errorf(ErrInvalidArgument, "the worker is running already")
	}
	defer w.running.Store(false)
	w.obs = map[string]leaseSeen{}
	w.kick = make(chan struct{}, 1)
	w.selfOK = false
	var wg sync.WaitGroup
	timer := time.NewTimer(0)
	defer timer.Stop()
	// The first takes wait a renewal period, for the workers started at
	// the same time to see each other (and share the leases without
	// steals).
	// Scans come twice per renewal period, so that a lease's counter is
	// seen within half a period of its last change.
	nextRenew, takeFrom := time.Now(), time.Now().Add(w.opt.RenewPeriod)
	for ctx.Err() == nil {
		if !time.Now().Before(nextRenew) {
			nextRenew = time.Now().Add(w.opt.RenewPeriod)
			w.renewAll(ctx)
			w.renewSelf(ctx)
		}
		w.reap()
		wake := w.scan(ctx, &wg, !time.Now().Before(takeFrom))
		if next := time.Now().Add(w.opt.RenewPeriod / 2); wake.IsZero() || next.Before(wake) {
			wake = next
		}
		if nextRenew.Before(wake) {
			wake = nextRenew
		}
		timer.Reset(time.Until(wake))
		select {
		case <-ctx.Done():
		case <-timer.C:
		case <-w.kick:
		}
		timer.Stop()
	}

	// Stop every processor and keep renewing their leases until they
	// have given them up.
	w.mu.Lock()
	for _, h := range w.held {
		h.stopWith(stopShutdown)
	}
	w.mu.Unlock()
	all := make(chan struct{})
	go func() { wg.Wait(); close(all) }()
	live := context.WithoutCancel(ctx)
	tick := time.NewTicker(w.opt.RenewPeriod)
	defer tick.Stop()
	for {
		select {
		case <-all:
			w.reap()
			if w.selfOK {
				if err := w.t.DeleteLease(live, w.self.ShardID); err != nil {
					w.report("", err)
				}
			}
			return nil
		case <-tick.C:
			w.renewAll(live)
			w.renewSelf(live)
		}
	}
}

func (w *Worker) report(shardID string, err error) {
	if w.opt.OnError != nil && err != nil {
		w.opt.OnError(shardID, err)
	}
}

func (w *Worker) kickNow() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// snapshot returns the holdings.
func (w *Worker) snapshot() []*holding {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]*holding, 0, len(w.held))
	for _, h := range w.held {
		out = append(out, h)
	}
	return out
}

// renewAll renews every lease held.
func (w *Worker) renewAll(ctx context.Context) {
	for _, h := range w.snapshot() {
		h.renew(ctx)
	}
}

// reap forgets the holdings whose processing ended.
func (w *Worker) reap() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, h := range w.held {
		select {
		case <-h.done:
			delete(w.held, id)
		default:
		}
	}
}

// workerPrefix starts the ID of the entry of the lease table by which a
// worker shows it is alive: "worker:" and its ID. The workers renew
// theirs as they renew their leases, and delete it when they stop.
const workerPrefix = "worker:"

// scan lists the shards and the leases, creates the leases of new
// shards, deletes those of EXPIRED ones, renews the worker's own entry,
// and takes leases up to the worker's fair share once take is set. It
// returns when the next lease held by another worker may expire (zero:
// none).
func (w *Worker) scan(ctx context.Context, wg *sync.WaitGroup, take bool) time.Time {
	shards, err := w.e.ListShards(ctx, ShardFilter{})
	if err != nil {
		w.report("", err)
		return time.Time{}
	}
	leases, err := w.t.Leases(ctx)
	if err != nil {
		w.report("", err)
		return time.Time{}
	}
	now := time.Now() // after the leases were read: see leaseSeen
	for id := range w.obs {
		w.obs[id] = leaseSeen{counter: w.obs[id].counter, owner: w.obs[id].owner, since: w.obs[id].since, gone: true}
	}
	for _, l := range leases {
		if s, ok := w.obs[l.ShardID]; !ok || s.counter != l.Counter || s.owner != l.Owner {
			w.obs[l.ShardID] = leaseSeen{counter: l.Counter, owner: l.Owner, since: now}
		} else {
			s.gone = false
			w.obs[l.ShardID] = s
		}
	}
	for id, s := range w.obs {
		if s.gone {
			delete(w.obs, id)
		}
	}
	expired := func(l Lease) bool { return !now.Before(w.obs[l.ShardID].since.Add(w.opt.LeaseDuration)) }
	workers := w.sync(ctx, leases, expired)

	info := make(map[string]*ShardInfo, len(shards))
	maxNum := -1
	for i := range shards {
		info[shards[i].ShardID] = &shards[i]
		if n, ok := parseShardID(shards[i].ShardID); ok {
			maxNum = max(maxNum, n)
		}
	}
	byID := make(map[string]Lease, len(leases))
	for _, l := range leases {
		n, ok := parseShardID(l.ShardID)
		switch {
		case !ok:
		case info[l.ShardID] != nil:
			byID[l.ShardID] = l
		case n < maxNum:
			// A shard numbered below a listed one but not listed is
			// EXPIRED: its lease goes. (A higher number may be a shard
			// made after the listing.)
			if err := w.t.DeleteLease(ctx, l.ShardID); err != nil {
				w.report(l.ShardID, err)
			}
		}
	}
	for _, sh := range shards {
		if _, ok := byID[sh.ShardID]; !ok {
			created, err := w.t.CreateLease(ctx, sh.ShardID)
			if err != nil {
				w.report(sh.ShardID, err)
			} else if created {
				byID[sh.ShardID] = Lease{Checkpoint: Checkpoint{ShardID: sh.ShardID}}
				w.obs[sh.ShardID] = leaseSeen{since: now}
			}
		}
	}
	if !take {
		return time.Time{}
	}

	// The shards that no longer hold back their children, and those
	// whose lease may be taken.
	done := map[string]bool{}
	var isDone func(id string) bool
	parentsDone := func(sh *ShardInfo) bool {
		return (sh.ParentShardID == "" || isDone(sh.ParentShardID)) && (sh.AdjacentParentShardID == "" || isDone(sh.AdjacentParentShardID))
	}
	isDone = func(id string) bool {
		if d, ok := done[id]; ok {
			return d
		}
		sh, ok := info[id]
		d := !ok || byID[id].ShardEnd // not listed: EXPIRED
		if ok && !d && sh.State == ShardClosed && !sh.SequenceNumberRange.StartingSequenceNumber.Less(sh.SequenceNumberRange.EndingSequenceNumber) {
			d = parentsDone(sh) // a CLOSED shard that never had a record
		}
		done[id] = d
		return d
	}
	w.mu.Lock()
	mine := 0
	for _, h := range w.held {
		if h.counts() {
			mine++
		}
	}
	eligible := 0
	loads := map[string][]Lease{} // the live leases of other workers
	var free, abandoned []Lease
	var wake time.Time
	for _, sh := range shards {
		l, ok := byID[sh.ShardID]
		if !ok || isDone(sh.ShardID) || !parentsDone(info[sh.ShardID]) {
			continue
		}
		eligible++
		if _, held := w.held[sh.ShardID]; held {
			continue
		}
		switch {
		case l.Owner == "" || l.Owner == w.opt.ID:
			free = append(free, l)
		case expired(l):
			abandoned = append(abandoned, l)
		default:
			loads[l.Owner] = append(loads[l.Owner], l)
			if exp := w.obs[sh.ShardID].since.Add(w.opt.LeaseDuration); wake.IsZero() || exp.Before(wake) {
				wake = exp
			}
		}
	}
	w.mu.Unlock()

	workers = max(workers, len(loads)+1)
	target := (eligible + workers - 1) / workers
	w.rng.Shuffle(len(free), func(i, j int) { free[i], free[j] = free[j], free[i] })
	w.rng.Shuffle(len(abandoned), func(i, j int) { abandoned[i], abandoned[j] = abandoned[j], abandoned[i] })
	for _, l := range append(free, abandoned...) {
		if mine >= target {
			break
		}
		if w.take(ctx, wg, l, time.Time{}) {
			mine++
		}
	}
	if mine < target && len(free)+len(abandoned) == 0 {
		// Steal one lease from the most loaded worker, if it holds at
		// least two more than this one.
		var most []Lease
		for _, ls := range loads {
			if len(ls) > len(most) {
				most = ls
			}
		}
		if len(most) > mine+1 {
			l := most[w.rng.IntN(len(most))]
			w.take(ctx, wg, l, w.obs[l.ShardID].since.Add(w.opt.LeaseDuration))
		}
	}
	return wake
}

// sync keeps the worker's own entry in the table (see workerPrefix),
// deletes those of workers gone, and returns how many workers are alive,
// itself included.
func (w *Worker) sync(ctx context.Context, leases []Lease, expired func(Lease) bool) int {
	mine := workerPrefix + w.opt.ID
	workers, found := 1, false
	for _, l := range leases {
		if !strings.HasPrefix(l.ShardID, workerPrefix) {
			continue
		}
		switch {
		case l.ShardID == mine:
			found = true
			if !w.selfOK || w.self.Counter != l.Counter {
				w.claimSelf(ctx, l)
			}
		case !expired(l):
			workers++
		default:
			if err := w.t.DeleteLease(ctx, l.ShardID); err != nil {
				w.report("", err)
			}
		}
	}
	if !found {
		if _, err := w.t.CreateLease(ctx, mine); err != nil {
			w.report("", err)
		} else {
			w.claimSelf(ctx, Lease{Checkpoint: Checkpoint{ShardID: mine}})
		}
	}
	return workers
}

// claimSelf makes l, read from the table, the worker's own entry.
func (w *Worker) claimSelf(ctx context.Context, l Lease) {
	l.Owner = w.opt.ID
	nl, err := w.t.UpdateLease(ctx, l)
	w.self, w.selfOK = nl, err == nil
	if err != nil && !errors.Is(err, ErrLeaseLost) {
		w.report("", err)
	}
}

// renewSelf renews the worker's own entry.
func (w *Worker) renewSelf(ctx context.Context) {
	if !w.selfOK {
		return
	}
	nl, err := w.t.UpdateLease(ctx, w.self)
	switch {
	case err == nil:
		w.self = nl
	case errors.Is(err, ErrLeaseLost):
		w.selfOK = false // made again by the next scan
	default:
		w.report("", err)
	}
}

// take takes lease l, read from the table, and starts processing it at
// start. A stolen lease's processing starts when the worker it was
// stolen from has surely stopped: a LeaseDuration after this worker
// first saw the counter it took the lease at, as the other's last write
// was sent before that and it processes only within a LeaseDuration of
// its last write. (So a lease stolen from a worker that just died starts
// when it would have expired.) It reports whether it took it.
func (w *Worker) take(ctx context.Context, wg *sync.WaitGroup, l Lease, start time.Time) bool {
	sent := time.Now()
	l.Owner = w.opt.ID
	nl, err := w.t.UpdateLease(ctx, l)
	if err != nil {
		if !errors.Is(err, ErrLeaseLost) {
			w.report(l.ShardID, err)
		}
		return false
	}
	h := &holding{w: w, id: l.ShardID, lease: nl, validTo: sent.Add(w.opt.LeaseDuration), startAt: start, stop: make(chan struct{}), done: make(chan struct{})}
	w.mu.Lock()
	w.held[l.ShardID] = h
	w.mu.Unlock()
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer w.kickNow()
		defer close(h.done)
		h.run(ctx)
	}()
	return true
}

// Why a holding stops.
const (
	stopNone = iota
	stopLost
	stopShutdown
)

// holding is a lease the worker holds, and the processing of its shard.
type holding struct {
	w       *Worker
	id      string
	startAt time.Time // zero: at once

	// mu guards what follows and orders the writes of the lease.
	mu        sync.Mutex
	lease     Lease     // as stored
	validTo   time.Time // the last successful write's sending + LeaseDuration
	lost      bool      // no more writes
	ended     bool      // checkpointed at ShardEnd
	atEnd     bool      // in ShardEnded: Checkpoint records ShardEnd
	delivered ID        // the last sequence number given to the processor
	why       int
	cancel    context.CancelFunc // ends the processor's context

	stop       chan struct{} // closed with why set
	done       chan struct{} // closed when run returns
	lag        atomic.Int64
	processing atomic.Bool
}

// counts reports whether the holding counts toward the worker's share.
// The caller holds w.mu.
func (h *holding) counts() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.lost && !h.ended && h.why == stopNone
}

func (h *holding) stopWith(why int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopLocked(why)
}

func (h *holding) stopLocked(why int) {
	if h.why != stopNone {
		return
	}
	h.why = why
	close(h.stop)
	if why == stopLost && h.cancel != nil {
		h.cancel()
	}
}

func (h *holding) lose() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.loseLocked()
}

// loseLocked marks the lease lost: no more writes, and the processing
// stops.
func (h *holding) loseLocked() {
	h.lost = true
	h.stopLocked(stopLost)
}

// writeLocked stores l, which must have the lease's counter, and keeps
// what was stored. It fails with ErrLeaseLost when the lease is lost,
// or was lost before.
func (h *holding) writeLocked(ctx context.Context, l Lease) error {
	if h.lost {
		return errorf(ErrLeaseLost, "the lease of shard %s was lost", h.id)
	}
	if !time.Now().Before(h.validTo) {
		h.loseLocked()
		return errorf(ErrLeaseLost, "the lease of shard %s was not renewed in time", h.id)
	}
	sent := time.Now()
	nl, err := h.w.t.UpdateLease(ctx, l)
	switch {
	case err == nil:
		h.lease, h.validTo = nl, sent.Add(h.w.opt.LeaseDuration)
	case errors.Is(err, ErrLeaseLost):
		h.loseLocked()
	}
	return err
}

// renew renews the lease; a lease that cannot be renewed within its
// duration is lost. A failure other than ErrLeaseLost goes to OnError,
// after h.mu is released (OnError may call Shards).
func (h *holding) renew(ctx context.Context) {
	h.mu.Lock()
	var err error
	if !h.lost && !h.ended {
		err = h.writeLocked(ctx, h.lease)
	}
	h.mu.Unlock()
	h.reportWrite(err)
}

// release gives the lease up, for another worker to take at once.
func (h *holding) release(ctx context.Context) {
	h.mu.Lock()
	var err error
	if !h.lost && !h.ended {
		l := h.lease
		l.Owner = ""
		err = h.writeLocked(ctx, l)
		h.lost = true
	}
	h.mu.Unlock()
	h.reportWrite(err)
}

// reportWrite reports the failure of a write of the lease other than
// ErrLeaseLost (which the holding handles) to OnError.
func (h *holding) reportWrite(err error) {
	if err != nil && !errors.Is(err, ErrLeaseLost) {
		h.w.report(h.id, err)
	}
}

// valid reports whether the worker may process the shard now.
func (h *holding) valid() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.lost && !time.Now().Before(h.validTo) {
		h.loseLocked()
	}
	return !h.lost
}

// wait waits for d, or until the holding stops; it reports whether it
// did not stop.
func (h *holding) wait(d time.Duration) bool {
	if d <= 0 {
		select {
		case <-h.stop:
			return false
		default:
			return true
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-h.stop:
		return false
	case <-t.C:
		return true
	}
}

// run processes the shard until it ends, the lease is lost or the worker
// stops.
func (h *holding) run(runCtx context.Context) {
	w := h.w
	ctx, cancel := context.WithCancel(runCtx)
	defer cancel()
	h.mu.Lock()
	h.cancel = cancel
	if h.why == stopLost {
		cancel()
	}
	h.mu.Unlock()
	// A context for the last calls, which may checkpoint after runCtx
	// ended.
	lastCtx := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.WithoutCancel(runCtx), w.opt.LeaseDuration)
	}
	defer func() {
		c, cancel := lastCtx()
		h.release(c)
		cancel()
	}()
	if !h.wait(time.Until(h.startAt)) {
		return
	}
	h.mu.Lock()
	from := h.lease.Checkpoint
	h.delivered = from.SequenceNumber // a Checkpoint before any record keeps it
	h.mu.Unlock()
	p := w.newProc(h.id)
	cp := &Checkpointer{h: h}
	if err := p.Initialize(ctx, h.id, from); err != nil {
		w.report(h.id, err)
		return
	}
	h.processing.Store(true)
	defer h.processing.Store(false)
	it, ok := h.iterator(ctx, from)
	for ok {
		res, err := w.e.GetRecords(ctx, it, w.opt.BatchSize)
		switch {
		case errors.Is(err, ErrPastTrimHorizon):
			// Retention dropped records after the checkpoint: go on from
			// the oldest kept, as the KCL does.
			w.report(h.id, err)
			it, ok = h.iterator(ctx, Checkpoint{ShardID: h.id})
			continue
		case errors.Is(err, ErrShardExpired):
			h.lose() // its lease goes with it
			ok = false
			continue
		case err != nil:
			if ctx.Err() == nil {
				w.report(h.id, err)
			}
			ok = h.wait(w.opt.IdleWait)
			continue
		}
		h.lag.Store(res.MillisBehindLatest)
		if n := len(res.Records); n > 0 {
			if !h.valid() {
				break
			}
			h.mu.Lock()
			h.delivered = res.Records[n-1].SequenceNumber
			h.mu.Unlock()
			if err := p.ProcessRecords(ctx, res.Records, cp, res.MillisBehindLatest); err != nil {
				w.report(h.id, err)
				return
			}
		}
		if res.NextShardIterator == "" {
			if !h.valid() {
				break
			}
			h.mu.Lock()
			h.atEnd = true
			h.mu.Unlock()
			err := p.ShardEnded(ctx, cp)
			h.mu.Lock()
			if err == nil && !h.ended && !h.lost {
				err = errorf(ErrInvalidArgument, "ShardEnded of shard %s returned without checkpointing the shard's end", h.id)
			}
			h.mu.Unlock()
			if err != nil {
				w.report(h.id, err)
			}
			return
		}
		it = res.NextShardIterator
		if len(res.Records) == 0 {
			ok = h.wait(w.opt.IdleWait)
		} else {
			ok = h.wait(0)
		}
	}
	h.mu.Lock()
	why := h.why
	if why == stopNone { // a lapsed lease, or a lost one
		h.loseLocked()
		why = stopLost
	}
	h.mu.Unlock()
	c, cancelLast := lastCtx()
	defer cancelLast()
	if why == stopShutdown {
		p.Shutdown(c, cp)
	} else {
		p.LeaseLost(c)
	}
}

// iterator returns an iterator after the checkpoint, retrying on errors
// until the holding stops. It reports false when it stopped.
func (h *holding) iterator(ctx context.Context, from Checkpoint) (string, bool) {
	args := IteratorArgs{Type: TrimHorizon}
	if !from.SequenceNumber.IsZero() {
		args = IteratorArgs{Type: AfterSequenceNumber, SequenceNumber: from.SequenceNumber.String()}
	}
	for {
		it, err := h.w.e.GetShardIterator(ctx, h.id, args)
		switch {
		case err == nil:
			return it, true
		case errors.Is(err, ErrPastTrimHorizon):
			args = IteratorArgs{Type: TrimHorizon}
			continue
		case errors.Is(err, ErrShardExpired), errors.Is(err, ErrShardNotFound):
			h.lose()
			return "", false
		}
		if ctx.Err() == nil {
			h.w.report(h.id, err)
		}
		if !h.wait(h.w.opt.IdleWait) {
			return "", false
		}
	}
}

// Checkpointer records how far a ShardProcessor processed its shard, in
// the lease (see Worker). It is safe for concurrent use, and usable
// until the processor's last call returned; later, and once the lease is
// lost, it fails with ErrLeaseLost.
type Checkpointer struct{ h *holding }

// Checkpoint records that every record given to the processor so far was
// processed; in ShardEnded, that the whole shard was (ShardEnd). It
// fails with ErrLeaseLost when the worker lost the lease (nothing is
// recorded; another worker may be processing the shard), or with the
// lease table's error.
func (c *Checkpointer) Checkpoint(ctx context.Context) error {
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	return c.checkpointLocked(ctx, h.delivered, h.atEnd)
}

// CheckpointAt records that the shard's records up to seq were
// processed. seq must be a sequence number given to the processor, not
// below the last checkpoint: else it fails with ErrInvalidArgument. It
// fails as Checkpoint does.
func (c *Checkpointer) CheckpointAt(ctx context.Context, seq ID) error {
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.delivered.Less(seq) || seq.Less(h.lease.SequenceNumber) {
		return errorf(ErrInvalidArgument, "checkpoint %s of shard %s: outside the records processed, %s..%s", seq, h.id, h.lease.SequenceNumber, h.delivered)
	}
	return c.checkpointLocked(ctx, seq, false)
}

func (c *Checkpointer) checkpointLocked(ctx context.Context, seq ID, end bool) error {
	h := c.h
	if h.lost {
		return errorf(ErrLeaseLost, "the lease of shard %s was lost", h.id)
	}
	if h.ended {
		return nil
	}
	l := h.lease
	l.SequenceNumber, l.ShardEnd = seq, end
	if err := h.writeLocked(ctx, l); err != nil {
		return err
	}
	h.ended = end
	return nil
}
