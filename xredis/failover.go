package xredis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/rueidis"
)

// Failover. Every command of the engine goes through a failoverClient,
// which sorts the failures of a command by what they say about its
// effect and retries what is safe to retry:
//
//   - not applied (ErrNotApplied): the command did not run. The
//     connection could not be made (connection refused, no node for the
//     slot), or the server refused it for now (CLUSTERDOWN, TRYAGAIN,
//     LOADING, MASTERDOWN, READONLY, NOREPLICAS, or a MOVED or ASK that
//     was not followed). Any command is sent again, after a backoff,
//     until it gets another answer or its context ends.
//   - outcome unknown (ErrUnknownOutcome): the connection failed after
//     the command may have been sent (EOF, reset, a closed connection, a
//     timeout): it may or may not have run. Reads and the writes marked
//     retryable (idempotent: XACK, the checkpoints' HSET) are sent again
//     as above; other writes (XADD, scripts) fail at once with the error.
//
// When the context ends while a command is being retried, the error wraps
// the context's error, the sentinel and the last failure. Errors of any
// other kind (context errors, rueidis.ErrClosing, error replies) come back
// as they are.
//
// With WithReplicaWait, the writes of puts, adds, acks and checkpoints
// are followed by WAIT on the same connection (a dedicated one, on the
// node of the write's slot), which counts the replicas that have every
// write of that connection: ErrNotReplicated when too few did.

// ErrNotApplied matches the error of a command that did not run: it could
// not be sent (the node refused the connection, the cluster has no node
// for its slot) or the server refused it for now (CLUSTERDOWN, TRYAGAIN,
// LOADING, MASTERDOWN, READONLY, NOREPLICAS). Calling again is safe. The
// engine itself retries such commands until their context ends, so a
// caller sees it wrapped with the context's error (a blocked ReadGroup,
// which is not retried, sees it alone).
var ErrNotApplied = errors.New("xredis: not applied")

// ErrUnknownOutcome matches the error of a write whose connection failed
// after the write may have been sent (EOF, connection reset, timeout), as
// when the node died: the write may or may not have happened, and may or
// may not survive a failover. A put or an add may be repeated, at the
// risk of a duplicate. Reads and idempotent writes (acks, checkpoints)
// are retried by the engine instead. A write whose context ends while
// its reply is awaited fails with the context's error alone: its outcome
// is unknown too.
var ErrUnknownOutcome = errors.New("xredis: outcome unknown")

// ErrNotReplicated matches the error of a write made with WithReplicaWait
// that fewer replicas than asked confirmed within the timeout (or whose
// WAIT got no answer): the write happened on the master (the call's other
// results, such as a put's sequence number, are given) but may be lost if
// a replica that lacks it is promoted. The engine does not retry it.
var ErrNotReplicated = errors.New("xredis: not confirmed by enough replicas")

// replicaWait is what WithReplicaWait sets: 0 replicas is off.
type replicaWait struct {
	replicas int64
	timeout  time.Duration
}

// WithReplicaWait makes the engine (and the sharded streams opened on it)
// send WAIT replicas timeout after each put (Sharded.Put, PutRecords),
// Add, Ack (Engine and Sharded) and SaveCheckpoints, on the connection
// that sent the write, and fail with an error matching ErrNotReplicated
// when fewer than replicas replicas confirmed it within timeout (rounded
// up to whole milliseconds; 0: no timeout of its own, the call's context
// bounds it).
// The write still happened on the master: the error says it may not
// survive a failover.
//
// Redis replicates asynchronously: a write acknowledged by a master that
// dies before its replica has it is lost when that replica is promoted.
// With replicas >= 1, a write the engine acknowledges is on at least that
// many replicas, so a failover that promotes one of them keeps it (with
// one replica per master, the promoted replica is the one that confirmed
// it). Without the option a failover may lose the writes of the last
// moments before the master died. After a failover the new master has no
// replica until one joins it (the old master restarted joins as its
// replica): meanwhile writes fail with ErrNotReplicated after the
// timeout.
//
// Each such write then takes a connection of its own for its round trip
// and the replicas' confirmation instead of sharing the pipelined ones
// (see BENCHMARKS.md for the cost). The server must have WAIT (Redis,
// Valkey; xstream's server has no replicas, so its WAIT answers 0).
func WithReplicaWait(replicas int, timeout time.Duration) Option {
	return func(c *config) {
		if replicas < 0 {
			replicas = 0
		}
		if timeout > 0 {
			timeout = (timeout + time.Millisecond - 1).Truncate(time.Millisecond) // WAIT 0 would be no timeout
		}
		c.wait = replicaWait{replicas: int64(replicas), timeout: max(timeout, 0)}
	}
}

