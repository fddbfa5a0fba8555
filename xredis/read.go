package xredis

import (
	"context"
	"time"

	"github.com/redis/rueidis"
	"github.com/xstreamgo/xstream"
)

// Reads over several streams. Redis reads several streams in one
// command only when their keys share a hash slot; elsewhere it answers
// CROSSSLOT. The engine sends one XREAD (or XREADGROUP) per hash slot
// (one in all on a standalone server), in one round trip per node, and
// merges the replies in the order the streams were given. A blocking
// read first looks without blocking; when nothing is there it blocks on
// every slot at once, on a connection of its own for each, and returns
// as soon as one of them gets entries, with what the others got by then.
//
// Ordering: the entries of each stream are in ID order and are what one
// command read from that stream at one moment; the streams come in the
// order given. Streams in different slots are read by different commands,
// so a result does not show every stream at one single moment, as a
// one-command XREAD on a standalone server does.

// posKind says what the ID of a stream in Read or ReadGroup asks for.
type posKind uint8

const (
	posAfter   posKind = iota // entries after an ID
	posDollar                 // Read "$": entries added after the call began
	posLast                   // Read "+": the stream's last entry
	posNew                    // ReadGroup ">"
	posHistory                // ReadGroup with an ID: the consumer's history
)

type readPos struct {
	name  string
	kind  posKind
	after string // the ID to send
	// drop marks a history read after the largest ID, which Redis would
	// read as ">": it is sent as a read after the ID before, and what it
	// returns is dropped.
	drop bool
}

func pairsErr(what string, n int) error {
	return errorf(xstream.ErrInvalidArgument, "%s wants stream names and IDs in pairs, got %d strings", what, n)
}

// parsePositions reads stream names and IDs in pairs for the call what,
// each ID by parse.
func parsePositions(what string, streamsAndIDs []string, parse func(p *readPos, id string) error) ([]readPos, error) {
	if len(streamsAndIDs) == 0 || len(streamsAndIDs)%2 != 0 {
		return nil, pairsErr(what, len(streamsAndIDs))
	}
	pos := make([]readPos, len(streamsAndIDs)/2)
	for i := range pos {
		pos[i].name = streamsAndIDs[2*i]
		if err := parse(&pos[i], streamsAndIDs[2*i+1]); err != nil {
			return nil, err
		}
	}
	return pos, nil
}

func parseReadPos(streamsAndIDs []string) ([]readPos, error) {
	return parsePositions("Read", streamsAndIDs, func(p *readPos, s string) error {
		switch s {
		case "$":
			p.kind = posDollar
		case "+":
			p.kind = posLast
		default:
			if _, err := xstream.ParseID(s); err != nil {
				return err
			}
			p.after = s
		}
		return nil
	})
}

func parseGroupPos(streamsAndIDs []string) ([]readPos, error) {
	return parsePositions("ReadGroup", streamsAndIDs, func(p *readPos, s string) error {
		switch s {
		case ">":
			p.kind, p.after = posNew, ">"
		case "$", "+":
			return errorf(xstream.ErrInvalidID, "%q is meaningless in ReadGroup: use \">\" for new entries or an ID for the consumer's history", s)
		default:
			id, err := xstream.ParseID(s)
			if err != nil {
				return err
			}
			p.kind, p.after = posHistory, s
			if id == xstream.MaxID() {
				id.Seq--
				p.after, p.drop = id.String(), true
			}
		}
		return nil
	})
}

func names(pos []readPos) []string {
	out := make([]string, len(pos))
	for i, p := range pos {
		out[i] = p.name
	}
	return out
}

// blockMs returns the BLOCK argument of the next slice of a read that
// ends at deadline (zero: never), and false when the deadline has passed.
func (b *base) blockMs(deadline time.Time) (int64, bool) {
	d := b.cfg.blockSlice
	if !deadline.IsZero() {
		left := time.Until(deadline)
		if left <= 0 {
			return 0, false
		}
		d = min(d, left)
	}
	// Round up: BLOCK 0 would wait forever.
	return max(1, int64((d+time.Millisecond-1)/time.Millisecond)), true
}

