package xstream

import "iter"

// scanBatch is how many entries Scan decodes per lock hold.
const scanBatch = 64

// Scan returns an iterator over the entries with start <= ID <= end in
// ascending order, for long scans that should not build one big slice.
// Bounds take the forms Range accepts; a bad bound is returned as an error
// before any iteration. The iterator reads the stream in batches, holding
// the stream's read lock only while it decodes a batch, so the loop body
// may call any method of the stream; it sees entries added during the scan
// when their IDs fall in the range.
func (s *Stream) Scan(start, end string) (iter.Seq2[ID, []Field], error) {
	lo, hi, empty, err := parseRange(start, end)
	if err != nil {
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
			s.runlock()
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
