package xstream

import "iter"

// shardScanBatch is how many records ScanShard reads per GetRecords.
const shardScanBatch = 256

// ScanShard returns an iterator over the records of shard shardID from the
// position args gives (as GetShardIterator takes it), in order. It ends at
// the end of a CLOSED shard, or after the last record of an OPEN shard at
// the time it gets there. It reads in batches and holds no lock while
// yielding, so the loop body may call any method of the stream. An error —
// of GetShardIterator, or of a GetRecords on the way (the shard expired, or
// retention dropped the records at the position) — is yielded once, with a
// zero Record, and ends the iteration.
func (ss *ShardedStream) ScanShard(shardID string, args IteratorArgs) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		it, err := ss.GetShardIterator(shardID, args)
		if err != nil {
			yield(Record{}, err)
			return
		}
		for it != nil {
			res, err := ss.GetRecords(it, shardScanBatch)
			if err != nil {
				yield(Record{}, err)
				return
			}
			for _, r := range res.Records {
				if !yield(r, nil) {
					return
				}
			}
			if len(res.Records) == 0 {
				return
			}
			it = res.NextShardIterator
		}
	}
}
