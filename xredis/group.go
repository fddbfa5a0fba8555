package xredis

import (
	"context"
	"math"
	"strconv"
	"time"

	"github.com/redis/rueidis"
	"github.com/xstreamgo/xstream"
)

// CreateGroup sends XGROUP CREATE. A group with a dead-letter policy is
// refused with an error wrapping errors.ErrUnsupported: Redis has no such
// policy, and this engine is no xstream.DeadLetterPolicyEngine.
func (b *base) CreateGroup(ctx context.Context, stream, group, start string, opts xstream.GroupOptions) error {
	if opts.DeadLetter != (xstream.DeadLetterPolicy{}) {
		return errorf(errUnsupported, "a dead-letter policy (%+v) for group %q: Redis has none, and this engine does not emulate it", opts.DeadLetter, group)
	}
	id, err := groupStart(start)
	var read []string
	if err == nil {
		read, err = entriesRead(opts)
	}
	if err != nil {
		if !opts.MkStream {
			return b.orNoStream(ctx, stream, err)
		}
		return err
	}
	cmd := b.c.B().Arbitrary("XGROUP", "CREATE").Keys(stream).Args(group, id)
	if opts.MkStream {
		cmd = cmd.Args("MKSTREAM")
	}
	return mapErr(b.c.Do(ctx, cmd.Args(read...).Build()).Error())
}

func (b *base) SetGroupID(ctx context.Context, stream, group, id string, opts xstream.GroupOptions) error {
	to, err := groupStart(id)
	var read []string
	if err == nil {
		read, err = entriesRead(opts)
	}
	if err != nil {
		return b.orNoStream(ctx, stream, err)
	}
	return mapErr(b.c.Do(ctx, b.c.B().Arbitrary("XGROUP", "SETID").Keys(stream).Args(group, to).Args(read...).Build()).Error())
}

func (b *base) DestroyGroup(ctx context.Context, stream, group string) (bool, error) {
	n, err := b.c.Do(ctx, b.c.B().Arbitrary("XGROUP", "DESTROY").Keys(stream).Args(group).Build()).AsInt64()
	return n > 0, mapErr(err)
}

func (b *base) CreateConsumer(ctx context.Context, stream, group, consumer string) (bool, error) {
	n, err := b.c.Do(ctx, b.c.B().Arbitrary("XGROUP", "CREATECONSUMER").Keys(stream).Args(group, consumer).Build()).AsInt64()
	return n > 0, mapErr(err)
}

func (b *base) DeleteConsumer(ctx context.Context, stream, group, consumer string) (int64, error) {
	n, err := b.c.Do(ctx, b.c.B().Arbitrary("XGROUP", "DELCONSUMER").Keys(stream).Args(group, consumer).Build()).AsInt64()
	return n, mapErr(err)
}

// Ack sends XACK. As in Redis and the core, a missing stream or group
// acknowledges nothing, before the IDs are looked at (see sendIDs). XACK
// being idempotent, a lost reply sends it again (see ErrUnknownOutcome);
// with WithReplicaWait, an Ack too few replicas confirmed returns its
// count and an ErrNotReplicated error.
func (b *base) Ack(ctx context.Context, stream, group string, ids ...string) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	send, perr := sendIDs(ids)
	// Acknowledging twice is acknowledging once: the engine may send it
	// again after a lost reply.
	res, werr := b.c.write1(ctx, b.c.B().Arbitrary("XACK").Keys(stream).Args(group).Args(send...).Build().ToRetryable())
	n, err := res.AsInt64()
	if err != nil {
		return 0, invalidIDs(perr, err)
	}
	return n, werr
}

func (b *base) Pending(ctx context.Context, stream, group string) (xstream.PendingSummary, error) {
	var sum xstream.PendingSummary
	m, err := b.c.Do(ctx, b.c.B().Arbitrary("XPENDING").Keys(stream).Args(group).ReadOnly()).ToMessage()
	if err != nil {
		return sum, b.groupErr(ctx, err, group, stream)
	}
	arr := vals(&m)
	if len(arr) != 4 {
		return sum, badReply("XPENDING", &m)
	}
	if sum.Count, err = arr[0].AsInt64(); err != nil || sum.Count == 0 {
		return sum, err
	}
	if sum.Lowest, err = idOf(&arr[1]); err != nil {
		return sum, err
	}
	if sum.Highest, err = idOf(&arr[2]); err != nil {
		return sum, err
	}
	for _, c := range vals(&arr[3]) {
		p := vals(&c)
		if len(p) != 2 {
			return sum, badReply("XPENDING", &m)
		}
		var cp xstream.ConsumerPending
		if cp.Name, err = p[0].ToString(); err != nil {
			return sum, err
		}
		if cp.Count, err = p[1].AsInt64(); err != nil {
			return sum, err
		}
		sum.Consumers = append(sum.Consumers, cp)
	}
	return sum, nil
}