func deadlineOf(block time.Duration) time.Time {
	if block < 0 {
		return time.Time{}
	}
	return time.Now().Add(block)
}

// xread builds XREAD over the streams of g (which share a slot); block
// < 0 sends no BLOCK.
func (b *base) xread(pos []readPos, g []int, count int, block int64) rueidis.Completed {
	cmd := b.c.B().Arbitrary("XREAD")
	if count > 0 {
		cmd = cmd.Args("COUNT", itoa(int64(count)))
	}
	if block >= 0 {
		cmd = cmd.Args("BLOCK", itoa(block))
	}
	cmd = cmd.Args("STREAMS")
	for _, i := range g {
		cmd = cmd.Keys(pos[i].name)
	}
	for _, i := range g {
		cmd = cmd.Args(pos[i].after)
	}
	if block >= 0 {
		return cmd.Blocking().UnblockOnCancel().ToRetryable() // a read: sent again after a failure
	}
	return cmd.ReadOnly()
}

// lastEntry builds XREVRANGE key + - COUNT 1.
func (b *base) lastEntry(stream string) rueidis.Completed {
	return b.c.B().Arbitrary("XREVRANGE").Keys(stream).Args("+", "-", "COUNT", "1").ReadOnly()
}

// collect adds the reply to a read of the streams of g to got, by
// position.
func collect(pos []readPos, g []int, m *rueidis.RedisMessage, got [][]xstream.Entry, seen []bool) error {
	reps, err := streamReplies(m)
	if err != nil {
		return err
	}
	for _, r := range reps {
		for _, i := range g {
			if pos[i].name != r.name {
				continue
			}
			es, err := entries(r.entries)
			if err != nil {
				return err
			}
			if pos[i].drop {
				es = nil
			}
			got[i], seen[i] = es, true
			break
		}
	}
	return nil
}

// result returns, in the order of pos, the streams with entries, and the
// history reads seen even when empty.
func result(pos []readPos, got [][]xstream.Entry, seen []bool) []xstream.StreamEntries {
	var out []xstream.StreamEntries
	for i, p := range pos {
		switch {
		case len(got[i]) > 0:
			out = append(out, xstream.StreamEntries{Stream: p.name, Entries: got[i]})
		case p.kind == posHistory && seen[i]:
			out = append(out, xstream.StreamEntries{Stream: p.name, Entries: []xstream.Entry{}})
		}
	}
	return out
}

