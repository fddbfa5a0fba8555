package xredis

import (
	"context"
	"strconv"

	"github.com/redis/rueidis"
	"github.com/xstreamgo/xstream"
)

// The optional capabilities: XDELEX and XACKDEL (Redis 8.2), XNACK (Redis
// 8.8), and dead letters, which the engine moves itself.

// probeGroup builds XPENDING key group - + 0: nothing to list, but
// NOGROUP when the stream or the group is missing.
func (b *base) probeGroup(stream, group string) rueidis.Completed {
	return b.c.B().Arbitrary("XPENDING").Keys(stream).Args(group, "-", "+", "0").ReadOnly()
}

func nackMode(m xstream.NackMode) (string, error) {
	switch m {
	case xstream.NackSilent:
		return "SILENT", nil
	case xstream.NackFail:
		return "FAIL", nil
	case xstream.NackFatal:
		return "FATAL", nil
	}
	return "", errorf(xstream.ErrInvalidArgument, "unknown NackMode %d", m)
}

func (b *base) nack(ctx context.Context, stream, group string, mode xstream.NackMode, ids []string, args xstream.NackArgs) (int64, error) {
	word, err := nackMode(mode)
	if err == nil && args.RetryCount != nil && *args.RetryCount < 0 {
		err = errorf(xstream.ErrInvalidArgument, "RetryCount must be >= 0, got %d", *args.RetryCount)
	}
	var parsed []string
	if err == nil {
		parsed, err = parseIDs(ids)
	}
	if err != nil {
		return 0, b.orNoGroup(ctx, stream, group, err)
	}
	if len(parsed) == 0 {
		return 0, b.groupErr(ctx, b.c.Do(ctx, b.probeGroup(stream, group)).Error(), group, stream)
	}
	cmd := b.c.B().Arbitrary("XNACK").Keys(stream).Args(group, word, "IDS", strconv.Itoa(len(parsed))).Args(parsed...)
	if args.RetryCount != nil {
		cmd = cmd.Args("RETRYCOUNT", itoa(*args.RetryCount))
	}
	if args.Force {
		cmd = cmd.Args("FORCE")
	}
	n, err := b.c.Do(ctx, cmd.Build()).AsInt64()
	if err != nil {
		return 0, b.groupErr(ctx, err, group, stream)
	}
	return n, nil
}

func policyArgs(p xstream.DeletePolicy) ([]string, error) {
	switch p {
	case xstream.KeepRef:
		return nil, nil
	case xstream.DelRef, xstream.Acked:
		return []string{policyWord(p)}, nil
	}
	return nil, errorf(xstream.ErrInvalidArgument, "unknown DeletePolicy %d", p)
}

// deleteEx sends XDELEX. A missing stream answers -1 for each ID, before
// the IDs are looked at (see sendIDs).
func (b *base) deleteEx(ctx context.Context, stream string, policy xstream.DeletePolicy, ids []string) ([]xstream.DeleteResult, error) {
	words, err := policyArgs(policy)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return []xstream.DeleteResult{}, nil
	}
	send, perr := sendIDs(ids)
	cmd := b.c.B().Arbitrary("XDELEX").Keys(stream).Args(words...).Args("IDS", strconv.Itoa(len(send))).Args(send...)
	res, err := b.c.Do(ctx, cmd.Build()).AsIntSlice()
	if err != nil {
		return nil, invalidIDs(perr, err)
	}
	return deleteResults(res), nil
}

func deleteResults(res []int64) []xstream.DeleteResult {
	out := make([]xstream.DeleteResult, len(res))
	for i, r := range res {
		out[i] = xstream.DeleteResult(r)
	}
	return out
}

// ackDel sends XACKDEL. A missing stream or group answers -1 for each
// ID, before the IDs are looked at (see sendIDs).
func (b *base) ackDel(ctx context.Context, stream, group string, policy xstream.DeletePolicy, ids []string) ([]xstream.DeleteResult, error) {
	words, err := policyArgs(policy)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return []xstream.DeleteResult{}, nil
	}
	send, perr := sendIDs(ids)
	cmd := b.c.B().Arbitrary("XACKDEL").Keys(stream).Args(group).Args(words...).Args("IDS", strconv.Itoa(len(send))).Args(send...)
	res, err := b.c.Do(ctx, cmd.Build()).AsIntSlice()
	if err != nil {
		return nil, invalidIDs(perr, err)
	}
	return deleteResults(res), nil
}