// Backoff between two tries of a command: from retryMin, doubling up to
// retryMax, with jitter.
const (
	retryMin = 10 * time.Millisecond
	retryMax = 200 * time.Millisecond
)

// failure is what a command's error says about its effect.
type failure int

const (
	noFailure      failure = iota // success, or an error that is an answer
	notApplied                    // did not run: retry
	unknownOutcome                // may have run
)

// classify sorts err (see the comment at the top). A context error, the
// client's ErrClosing and ErrNotReplicated are answers, even wrapped with
// a failure; so is any error that is not the connection's (EOF, a
// net.Error, a system call's errno) or a refusal listed above.
func classify(err error) failure {
	if err == nil || rueidis.IsRedisNil(err) {
		return noFailure
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, rueidis.ErrClosing) || errors.Is(err, ErrNotReplicated) {
		return noFailure
	}
	if errors.Is(err, ErrNotApplied) {
		return notApplied
	}
	if errors.Is(err, ErrUnknownOutcome) {
		return unknownOutcome
	}
	if re := (*rueidis.RedisError)(nil); errors.As(err, &re) {
		if _, ok := re.IsMoved(); ok {
			return notApplied
		}
		if _, ok := re.IsAsk(); ok {
			return notApplied
		}
		if re.IsClusterDown() || re.IsTryAgain() || re.IsLoading() {
			return notApplied
		}
		msg := re.Error()
		for _, p := range []string{"MASTERDOWN", "READONLY", "NOREPLICAS"} {
			if strings.HasPrefix(msg, p) {
				return notApplied
			}
		}
		return noFailure
	}
	if errors.Is(err, rueidis.ErrNoSlot) || errors.Is(err, syscall.ECONNREFUSED) {
		return notApplied
	}
	if oe := (*net.OpError)(nil); errors.As(err, &oe) && oe.Op == "dial" {
		return notApplied
	}
	// The connection's errors; any other error is an answer.
	var ne net.Error
	var errno syscall.Errno
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.As(err, &ne) || errors.As(err, &errno) {
		return unknownOutcome
	}
	return noFailure
}

// failed wraps err, a failure of kind f, in its sentinel (unless it
// already is).
func failed(f failure, err error) error {
	switch {
	case errors.Is(err, ErrNotApplied) || errors.Is(err, ErrUnknownOutcome):
		return err
	case f == notApplied:
		return fmt.Errorf("%w (the command did not run): %w", ErrNotApplied, err)
	}
	return fmt.Errorf("%w (the connection failed after the command may have been sent): %w", ErrUnknownOutcome, err)
}

// noRetryKey marks a context whose commands are not retried.
type noRetryKey struct{}

// withoutRetry returns ctx marked so that the engine's commands made with
// it are sent once: a failure comes back at once, wrapped in its
// sentinel (for maintenance that the next call does again, such as a
// retention pass).
func withoutRetry(ctx context.Context) context.Context {
	return context.WithValue(ctx, noRetryKey{}, true)
}

// backoff paces the tries of one call.
type backoff struct{ next time.Duration }