// Read sends XREAD, one per hash slot (see above). "+" (the last entry)
// is read with XREVRANGE, which every version has. A blocking read
// resolves "$" once, before it blocks, to the ID of the stream's last
// entry (0-0 for an empty or missing stream: no later entry can have a
// smaller ID), and then blocks in slices (WithBlockSlice) with the same
// IDs, so no entry added between two slices is missed.
func (b *base) Read(ctx context.Context, args xstream.ReadArgs, streamsAndIDs ...string) ([]xstream.StreamEntries, error) {
	if err := checkCount(args.Count); err != nil {
		return nil, err
	}
	pos, err := parseReadPos(streamsAndIDs)
	if err != nil {
		return nil, err
	}
	block := args.Block != 0

	// Look once: XREAD for the IDs, XREVRANGE for "+" and, when the call
	// may block, to resolve "$".
	var after []int
	var cmds rueidis.Commands
	var cmdPos []int // the position each XREVRANGE answers; -1 for an XREAD
	for i, p := range pos {
		switch {
		case p.kind == posAfter:
			after = append(after, i)
		case p.kind == posLast || block:
			cmds = append(cmds, b.lastEntry(p.name))
			cmdPos = append(cmdPos, i)
		}
	}
	groups := slotGroups(subset(pos, after), b.cluster)
	for _, g := range groups {
		cmds = append(cmds, b.xread(pos, remap(g, after), args.Count, -1))
		cmdPos = append(cmdPos, -1)
	}
	got := make([][]xstream.Entry, len(pos))
	seen := make([]bool, len(pos))
	gi := 0
	for k, r := range b.do(ctx, cmds) {
		m, err := r.ToMessage()
		if err != nil && !rueidis.IsRedisNil(err) {
			return nil, mapErr(err)
		}
		if i := cmdPos[k]; i >= 0 {
			last, err := entries(&m)
			if err != nil {
				return nil, err
			}
			p := &pos[i]
			if p.kind == posLast {
				got[i] = last
			}
			p.after = "0-0"
			if len(last) > 0 {
				p.after = last[0].ID.String()
			}
			continue
		}
		if err := collect(pos, remap(groups[gi], after), &m, got, seen); err != nil {
			return nil, err
		}
		gi++
	}
	if out := result(pos, got, seen); len(out) > 0 || !block {
		return out, nil
	}

	// Block on every stream, "$" and "+" resolved.
	all := make([]int, len(pos))
	for i := range all {
		all[i] = i
	}
	groups = slotGroups(names(pos), b.cluster)
	ws := make([]blockCmd, len(groups))
	for k, g := range groups {
		ws[k] = blockCmd{key: pos[g[0]].name, build: func(ms int64) rueidis.Completed {
			return b.xread(pos, g, args.Count, ms)
		}}
	}
	reps, err := b.block(ctx, ws, deadlineOf(args.Block), false)
	if err != nil {
		return nil, err
	}
	for k := range reps {
		if reps[k] != nil {
			if err := collect(pos, groups[k], reps[k], got, seen); err != nil {
				return nil, err
			}
		}
	}
	// "+" is the last entry when the read ends, as Redis 7.4 runs a
	// blocked XREAD again when it is woken.
	var lastCmds rueidis.Commands
	var lastPos []int
	for i, p := range pos {
		if p.kind == posLast && len(got[i]) > 0 {
			lastCmds = append(lastCmds, b.lastEntry(p.name))
			lastPos = append(lastPos, i)
		}
	}
	for k, r := range b.c.DoMulti(ctx, lastCmds...) {
		m, err := r.ToMessage()
		if err != nil {
			return nil, mapErr(err)
		}
		if got[lastPos[k]], err = entries(&m); err != nil {
			return nil, err
		}
	}
	return result(pos, got, seen), nil
}

func subset(pos []readPos, idx []int) []string {
	out := make([]string, len(idx))
	for k, i := range idx {
		out[k] = pos[i].name
	}
	return out
}

// remap turns positions in a subset into positions in the whole.
func remap(g []int, idx []int) []int {
	out := make([]int, len(g))
	for k, j := range g {
		out[k] = idx[j]
	}
	return out
}

// xreadgroup builds XREADGROUP over the streams of g; block < 0 sends no
// BLOCK.
func (b *base) xreadgroup(group, consumer string, pos []readPos, g []int, args xstream.ReadGroupArgs, block int64) rueidis.Completed {
	cmd := b.c.B().Arbitrary("XREADGROUP", "GROUP").Args(group, consumer)
	if args.Count > 0 {
		cmd = cmd.Args("COUNT", itoa(int64(args.Count)))
	}
	if block >= 0 {
		cmd = cmd.Args("BLOCK", itoa(block))
	}
	if args.NoAck {
		cmd = cmd.Args("NOACK")
	}
	cmd = cmd.Args("STREAMS")
	for _, i := range g {
		cmd = cmd.Keys(pos[i].name)
	}
	for _, i := range g {
		cmd = cmd.Args(pos[i].after)
	}
	if block >= 0 {
		return cmd.Blocking()
	}
	return cmd.Build()
}

