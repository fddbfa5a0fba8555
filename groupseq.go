package xstream

import (
	"iter"
	"time"
)

// Iterators over a consumer group's pending entries: the loops over
// AutoClaim's cursor and over PendingRange's pages, written once.

// pendingSeqPage is how many rows PendingRangeSeq reads per lock hold.
const pendingSeqPage = 100

// AutoClaimSeq returns an iterator over the entries AutoClaim claims when
// its cursor is followed from start to the end of the PEL: it calls
// AutoClaim with args (args.Count entries per call, 100 when 0), yields
// what each call claimed, and goes on from the call's Next until Next is
// 0-0, or until the loop breaks (what was claimed stays claimed; the rest
// is left alone). The stream's lock is held only inside each call, never
// while the loop body runs, which may call any method of the stream.
// Pending entries whose message is gone are removed from the PEL, as by
// AutoClaim, and not yielded (AutoClaim reports them in Deleted).
//
// A bad argument (as for AutoClaim) is yielded as the first and only
// error, before anything is claimed; an error of a later call (ErrNoGroup
// once the group is destroyed) is yielded and ends the iteration. Each
// call costs what AutoClaim does: O((log P + log N) × entries examined).
//
//	for e, err := range s.AutoClaimSeq("workers", "reaper", time.Minute, "0", xstream.AutoClaimArgs{}) {
//		if err != nil {
//			return err
//		}
//		process(e)
//	}
func (s *Stream) AutoClaimSeq(group, consumer string, minIdle time.Duration, start string, args AutoClaimArgs) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		cur, count, err := autoClaimCheck(minIdle, start, args)
		for err == nil {
			var res AutoClaimResult
			if res, err = s.autoClaim(group, consumer, minIdle, cur, count, args.JustID); err != nil {
				break
			}
			for _, e := range res.Entries {
				if !yield(e, nil) {
					return
				}
			}
			if res.Next.IsZero() {
				return
			}
			cur = res.Next
		}
		yield(Entry{}, err)
	}
}

// PendingRangeSeq returns an iterator over the rows PendingRange(group,
// args) would return, in ID order: those of the whole group or, with
// args.Consumer, of one consumer; args.Count caps the rows yielded (0: no
// cap). It reads the PEL 100 rows at a time, holding the stream's read
// lock only while it reads a page, so the loop body may call any method
// of the stream (Ack, Claim, ...); rows added or removed meanwhile after
// the last one yielded are seen or not as they are when their page is
// read, and idle times are those of the moment their page was read.
//
// A bad argument (as for PendingRange) is yielded as the first and only
// error; ErrNoGroup (for a group missing at the start, or destroyed
// meanwhile) is yielded and ends the iteration. An unknown consumer
// yields nothing. Each page costs O(log P + rows), or O(log P + entries
// scanned) with MinIdle.
func (s *Stream) PendingRangeSeq(group string, args PendingArgs) iter.Seq2[PendingEntry, error] {
	return func(yield func(PendingEntry, error) bool) {
		lo, hi, empty, err := args.check()
		if err != nil {
			yield(PendingEntry{}, err)
			return
		}
		left := args.Count
		for {
			n := pendingSeqPage
			if left > 0 {
				n = min(n, left)
			}
			rows, err := s.pendingPage(group, args, lo, hi, empty, n)
			if err != nil {
				yield(PendingEntry{}, err)
				return
			}
			for _, r := range rows {
				if !yield(r, nil) {
					return
				}
			}
			if len(rows) < n {
				return
			}
			if left > 0 {
				if left -= len(rows); left == 0 {
					return
				}
			}
			next, ok := rows[len(rows)-1].ID.Next()
			if !ok || hi.Less(next) {
				return
			}
			lo = next
		}
	}
}