// wait sleeps before the next try; it returns ctx's error, wrapping
// failure, when ctx ends first or forbids retries.
func (b *backoff) wait(ctx context.Context, failure error) error {
	if ctx.Value(noRetryKey{}) != nil {
		return failure
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w (while retrying): %w", err, failure)
	}
	b.next = min(max(2*b.next, retryMin), retryMax)
	d := b.next/2 + rand.N(b.next/2+1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w (while retrying): %w", ctx.Err(), failure)
	}
}

// retry calls try until it returns no failure to retry (see classify: a
// command that did not run, or, when idempotent says the whole of try may
// be repeated, one whose outcome is unknown), with the engine's backoff,
// until ctx ends. It is for operations of several commands that must be
// repeated as a whole after an unknown outcome, such as a renewal that
// reads and then writes; a single command is retried by the client
// already. The error of a failure is wrapped in its sentinel.
func retry(ctx context.Context, idempotent bool, try func() error) error {
	var b backoff
	for {
		err := try()
		f := classify(err)
		if f == noFailure {
			return err
		}
		err = failed(f, err)
		if f == unknownOutcome && !idempotent {
			return err
		}
		if err := b.wait(ctx, err); err != nil {
			return err
		}
	}
}

// failoverClient is the engine's client: rueidis's, whose Do and DoMulti
// retry and sort failures as the comment at the top says.
type failoverClient struct {
	rueidis.Client
	cluster bool
	wait    replicaWait
}

func newFailoverClient(c rueidis.Client, wait replicaWait) *failoverClient {
	return &failoverClient{Client: c, cluster: c.Mode() == rueidis.ClientModeCluster, wait: wait}
}

// kept is what the engine keeps of a command to send it again: rueidis
// recycles a command once it is answered (an error reply such as
// CLUSTERDOWN included), so a retry sends a copy made from it.
type kept struct {
	args                  []string
	slot                  uint16
	ro, retry, block, ubc bool
}

func keep(cmd *rueidis.Completed) kept {
	return kept{args: slices.Clone(cmd.Commands()), slot: cmd.Slot(), ro: cmd.IsReadOnly(), retry: cmd.IsRetryable(),
		block: cmd.IsBlock(), ubc: cmd.IsUnblockOnCancel()}
}

// failed returns the result of k's command that failed with err, of kind
// f (not noFailure), and whether to send it again: always when it did not
// run; after an unknown outcome, when it is a read or a write marked
// idempotent (ToRetryable).
func (k *kept) failed(f failure, err error) (rueidis.RedisResult, bool) {
	return rueidis.NewErrorResult(failed(f, err)), f == notApplied || k.ro || k.retry
}

// again returns a command that sends what k's did, to the same slot.
func (c *failoverClient) again(k *kept) rueidis.Completed {
	a := c.B().Arbitrary(k.args...)
	var cmd rueidis.Completed
	switch {
	case k.block:
		cmd = a.Blocking()
	case k.ro:
		cmd = a.ReadOnly()
	default:
		cmd = a.Build()
	}
	if k.ubc {
		cmd = cmd.UnblockOnCancel()
	}
	if k.retry && !k.ro {
		cmd = cmd.ToRetryable()
	}
	if c.cluster {
		// One of the arguments is a key of the slot (none for a command
		// without keys, which goes to any node).
		for _, a := range k.args[1:] {
			if slot(a) == k.slot {
				return cmd.SetSlot(a)
			}
		}
	}
	return cmd
}

// Do sends cmd, again while it fails in a way to retry.
func (c *failoverClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	k := keep(&cmd)
	var b backoff
	for {
		r := c.Client.Do(ctx, cmd)
		err := r.Error()
		f := classify(err)
		if f == noFailure {
			return r
		}
		r, retry := k.failed(f, err)
		if !retry {
			return r
		}
		if err := b.wait(ctx, r.Error()); err != nil {
			return rueidis.NewErrorResult(err)
		}
		cmd = c.again(&k)
	}
}

