// Package xstream is an in-process streaming log with the semantics of
// Redis Streams.
//
// A Stream is an append-only log of entries. Each entry has an ID, a
// millisecond time and a sequence number written "ms-seq", and an ordered
// list of field/value pairs. IDs only grow: an auto ID is the larger of the
// clock's millisecond and the last ID's, with the sequence counting entries
// within one millisecond.
//
// # A short tour
//
// Create a stream and add entries:
//
//	s := xstream.NewStream()
//	id, err := s.Add(xstream.AddArgs{}, xstream.Fields("sensor-id", "1234", "temperature", "19.8")...)
//
// Query by ID range; bounds take Redis's forms: "-" and "+" for the ends, a
// bare millisecond time, "ms-seq", and "(" for an exclusive bound:
//
//	window, err := s.Range("1700000000000", "1700000060000", 0) // one minute
//	page, err := s.Range("("+last.String(), "+", 100)          // the next page
//	newest, err := s.RevRange("+", "-", 10)
//
// Wait for new entries, as a tail -f does:
//
//	es, err := s.Read(ctx, "$", xstream.ReadArgs{Block: xstream.BlockForever})
//
// Keep the stream bounded, on each Add or at any time:
//
//	s.Add(xstream.AddArgs{Trim: xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 1000, Approx: true}}, fields...)
//	s.Trim(xstream.TrimArgs{Strategy: xstream.TrimMinID, MinID: "1700000000000"})
//
// A DB holds named streams, as one Redis database does, and reads several
// of them at once:
//
//	db := xstream.NewDB()
//	db.Add("temperatures", xstream.AddArgs{}, fields...)
//	res, err := db.Read(ctx, xstream.ReadArgs{Count: 10, Block: time.Second}, "temperatures", "0", "alerts", "$")
//
// # Storage and cost
//
// Entries live in blocks of up to 100 entries in one pointer-free byte
// slice, with the field names stored once per block and IDs stored as small
// deltas, as Redis stores them in listpacks. So memory per entry is close to
// Redis's, and the garbage collector has next to nothing to scan however long
// a stream grows. Add is O(1) amortized; finding the start of a range is
// O(log N); Len is O(1).
//
// # Concurrency
//
// Every exported method is safe for concurrent use. Each stream has its own
// lock; a DB's lock guards only its table of names. Blocking reads take a
// context.Context, hold no lock while they wait, and leave no goroutine
// behind.
//
// # Errors
//
// Every error wraps one of the sentinel errors (ErrInvalidID,
// ErrIDTooSmall, …) so it can be tested with errors.Is; its message says
// what was wrong and which value was given. A call that fails changes
// nothing.
package xstream