// PendingRange sends XPENDING with a range. A Count of 0 (no cap) goes
// as the largest count.
func (b *base) PendingRange(ctx context.Context, stream, group string, args xstream.PendingArgs) ([]xstream.PendingEntry, error) {
	cmd, err := b.pendingCmd(stream, group, args)
	if err != nil {
		return nil, b.orNoGroup(ctx, stream, group, err)
	}
	m, err := b.c.Do(ctx, cmd).ToMessage()
	if err != nil {
		return nil, b.groupErr(ctx, err, group, stream)
	}
	return pendingRows(&m)
}

func (b *base) pendingCmd(stream, group string, args xstream.PendingArgs) (rueidis.Completed, error) {
	if err := checkCount(args.Count); err != nil {
		return rueidis.Completed{}, err
	}
	if err := checkDuration("MinIdle", args.MinIdle); err != nil {
		return rueidis.Completed{}, err
	}
	start, end := args.Start, args.End
	if start == "" {
		start = "-"
	}
	if end == "" {
		end = "+"
	}
	from, to, empty, err := rangeArgs(start, end)
	if err != nil {
		return rueidis.Completed{}, err
	}
	if empty {
		from, to = "+", "-" // no ID: Redis still checks the group
	}
	cmd := b.c.B().Arbitrary("XPENDING").Keys(stream).Args(group)
	if idle := args.MinIdle.Milliseconds(); idle > 0 {
		cmd = cmd.Args("IDLE", itoa(idle))
	}
	count := int64(args.Count)
	if count == 0 {
		count = math.MaxInt64
	}
	cmd = cmd.Args(from, to, itoa(count))
	if args.Consumer != "" {
		cmd = cmd.Args(args.Consumer)
	}
	return cmd.ReadOnly(), nil
}