// DoMulti sends cmds, again those that fail in a way to retry (in their
// order), and returns one result per command.
func (c *failoverClient) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	if len(cmds) == 0 {
		return nil
	}
	ks := make([]kept, len(cmds))
	for i := range cmds {
		ks[i] = keep(&cmds[i])
	}
	res := c.Client.DoMulti(ctx, cmds...)
	if !slices.ContainsFunc(res, func(r rueidis.RedisResult) bool { return classify(r.Error()) != noFailure }) {
		return res // the common case: nothing to send again
	}
	out := res // by command; the first pass's results are in place
	todo := make([]int, len(cmds))
	for i := range todo {
		todo[i] = i
	}
	var b backoff
	for {
		var again []int
		var last error
		for k, i := range todo {
			err := res[k].Error()
			f := classify(err)
			if f == noFailure {
				out[i] = res[k]
				continue
			}
			var retry bool
			if out[i], retry = ks[i].failed(f, err); retry {
				again = append(again, i)
				last = out[i].Error()
			}
		}
		if len(again) == 0 {
			return out
		}
		if err := b.wait(ctx, last); err != nil {
			if err != last { // the context ended
				for _, i := range again {
					out[i] = rueidis.NewErrorResult(fmt.Errorf("%w (while retrying): %w", ctx.Err(), out[i].Error()))
				}
			}
			return out
		}
		todo = again
		send := make([]rueidis.Completed, len(todo))
		for k, i := range todo {
			send[k] = c.again(&ks[i])
		}
		res = c.Client.DoMulti(ctx, send...)
	}
}

// write sends the writes cmds as DoMulti does and, with WithReplicaWait,
// WAIT after them on the same connection (one per slot in a cluster). It
// returns the commands' results and, when the wait is on and too few
// replicas confirmed the writes, an ErrNotReplicated error for each
// command that succeeded (nil when all were confirmed or the wait is
// off).
func (c *failoverClient) write(ctx context.Context, cmds ...rueidis.Completed) ([]rueidis.RedisResult, []error) {
	if c.wait.replicas == 0 {
		if len(cmds) == 1 {
			return []rueidis.RedisResult{c.Do(ctx, cmds[0])}, nil
		}
		return c.DoMulti(ctx, cmds...), nil
	}
	res := make([]rueidis.RedisResult, len(cmds))
	werr := make([]error, len(cmds))
	ks := make([]kept, len(cmds))
	groups := [][]int{make([]int, len(cmds))}
	for i := range cmds {
		ks[i] = keep(&cmds[i])
		groups[0][i] = i
	}
	if c.cluster {
		groups = slotGroupsOf(cmds)
	}
	if len(groups) == 1 {
		c.waited(ctx, cmds, ks, groups[0], res, werr)
	} else {
		var wg sync.WaitGroup
		for _, g := range groups {
			wg.Go(func() { c.waited(ctx, cmds, ks, g, res, werr) })
		}
		wg.Wait()
	}
	for _, e := range werr {
		if e != nil {
			return res, werr
		}
	}
	return res, nil
}

// write1 is write of one command: its result, and its ErrNotReplicated
// error (nil when confirmed or the wait is off).
func (c *failoverClient) write1(ctx context.Context, cmd rueidis.Completed) (rueidis.RedisResult, error) {
	if c.wait.replicas == 0 {
		return c.Do(ctx, cmd), nil
	}
	res, werr := c.write(ctx, cmd)
	if werr != nil {
		return res[0], werr[0]
	}
	return res[0], nil
}

// slotGroupsOf groups the indexes of cmds by hash slot, in order.
func slotGroupsOf(cmds []rueidis.Completed) [][]int {
	var out [][]int
	at := map[uint16]int{}
	for i := range cmds {
		s := cmds[i].Slot()
		k, ok := at[s]
		if !ok {
			k = len(out)
			at[s] = k
			out = append(out, nil)
		}
		out[k] = append(out[k], i)
	}
	return out
}

