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
// Add many entries at once, under one lock and one clock reading, as that
// many Adds would add them:
//
//	ids, err := s.AddBatch(xstream.AddArgs{}, batch...) // batch is a [][]xstream.Field
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
// # Durability
//
// Open keeps a DB in a directory, so that it survives restarts and crashes;
// NewDB stays in memory:
//
//	db, err := xstream.Open(dir, xstream.WithSync(xstream.SyncAlways))
//	defer db.Close()
//
// Every change is recorded in a log as it is applied and replayed at the
// next Open; Snapshot (also taken by itself as the log grows) writes the
// whole state and drops the log behind it. The sync policy (SyncAlways,
// SyncEverySecond, SyncNo: Redis's appendfsync levels) says what a crash
// can lose. Backup and Restore copy a DB. Sharded streams made by
// DB.CreateShardedStream are durable too. When the disk fails, calls that
// would change the DB fail with ErrLogFailed until the log can be written
// again, which the DB retries by itself (DB.Err says what a program must
// know). After Close every call fails with ErrClosed.
//
// # One API, several engines
//
// Engine is the DB-level API as an interface, context first on every
// call. Local(db) is the in-process engine; the module
// github.com/xstreamgo/xstream/xredis puts the same interface on Redis,
// Valkey and Redis Cluster, so a program moves by changing one
// constructor:
//
//	var e xstream.Engine = xstream.Local(xstream.NewDB())
//	id, err := e.Add(ctx, "orders", xstream.AddArgs{}, fields...)
//
// Capabilities not every engine has (Nack, DeleteEx and AckDel,
// MoveDeadLetters, SetDeadLetterPolicy, SetIdempotence and the idempotent
// Add of AddArgs.Idempotency) are optional interfaces, reached
// through the functions of the same names, which fail with
// errors.ErrUnsupported elsewhere. ShardedEngine is the same for one
// sharded stream (puts, resharding, iterators as strings, the
// parent-before-child reader, sharded groups); LocalSharded(ss) is its
// in-process implementation. The package xstreamtest holds the
// conformance suites (Run, RunSharded) that every implementation passes.
//
// # Consumer groups
//
// A consumer group shares a stream among consumers as Redis's do: each
// entry is delivered to one consumer, stays in the group's pending entries
// list (PEL) until acknowledged, and can be claimed by another consumer
// when its owner stops:
//
//	s.CreateGroup("workers", "0", xstream.GroupOptions{})
//	es, err := s.ReadGroup(ctx, "workers", "alice", ">", xstream.ReadGroupArgs{Count: 10, Block: time.Second})
//	n, err := s.AckIDs("workers", es[0].ID) // or Ack("workers", "1-0"), with strings
//	res, err := s.AutoClaim("workers", "reaper", time.Minute, "0-0", xstream.AutoClaimArgs{})
//
// Pending, PendingRange, Claim, Nack, AckDel, DeleteEx, Groups and
// Consumers complete the set (each operation on a list of IDs has an
// ID-typed form beside its string one: AckIDs, ClaimIDs, NackIDs,
// AckDelIDs, DeleteIDs, DeleteExIDs); MoveDeadLetters moves entries delivered too
// often to a dead-letter stream. PEL operations are O(log P) in the number
// of pending entries.
//
// A group of a DB's stream can also dead-letter by itself, as NATS
// JetStream's max_deliver and SQS's redrive policy do: with a
// DeadLetterPolicy (GroupOptions.DeadLetter, or SetDeadLetterPolicy), a
// Claim, AutoClaim or history read that would deliver an entry more than
// MaxDeliveries times moves it to the named dead-letter stream instead,
// with the fields MoveDeadLetters writes, and takes it out of the PEL, in
// one atomic step; GroupInfo.DeadLettered counts them:
//
//	db.CreateGroup("jobs", "workers", "0", xstream.GroupOptions{
//		DeadLetter: xstream.DeadLetterPolicy{MaxDeliveries: 5, Stream: "jobs.dead"},
//	})
//
// # Sharded streams
//
// A ShardedStream follows Amazon Kinesis Data Streams: its shards are
// streams, a record goes to the OPEN shard whose hash key range holds the
// MD5 of its partition key, and SplitShard, MergeShards and
// UpdateShardCount reshard it while old records stay readable in CLOSED
// parent shards until retention expires them. GetShardIterator and
// GetRecords read one shard; a ShardReader reads the whole stream, parents
// before children, so that each partition key's records come in the order
// they were put:
//
//	ss, err := xstream.NewShardedStream(xstream.ShardedArgs{Shards: 4})
//	res, err := ss.Put("sensor-1234", xstream.PutArgs{}, fields...)
//	err = ss.SplitShard(res.ShardID, newStartingHashKey)
//	r, err := ss.NewReader()
//	recs, err := r.Read(ctx, xstream.ReadArgs{Count: 100, Block: time.Second})
//
// Workers share a sharded stream as the Kinesis Client Library's do: a
// Worker of an application takes leases on shards from a LeaseTable
// (NewLeaseTable, DB.LeaseTable, or the Redis engine's), runs a
// ShardProcessor per shard it holds, renews its leases, takes over those
// of dead workers, balances them with the other workers, processes a
// child shard only after its ancestors were checkpointed at their end,
// and refuses checkpoints (ErrLeaseLost) once it lost a lease:
//
//	leases, err := db.LeaseTable("sensors", "billing")
//	w, err := xstream.NewWorker(xstream.LocalSharded(ss), leases, newProcessor, xstream.WorkerOptions{})
//	err = w.Run(ctx) // until ctx ends
//
// # Storage and cost
//
// Entries live in blocks of up to 100 entries in one pointer-free byte
// slice, with the field names stored once per block and IDs stored as small
// deltas, as Redis stores them in listpacks, and values made of digits and
// the characters + , - . / : (numbers, times, dates) packed two characters
// to a byte, byte for byte. So an entry takes less memory than in Redis
// (13.6 bytes for two values of four characters, against Redis's 21), and
// the garbage collector has next to nothing to scan however long a stream
// grows. Add is O(1) amortized; finding the start of a range is
// O(log N); Len is O(1). A block ends where Redis ends a node
// (stream-node-max-entries, and stream-node-max-bytes counted as a
// listpack), so approximate trims remove what Redis's remove; WithNodeSize
// and SetNodeSize change those bounds. Stream.Stats and DB.Stats report
// what a stream did (entries added, read, delivered, acked, claimed,
// dead-lettered, trimmed, deleted) and its sizes, for monitoring.
//
// # Concurrency
//
// Every exported method is safe for concurrent use. Each stream has its own
// lock; a DB's lock guards only its table of names. Blocking reads take a
// context.Context, hold no lock while they wait, and leave no goroutine
// behind.
//
// Locks are taken in one order, so that no two calls wait for each other:
//
//	DB → Stream
//	Stream → Stream (a dead-letter move: the stream made first, first)
//	ShardReader → ShardedStream → Stream
//	then the locks of waiters (a sharded stream's waitMu, ...) last
//
// A function whose name ends in Locked needs the lock of its receiver (or
// of the stream it works on) held by its caller.
//
// # Layers
//
// Storage (internal/store: IDs, blocks of entries, the B-tree of pending
// entries) → Stream (entries, with ops.go the one home of every change to
// them) → consumer groups and their PELs (groupops.go) → sharded streams
// (shardops.go). Public methods check arguments and decide; only the
// operations of those three files change state.
//
// # Errors
//
// Every error wraps one of the sentinel errors (ErrInvalidID,
// ErrIDTooSmall, …) so it can be tested with errors.Is; its message says
// what was wrong and which value was given. A call that fails changes
// nothing.
package xstream