// deadLetterPage is how many pending entries MoveDeadLetters lists at a
// time.
const deadLetterPage = 1000

// MoveDeadLetters moves dead letters as the core's Stream.MoveDeadLetters
// does, on the client side: it lists the group's PEL with XPENDING (a
// page at a time), reads the messages of the entries delivered more than
// maxDeliveries times with XRANGE, adds each to the stream to (XADD, in
// ID order, with the core's dead-letter fields first) and then
// acknowledges those it added (XACK). The guarantee is the core's: at
// least once, as an entry is added before it is acknowledged. If an add
// fails, the entries added are still acknowledged and returned, with the
// first error; the others stay pending. The steps are separate commands:
// a concurrent call may move an entry twice.
func (b *base) MoveDeadLetters(ctx context.Context, stream, group string, maxDeliveries int64, to string, count int) ([]xstream.DeadLetter, error) {
	var err error
	switch {
	case to == stream:
		err = errorf(xstream.ErrInvalidArgument, "the dead-letter stream %q is the source stream", stream)
	case maxDeliveries < 1:
		err = errorf(xstream.ErrInvalidArgument, "MaxDeliveries must be >= 1, got %d", maxDeliveries)
	case count < 0:
		err = errorf(xstream.ErrInvalidArgument, "count must be >= 0, got %d", count)
	}
	if err != nil {
		return nil, b.orNoGroup(ctx, stream, group, err)
	}

	// The candidates, in ID order.
	var cands []xstream.DeadLetter
	start := "-"
	for count == 0 || len(cands) < count {
		m, err := b.c.Do(ctx, b.c.B().Arbitrary("XPENDING").Keys(stream).Args(group, start, "+", strconv.Itoa(deadLetterPage)).ReadOnly()).ToMessage()
		if err != nil {
			return nil, b.groupErr(ctx, err, group, stream)
		}
		rows, err := pendingRows(&m)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if r.Deliveries > maxDeliveries && (count == 0 || len(cands) < count) {
				cands = append(cands, xstream.DeadLetter{ID: r.ID, Consumer: r.Consumer, Deliveries: r.Deliveries})
			}
		}
		if len(rows) < deadLetterPage {
			break
		}
		next, ok := rows[len(rows)-1].ID.Next()
		if !ok {
			break
		}
		start = next.String()
	}
	if len(cands) == 0 {
		return nil, nil
	}

	// Their messages: none for an entry whose message was deleted.
	reads := make(rueidis.Commands, len(cands))
	for i, d := range cands {
		id := d.ID.String()
		reads[i] = b.c.B().Arbitrary("XRANGE").Keys(stream).Args(id, id).ReadOnly()
	}
	adds := make(rueidis.Commands, len(cands))
	for i, r := range b.c.DoMulti(ctx, reads...) {
		m, err := r.ToMessage()
		if err != nil {
			return nil, mapErr(err)
		}
		es, err := entries(&m)
		if err != nil {
			return nil, err
		}
		d := cands[i]
		cmd := b.c.B().Arbitrary("XADD").Keys(to).Args("*",
			xstream.DeadLetterStreamField, stream,
			xstream.DeadLetterGroupField, group,
			xstream.DeadLetterIDField, d.ID.String(),
			xstream.DeadLetterConsumerField, d.Consumer,
			xstream.DeadLetterDeliveriesField, itoa(d.Deliveries))
		if len(es) == 1 {
			for _, f := range es[0].Fields {
				cmd = cmd.Args(f.Name, f.Value)
			}
		}
		adds[i] = cmd.Build()
	}

	// Add, then acknowledge what was added.
	var moved []xstream.DeadLetter
	var firstErr error
	for i, r := range b.c.DoMulti(ctx, adds...) {
		s, err := r.ToString()
		if err == nil {
			cands[i].DeadID, err = xstream.ParseID(s)
		}
		if err != nil {
			if firstErr == nil {
				firstErr = mapErr(err)
			}
			continue
		}
		moved = append(moved, cands[i])
	}
	if len(moved) > 0 {
		ack := b.c.B().Arbitrary("XACK").Keys(stream).Args(group)
		for _, d := range moved {
			ack = ack.Args(d.ID.String())
		}
		if err := b.c.Do(ctx, ack.Build()).Error(); err != nil && firstErr == nil {
			firstErr = mapErr(err)
		}
	}
	return moved, firstErr
}