// waited sends the commands idx of cmds (of one slot; ks keeps them) and
// WAIT on one dedicated connection, again (copies of) those that fail in
// a way to retry, and fills their results and wait errors. A dedicated
// connection follows no redirection: a MOVED or an ASK sends the
// commands again on the node it names (with ASKING before each for an
// ASK).
func (c *failoverClient) waited(ctx context.Context, cmds []rueidis.Completed, ks []kept, idx []int, res []rueidis.RedisResult, werr []error) {
	var b backoff
	to, asking := "", false
	for try := 0; ; try++ {
		var send rueidis.Commands
		for _, i := range idx {
			if asking {
				send = append(send, c.B().Asking().Build())
			}
			if try == 0 {
				send = append(send, cmds[i])
			} else {
				send = append(send, c.again(&ks[i]))
			}
		}
		send = append(send, c.B().Wait().Numreplicas(c.wait.replicas).Timeout(c.wait.timeout.Milliseconds()).Build())
		rs := c.dedicated(ctx, to, send)
		acked, err := rs[len(rs)-1].AsInt64()
		var notConfirmed error
		switch {
		case err != nil:
			notConfirmed = fmt.Errorf("%w: the WAIT after the write failed: %w", ErrNotReplicated, err)
		case acked < c.wait.replicas:
			notConfirmed = fmt.Errorf("%w: %d of %d replicas confirmed the write within %s; the write was applied on the master and may be lost if a replica that lacks it is promoted",
				ErrNotReplicated, acked, c.wait.replicas, c.wait.timeout)
		}
		var again []int
		var last error
		asked := asking
		to, asking = "", false
		for k, i := range idx {
			r := rs[k]
			if asked {
				r = rs[2*k+1] // after its ASKING
			}
			err := r.Error()
			f := classify(err)
			if f == noFailure {
				res[i] = r
				if err == nil || rueidis.IsRedisNil(err) {
					werr[i] = notConfirmed
				}
				continue
			}
			var retry bool
			if res[i], retry = ks[i].failed(f, err); retry {
				again = append(again, i)
				last = res[i].Error()
				if re, ok := rueidis.IsRedisErr(err); ok {
					if addr, ok := re.IsMoved(); ok {
						to = addr
					} else if addr, ok := re.IsAsk(); ok {
						to, asking = addr, true
					}
				}
			}
		}
		if len(again) == 0 {
			return
		}
		if err := b.wait(ctx, last); err != nil {
			if err != last { // the context ended
				for _, i := range again {
					res[i] = rueidis.NewErrorResult(fmt.Errorf("%w (while retrying): %w", ctx.Err(), res[i].Error()))
				}
			}
			return
		}
		idx = again
	}
}

// dedicated sends cmds on a dedicated connection: to the node at addr, or
// ("") to the node of their slot.
func (c *failoverClient) dedicated(ctx context.Context, addr string, cmds rueidis.Commands) []rueidis.RedisResult {
	var dc rueidis.DedicatedClient
	var release func()
	if addr != "" {
		if n, ok := c.Nodes()[addr]; ok {
			dc, release = n.Dedicate()
		}
	}
	if dc == nil {
		dc, release = c.Client.Dedicate()
	}
	defer release()
	rs := dc.DoMulti(ctx, cmds...)
	for _, r := range rs {
		if r.NonRedisError() != nil {
			// A reply may still be on its way (a WAIT cut short by ctx):
			// the connection goes, not back to the pool.
			dc.Close()
			break
		}
	}
	return rs
}

// clientOf returns the client that e's commands go through: an engine
// of this package's, or (an Engine made elsewhere) e's client with no
// replica wait.
func clientOf(e Engine) *failoverClient {
	if b, ok := e.(interface{ failover() *failoverClient }); ok {
		return b.failover()
	}
	return newFailoverClient(e.Client(), replicaWait{})
}

// sortFailure wraps err in the sentinel of its failure, if it is one: for
// the errors of commands sent on dedicated connections (blocked
// XREADGROUPs), which the engine does not retry.
func sortFailure(err error) error {
	if f := classify(err); f != noFailure {
		return failed(f, err)
	}
	return err
}