// pendingRows decodes the rows of XPENDING with a range, [[id, consumer,
// idle, deliveries], ...]; an idle time of -1 is that of an entry given
// back by XNACK.
func pendingRows(m *rueidis.RedisMessage) ([]xstream.PendingEntry, error) {
	arr, err := m.ToArray()
	if err != nil || len(arr) == 0 {
		return nil, err
	}
	out := make([]xstream.PendingEntry, len(arr))
	for i := range arr {
		row := vals(&arr[i])
		if len(row) != 4 {
			return nil, badReply("XPENDING", m)
		}
		pe := &out[i]
		if pe.ID, err = idOf(&row[0]); err != nil {
			return nil, err
		}
		if pe.Consumer, err = row[1].ToString(); err != nil {
			return nil, err
		}
		idle, err := row[2].AsInt64()
		if err != nil {
			return nil, err
		}
		if idle < 0 {
			pe.Idle, pe.Consumer = xstream.NackIdle, ""
		} else {
			pe.Idle = ms(idle)
		}
		if pe.Deliveries, err = row[3].AsInt64(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (b *base) Claim(ctx context.Context, stream, group, consumer string, minIdle time.Duration, ids []string, args xstream.ClaimArgs) ([]xstream.Entry, error) {
	cmd, err := b.claimCmd(stream, group, consumer, minIdle, ids, args)
	if err != nil {
		return nil, b.orNoGroup(ctx, stream, group, err)
	}
	m, err := b.c.Do(ctx, cmd).ToMessage()
	if err != nil {
		return nil, b.groupErr(ctx, err, group, stream)
	}
	if args.JustID {
		return idEntries(&m)
	}
	return entries(&m)
}

func (b *base) claimCmd(stream, group, consumer string, minIdle time.Duration, ids []string, args xstream.ClaimArgs) (rueidis.Completed, error) {
	var none rueidis.Completed
	if err := checkDuration("min idle", minIdle); err != nil {
		return none, err
	}
	if len(ids) == 0 {
		return none, errorf(xstream.ErrInvalidArgument, "Claim needs at least one ID")
	}
	parsed, err := parseIDs(ids)
	if err != nil {
		return none, err
	}
	if err := checkDuration("Idle", args.Idle); err != nil {
		return none, err
	}
	if args.Idle != 0 && !args.Time.IsZero() {
		return none, errorf(xstream.ErrInvalidArgument, "Idle (%s) and Time (%s) given together", args.Idle, args.Time)
	}
	if args.RetryCount != nil && *args.RetryCount < 0 {
		return none, errorf(xstream.ErrInvalidArgument, "RetryCount must be >= 0, got %d", *args.RetryCount)
	}
	var lastID string
	if args.LastID != "" {
		if _, err := xstream.ParseID(args.LastID); err != nil {
			return none, err
		}
		lastID = args.LastID
	}
	cmd := b.c.B().Arbitrary("XCLAIM").Keys(stream).Args(group, consumer, itoa(minIdle.Milliseconds())).Args(parsed...)
	if args.Idle != 0 {
		cmd = cmd.Args("IDLE", itoa(args.Idle.Milliseconds()))
	}
	if !args.Time.IsZero() {
		// A time before 1970 is now, as in the core: no TIME.
		if t := args.Time.UnixMilli(); t >= 0 {
			cmd = cmd.Args("TIME", itoa(t))
		}
	}
	if args.RetryCount != nil {
		cmd = cmd.Args("RETRYCOUNT", itoa(*args.RetryCount))
	}
	if args.Force {
		cmd = cmd.Args("FORCE")
	}
	if args.JustID {
		cmd = cmd.Args("JUSTID")
	}
	if lastID != "" {
		cmd = cmd.Args("LASTID", lastID)
	}
	return cmd.Build(), nil
}

// autoClaimMaxCount bounds AutoClaimArgs.Count, as the core does.
const autoClaimMaxCount = math.MaxInt64 / 10

func (b *base) AutoClaim(ctx context.Context, stream, group, consumer string, minIdle time.Duration, start string, args xstream.AutoClaimArgs) (xstream.AutoClaimResult, error) {
	var res xstream.AutoClaimResult
	cmd, err := b.autoClaimCmd(stream, group, consumer, minIdle, start, args)
	if err != nil {
		return res, b.orNoGroup(ctx, stream, group, err)
	}
	m, err := b.c.Do(ctx, cmd).ToMessage()
	if err != nil {
		return res, b.groupErr(ctx, err, group, stream)
	}
	arr := vals(&m)
	if len(arr) < 2 {
		return res, badReply("XAUTOCLAIM", &m)
	}
	if res.Next, err = idOf(&arr[0]); err != nil {
		return res, err
	}
	if args.JustID {
		res.Entries, err = idEntries(&arr[1])
	} else {
		res.Entries, err = entries(&arr[1])
	}
	if err != nil {
		return res, err
	}
	if len(arr) > 2 { // Redis 7: the deleted IDs
		for _, d := range vals(&arr[2]) {
			id, err := idOf(&d)
			if err != nil {
				return res, err
			}
			res.Deleted = append(res.Deleted, id)
		}
	}
	return res, nil
}

func (b *base) autoClaimCmd(stream, group, consumer string, minIdle time.Duration, start string, args xstream.AutoClaimArgs) (rueidis.Completed, error) {
	var none rueidis.Completed
	if err := checkDuration("min idle", minIdle); err != nil {
		return none, err
	}
	count := args.Count
	if count < 0 || count > autoClaimMaxCount {
		return none, errorf(xstream.ErrInvalidArgument, "count must be between 0 and %d, got %d", autoClaimMaxCount, count)
	}
	if count == 0 {
		count = 100
	}
	from, err := parseBound(start, false)
	if err != nil {
		return none, err
	}
	cmd := b.c.B().Arbitrary("XAUTOCLAIM").Keys(stream).Args(group, consumer, itoa(minIdle.Milliseconds()), from.String(), "COUNT", strconv.Itoa(count))
	if args.JustID {
		cmd = cmd.Args("JUSTID")
	}
	return cmd.Build(), nil
}

func (b *base) Groups(ctx context.Context, stream string) ([]xstream.GroupInfo, error) {
	m, err := b.c.Do(ctx, b.c.B().Arbitrary("XINFO", "GROUPS").Keys(stream).ReadOnly()).ToMessage()
	if err != nil {
		return nil, mapErr(err)
	}
	arr, err := m.ToArray()
	if err != nil || len(arr) == 0 {
		return nil, err
	}
	out := make([]xstream.GroupInfo, len(arr))
	for i := range arr {
		f := newInfo(&arr[i])
		out[i] = groupProgress(f)
		out[i].Consumers = int(f.int("consumers"))
		out[i].Pending = f.int("pending")
		// xstream's server lists a group's dead-letter policy (XGROUPCFG);
		// Redis has none, and these stay zero.
		out[i].DeadLetter = xstream.DeadLetterPolicy{MaxDeliveries: f.int("max-deliveries"), Stream: f.str("dead-letter-stream")}
		out[i].DeadLettered = f.int("dead-lettered")
		if f.err != nil {
			return nil, f.err
		}
	}
	return out, nil
}

// groupProgress reads the fields of a group that XINFO GROUPS and XINFO
// STREAM FULL share. entries-read and lag (Redis 7) are unknown when nil
// or absent.
func groupProgress(f *info) xstream.GroupInfo {
	g := xstream.GroupInfo{Name: f.str("name"), LastDeliveredID: f.id("last-delivered-id")}
	g.EntriesRead, g.EntriesReadKnown = f.optInt("entries-read")
	g.Lag, g.LagKnown = f.optInt("lag")
	return g
}

func (b *base) Consumers(ctx context.Context, stream, group string) ([]xstream.ConsumerInfo, error) {
	m, err := b.c.Do(ctx, b.c.B().Arbitrary("XINFO", "CONSUMERS").Keys(stream).Args(group).ReadOnly()).ToMessage()
	if err != nil {
		return nil, mapErr(err)
	}
	arr, err := m.ToArray()
	if err != nil || len(arr) == 0 {
		return nil, err
	}
	out := make([]xstream.ConsumerInfo, len(arr))
	for i := range arr {
		f := newInfo(&arr[i])
		out[i] = xstream.ConsumerInfo{Name: f.str("name"), Pending: f.int("pending"), Idle: ms(f.int("idle"))}
		if inactive, ok := f.optInt("inactive"); ok && inactive >= 0 { // Redis 7.2
			out[i].Inactive, out[i].InactiveKnown = ms(inactive), true
		}
		if f.err != nil {
			return nil, f.err
		}
	}
	return out, nil
}