// ReadGroup sends XREADGROUP, one per hash slot (see above). When the
// streams span several slots, it first checks that each has the group
// (XPENDING with a count of 0), so that, as in the core, a missing group
// fails the call before any entry is delivered. A blocked read that ends
// (its context done, or another slot got entries first) is woken with
// CLIENT UNBLOCK and its reply read, so that entries the server delivered
// meanwhile are returned, not left pending unseen; on a server without
// CLIENT UNBLOCK (xstream's own) its connection is closed instead. It
// refuses args.Claim with ErrInvalidArgument: XREADGROUP CLAIM needs Redis
// 8.4, and the Engine has no place for what its reply adds.
func (b *base) ReadGroup(ctx context.Context, group, consumer string, args xstream.ReadGroupArgs, streamsAndIDs ...string) ([]xstream.StreamEntries, error) {
	if err := checkCount(args.Count); err != nil {
		return nil, err
	}
	if err := checkNoClaim(args); err != nil {
		return nil, err
	}
	pos, err := parseGroupPos(streamsAndIDs)
	if err != nil {
		return nil, err
	}
	streams := names(pos)
	groups := slotGroups(streams, b.cluster)
	if len(groups) > 1 {
		cmds := make(rueidis.Commands, len(pos))
		for i, p := range pos {
			cmds[i] = b.c.B().Arbitrary("XPENDING").Keys(p.name).Args(group, "-", "+", "0").ReadOnly()
		}
		for i, r := range b.c.DoMulti(ctx, cmds...) {
			if err := r.Error(); err != nil {
				return nil, b.groupErr(ctx, err, group, pos[i].name)
			}
		}
	}
	cmds := make(rueidis.Commands, len(groups))
	for k, g := range groups {
		cmds[k] = b.xreadgroup(group, consumer, pos, g, args, -1)
	}
	got := make([][]xstream.Entry, len(pos))
	seen := make([]bool, len(pos))
	var firstErr error
	// Once sent, an XREADGROUP delivers whether or not its reply is read:
	// its reply is waited for a while after ctx is done, so that what it
	// delivered is returned.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sendCtx, done := graceCtx(ctx)
	defer done()
	for k, r := range b.do(sendCtx, cmds) {
		m, err := r.ToMessage()
		if err != nil && !rueidis.IsRedisNil(err) {
			if firstErr == nil {
				firstErr = b.groupErr(ctx, err, group, subsetOf(pos, groups[k])...)
			}
			continue
		}
		if err := collect(pos, groups[k], &m, got, seen); err != nil {
			return nil, err
		}
	}
	out := result(pos, got, seen)
	if firstErr != nil && len(out) == 0 {
		return nil, firstErr
	}
	history := false
	for _, p := range pos {
		history = history || p.kind == posHistory
	}
	if len(out) > 0 || history || args.Block == 0 || firstErr != nil {
		// With an error in one slot but entries from another (a group
		// destroyed meanwhile), the entries are returned: they are
		// pending.
		return out, nil
	}

	ws := make([]blockCmd, len(groups))
	for k, g := range groups {
		ws[k] = blockCmd{key: pos[g[0]].name, build: func(ms int64) rueidis.Completed {
			return b.xreadgroup(group, consumer, pos, g, args, ms)
		}}
	}
	reps, err := b.block(ctx, ws, deadlineOf(args.Block), true)
	for k := range reps {
		if reps[k] != nil {
			if cerr := collect(pos, groups[k], reps[k], got, seen); cerr != nil {
				return nil, cerr
			}
		}
	}
	if out := result(pos, got, seen); len(out) > 0 {
		return out, nil // served: what was delivered counts, whatever ended the wait
	}
	if err != nil && !isCtxErr(err) {
		err = b.groupErr(context.WithoutCancel(ctx), err, group, streams...)
	}
	return nil, err
}

func subsetOf(pos []readPos, g []int) []string {
	out := make([]string, len(g))
	for k, i := range g {
		out[k] = pos[i].name
	}
	return out
}

// do sends cmds: with Do when there is one (rueidis's direct path for a
// single caller), else in one DoMulti.
func (b *base) do(ctx context.Context, cmds rueidis.Commands) []rueidis.RedisResult {
	if len(cmds) == 1 {
		return []rueidis.RedisResult{b.c.Do(ctx, cmds[0])}
	}
	return b.c.DoMulti(ctx, cmds...)
}
