package xstream

import "github.com/xstreamgo/xstream/internal/store"

// Node size: where a stream's storage blocks end, by Redis's rule for
// its listpack nodes (stream-node-max-entries, stream-node-max-bytes).
// Approximate trimming (Approx) removes whole blocks, so these settings
// decide what it removes, as they do in Redis. The defaults are Redis's:
// 100 entries and 4096 bytes.

// nodeLimits checks a node size and returns it as the storage's limits:
// 0 means no limit, as in Redis.
func nodeLimits(maxEntries, maxBytes int) (store.Limits, error) {
	if maxEntries < 0 || maxBytes < 0 {
		return store.Limits{}, errorf(ErrInvalidArgument, "node size must not be negative, got %d entries and %d bytes", maxEntries, maxBytes)
	}
	if maxEntries > 1<<30 || maxBytes > 1<<30 {
		return store.Limits{}, errorf(ErrInvalidArgument, "node size of %d entries and %d bytes is over the limit of 2^30", maxEntries, maxBytes)
	}
	l := store.Limits{MaxEntries: int32(maxEntries), MaxBytes: int32(maxBytes)}
	if maxEntries == 0 {
		l.MaxEntries = -1
	}
	if maxBytes == 0 {
		l.MaxBytes = -1
	}
	return l, nil
}

// WithNodeSize makes a Stream or DB end a block as Redis ends a node with
// stream-node-max-entries maxEntries and stream-node-max-bytes maxBytes
// (0: no limit): at maxEntries entries, or when the block's size as a
// Redis listpack plus the next entry's names and values would reach
// maxBytes. (A block also ends before 64 KiB in its own format.) Invalid sizes (negative, or over 2^30) are ignored; use
// SetNodeSize to see the error.
func WithNodeSize(maxEntries, maxBytes int) Option {
	return Option{func(c *config) {
		if l, err := nodeLimits(maxEntries, maxBytes); err == nil {
			c.limits = l
		}
	}}
}

// SetNodeSize sets the node size of the stream's blocks from now on (see
// WithNodeSize): the block taking new entries fills up to the new size,
// and the full ones stay as they are, as Redis's nodes do when the
// settings change. It fails with ErrInvalidArgument for a
// negative size, changing nothing, and with ErrClosed on a closed DB.
// O(1).
func (s *Stream) SetNodeSize(maxEntries, maxBytes int) error {
	l, err := nodeLimits(maxEntries, maxBytes)
	if err != nil {
		return err
	}
	if err := s.cfg.gate.read(); err != nil {
		return err
	}
	s.mu.Lock()
	s.st.SetLimits(l)
	s.mu.Unlock()
	return nil
}

// SetNodeSize sets the node size of every stream of the DB, and of the
// streams it creates later (see Stream.SetNodeSize), as Redis's CONFIG
// SET stream-node-max-entries does for every key. Sharded streams keep
// theirs. The setting is not kept on disk: a durable DB opens with the
// options given to Open. It fails with ErrClosed on a closed DB.
// O(streams).
func (db *DB) SetNodeSize(maxEntries, maxBytes int) error {
	l, err := nodeLimits(maxEntries, maxBytes)
	if err != nil {
		return err
	}
	if err := db.gate.read(); err != nil {
		return err
	}
	db.mu.Lock()
	db.limits, db.limitsSet = l, true
	db.mu.Unlock()
	for _, s := range db.allStreams() {
		s.mu.Lock()
		s.st.SetLimits(l)
		s.mu.Unlock()
	}
	return nil
}
