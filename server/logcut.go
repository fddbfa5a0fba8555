package server

import "github.com/xstreamgo/xstream"

// Log cuts at start. Opening a durable database cuts off the end of its
// log when it is not whole records (a write a crash cut short), and
// xstream.DB.LogCuts says what it cut. Redis, loading an AOF cut short
// with aof-load-truncated (its default), logs "!!! Warning: short read
// while loading the AOF file ...", truncates the file and loads the rest;
// the server logs a line for each cut as it opens the database, and INFO
// persistence counts the bytes cut in aof_last_load_truncated_bytes, a
// field of its own (Redis has none for it).

// logCuts logs what opening durable database i, db, cut off its log.
func (s *Server) logCuts(i int, db *xstream.DB) {
	for _, c := range db.LogCuts() {
		args := []any{"db", i, "file", c.File, "offset", c.Offset, "bytes", c.Bytes, "reason", c.Reason}
		if c.MovedTo != "" {
			args = append(args, "moved_to", c.MovedTo)
		}
		s.opts.Logger.Warn("xstream server: the end of a log was not whole records (a write cut short by a crash, or damaged): cut off, the rest loaded", args...)
	}
}

// cutBytes returns the bytes that opening the durable databases cut off
// their logs.
func (s *Server) cutBytes() int64 {
	var n int64
	for i := range numDBs {
		for _, c := range s.db(i).LogCuts() {
			n += c.Bytes
		}
	}
	return n
}
