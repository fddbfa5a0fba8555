package xstream

import "iter"

// scanBatch is how many entries Scan decodes per lock hold.
const scanBatch = 64

// noCopyBatch is how many entries ScanNoCopy decodes per lock hold: more
// than Scan, since its buffer is reused rather than allocated per batch.
const noCopyBatch = 1024

// Scan returns an iterator over the entries with start <= ID <= end in
// ascending order, for long scans that should not build one big slice.
// Bounds take the forms Range accepts; a bad bound is returned as an error
// before any iteration. The iterator reads the stream in batches, holding
// the stream's read lock only while it decodes a batch, so the loop body
// may call any method of the stream; it sees entries added during the scan
// when their IDs fall in the range. Scan fails with ErrClosed on a closed
// DB. In a durable DB under SyncAlways it yields a batch only once the
// batch is on disk; when the log fails meanwhile (DB.Err is then not nil)
// the iteration ends early, never yielding what a crash could lose.
func (s *Stream) Scan(start, end string) (iter.Seq2[ID, []Field], error) {
	lo, hi, empty, err := parseRange(start, end)
	if err != nil {
		return nil, err
	}
	if err := s.cfg.gate.read(); err != nil {
		return nil, err
	}
	return func(yield func(ID, []Field) bool) {
		if empty {
			return
		}
		for {
			c := getCollector()
			s.mu.RLock()
			s.collectRangeLocked(c, lo, hi, scanBatch, false)
			if s.runlock() != nil {
				putCollector(c)
				return // not durable: see Scan
			}
			batch := c.entries()
			putCollector(c)
			s.ctr.read.Add(int64(len(batch)))
			for _, e := range batch {
				if !yield(e.ID, e.Fields) {
					return
				}
			}
			if len(batch) < scanBatch {
				return
			}
			next, ok := batch[len(batch)-1].ID.Next()
			if !ok || hi.Less(next) {
				return
			}
			lo = next
		}
	}, nil
}

// ScanNoCopy is Scan without copies, of at most count entries (0: no
// limit; a negative count is an ErrInvalidArgument error) in either order
// (rev: from end down to start). It decodes batches of 1,024 entries, each one under the
// stream's read lock and so one atomic view, into a buffer it reuses for
// the next,
// and the []Field and the strings it yields point into that buffer: they
// are valid only until the loop body returns, so copy what you keep
// (strings.Clone). In exchange a scan of any length allocates nothing
// per entry or batch once its buffer has grown to a batch's size. It
// suits code that writes each entry somewhere at once, such as a reply
// or a file. Like Scan it holds the lock only while it decodes a batch,
// so the loop body may call any method of the stream, and it fails with
// ErrClosed and ends early when the log fails as Scan does.
func (s *Stream) ScanNoCopy(start, end string, count int, rev bool) (iter.Seq2[ID, []Field], error) {
	if count < 0 {
		return nil, errorf(ErrInvalidArgument, "count must be >= 0, got %d", count)
	}
	from, to, empty, err := parseRange(start, end)
	if err != nil {
		return nil, err
	}
	if err := s.cfg.gate.read(); err != nil {
		return nil, err
	}
	return func(yield func(ID, []Field) bool) {
		if empty {
			return
		}
		lo, hi := from, to // the closure keeps its bounds by value
		c := getCollector()
		defer putCollector(c)
		for left := count; ; {
			batch := noCopyBatch
			if count > 0 {
				batch = min(batch, left)
			}
			c.reset()
			c.NoSeal = true // one buffer, reused: view reads it
			s.mu.RLock()
			s.collectRangeLocked(c, lo, hi, batch, rev)
			if s.runlock() != nil {
				return // not durable: see Scan
			}
			n := len(c.IDs)
			s.ctr.read.Add(int64(n))
			spans := c.Spans
			for i, id := range c.IDs {
				nf := int(c.NF[i])
				c.fields = c.fields[:0]
				for k := range nf {
					c.fields = append(c.fields, Field{c.view(spans[2*k]), c.view(spans[2*k+1])})
				}
				spans = spans[2*nf:]
				if !yield(id, c.fields) {
					return
				}
			}
			if left -= n; n < batch || (count > 0 && left == 0) {
				return
			}
			var ok bool
			if last := c.IDs[n-1]; rev {
				hi, ok = last.Prev()
				ok = ok && !hi.Less(lo)
			} else {
				lo, ok = last.Next()
				ok = ok && !hi.Less(lo)
			}
			if !ok {
				return
			}
		}
	}, nil
}
