// Package xredis is an xstream.Engine on a real Redis, Valkey or Redis
// Cluster server, or on xstream's own Redis-protocol server (module
// github.com/xstreamgo/xstream/server): the program written against
// xstream.Engine for the in-process DB (xstream.Local) runs on it
// unchanged, differing in one constructor.
//
// # A tour
//
// Connect with the addresses of a standalone server or of any nodes of a
// cluster (rueidis, the client underneath, finds the others):
//
//	e, err := xredis.Dial(ctx, "127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002")
//	if err != nil { ... }
//	defer e.Close()
//
// or with rueidis's options (TLS, a password, a client name, ...):
//
//	e, err := xredis.New(ctx, rueidis.ClientOption{InitAddress: addrs, Password: pw})
//
// or through a client the program already has, which Close leaves open:
//
//	e, err := xredis.NewWithClient(ctx, client)
//
// Then use it as any xstream.Engine:
//
//	id, err := e.Add(ctx, "orders", xstream.AddArgs{}, xstream.Fields("item", "book")...)
//	err = e.CreateGroup(ctx, "orders", "billing", "0", xstream.GroupOptions{})
//	out, err := e.ReadGroup(ctx, "billing", "w1",
//		xstream.ReadGroupArgs{Count: 10, Block: xstream.BlockForever}, "orders", ">")
//	n, err := e.Ack(ctx, "orders", "billing", out[0].Entries[0].ID.String())
//
// Each call sends the Redis command of the same name (XADD, XRANGE,
// XREADGROUP, ...; see xstream.Engine) and decodes the reply from its raw
// arrays, so an entry keeps its fields in order, repeated names included,
// and its bytes as they were. Concurrent calls share connections:
// rueidis pipelines them, so 64 goroutines calling at once cost far less
// than 64 round trips each. Blocking reads run on connections of their
// own.
//
// # Behaving like Local
//
// The engine behaves as xstream.Local does wherever the server lets it
// (a randomized differential test checks that, call by call, against
// Redis 7.0, a Redis Cluster and xstream's server):
//
//   - Arguments that xstream gives a meaning of its own are checked on the
//     client side and sent in the form Redis reads the same way: a count
//     of 0 is no limit (Redis's COUNT 0 returns nothing), a negative count
//     is xstream.ErrInvalidArgument, IDs are decimal digits only, an
//     approximate trim has no cap unless Limit says so (Redis caps it at
//     100 nodes' worth), and Range's exclusive bounds are sent as
//     inclusive IDs.
//   - Redis's error replies map to the core's sentinels (NOGROUP is
//     xstream.ErrNoGroup, BUSYGROUP xstream.ErrGroupExists, the XADD ID
//     errors xstream.ErrZeroID, xstream.ErrIDTooSmall and
//     xstream.ErrStreamExhausted, "no such key" xstream.ErrNoStream, ...);
//     the error also wraps the *rueidis.RedisError. A NOGROUP for a
//     missing stream also matches xstream.ErrNoStream, as in the core.
//     Other Redis errors (WRONGTYPE, ...) come back as the client's
//     *rueidis.RedisError; context errors pass through unwrapped, and
//     connection errors wrapped in a sentinel that says whether the
//     command may have run (see Failover below).
//   - A missing stream behaves as in the core (see xstream.Engine): where
//     the core looks the stream up before it checks the arguments, the
//     engine asks the server whether the stream exists, on that error
//     path only.
//
// # Clusters and reads over several streams
//
// In a cluster every call on one stream goes to the stream's node, and
// the client follows MOVED and ASK redirections. Read and ReadGroup over
// several streams, which Redis answers with CROSSSLOT when the keys lie
// in different hash slots, send one command per hash slot (in one round
// trip per node) and merge the replies in the order the streams were
// given. Keys that share a {hash tag} share a slot.
//
// Ordering guarantee: the streams come back in the order given; each
// stream's entries are in ID order and are what one command read from
// that stream at one moment. Streams in different slots are read by
// different commands, so a result does not show them all at one single
// moment, as a one-command XREAD on a standalone server does, and a
// blocking read returns as soon as one slot gets entries, with what the
// others got by then.
//
// A ReadGroup over several slots first checks that every stream has the
// group, so that a missing group fails the call before anything is
// delivered.
//
// # Blocking reads
//
// A blocking Read or ReadGroup first looks without blocking. If nothing
// is there, it blocks on every slot at once, each on a connection of its
// own, with a BLOCK of at most one slice (DefaultBlockSlice, see
// WithBlockSlice) in a loop, so that a read that waits long or forever
// never depends on the server's timeout to end; its context ends it at
// any time. "$" is resolved once, before the read blocks, to the ID of the
// stream's last entry, so no entry added between two slices is missed;
// "+" (the last entry, Redis 7.4) is read with XREVRANGE on every server
// version.
//
// A blocked XREADGROUP that must end (its context is done, or another slot
// got entries first) is woken with CLIENT UNBLOCK and its reply is read:
// entries the server delivered meanwhile are returned rather than left
// pending unseen, as the core returns entries served at the moment the
// context ends. A server without CLIENT UNBLOCK has the connection closed
// instead, and such entries stay pending (they can be claimed); xstream's
// server serves it as Redis 7.0 does.
//
// # Failover
//
// When a node dies or a cluster fails over, the engine sorts the failure
// of each command by what it says about the command's effect, and retries
// what is safe to retry, with a backoff (10 ms doubling up to 200 ms),
// until the call's context ends (a call with a context that never ends,
// such as context.Background(), waits as long as the node is down: give
// calls a deadline where that matters):
//
//   - A command that did not run (the connection was refused, the cluster
//     has no node for the slot, or the server answered CLUSTERDOWN,
//     TRYAGAIN, LOADING, MASTERDOWN, READONLY or NOREPLICAS) is sent again,
//     whatever it is. When the context ends first, the error matches both
//     the context's error and ErrNotApplied.
//   - A command whose connection failed after it may have been sent (EOF,
//     connection reset, a timeout) is sent again when it is a read or an
//     idempotent write (XACK, the checkpoints' HSET); other writes (a put's
//     or an Add's XADD, scripts) fail at once with an error matching
//     ErrUnknownOutcome: it may or may not have happened.
//
// rueidis follows MOVED once its view of the cluster is refreshed (each
// failure refreshes it), so after a replica is promoted the commands of
// its slots go to it. The errors keep the client's error inside
// (errors.Is(err, io.EOF) and errors.As with a *net.OpError still work).
// A blocked ReadGroup whose connection fails is not retried (what the
// server delivered is pending); its error is sorted the same way. The
// retention pass that a sharded stream's calls run now and then is sent
// once, its failures dropped, so that a dead node holds up only the calls
// that need it.
//
// Redis replicates asynchronously: a master acknowledges a write before
// its replicas have it, and a write acknowledged just before the master
// died is lost when a replica that lacked it is promoted. WithReplicaWait
// makes puts, adds, acks and checkpoint saves wait (WAIT, on the
// connection of the write) until that many replicas have the write, and
// fail with ErrNotReplicated otherwise: with it, an acknowledged write
// survives the promotion of a replica that confirmed it. After a
// failover, the new master has no replica until one joins it, and writes
// fail with ErrNotReplicated (having been made on the master) until then.
// The test TestFailoverShardMaster kills the master of a shard with
// SIGKILL under four producers putting with WithReplicaWait(1, 200ms): no
// acknowledged put is lost, the puts resume once the restarted master
// has joined the promoted replica, and the producers see only these
// sentinels.
//
// # Capabilities and versions
//
// New asks the server for its version and for the Redis 8 commands
// (COMMAND INFO) once, at connect time; Engine.Server tells what it found.
// The engine is an xstream.DeleteExEngine only on a server with XDELEX and
// XACKDEL (Redis 8.2, xstream's server), and an xstream.NackEngine only on
// one with XNACK (Redis 8.8, xstream's server): the core's xstream.Nack,
// xstream.DeleteEx and xstream.AckDel fail with an error wrapping
// errors.ErrUnsupported elsewhere, as do trims with the DelRef or Acked
// policy. Every engine moves dead letters (xstream.DeadLetterEngine), on
// the client side: XPENDING, XRANGE, XADD to the dead-letter stream, then
// XACK, at least once, as the core documents. No engine keeps a group's
// dead-letter policy (xstream.DeadLetterPolicyEngine): Redis has none, so
// CreateGroup with GroupOptions.DeadLetter and xstream.SetDeadLetterPolicy
// fail with an error wrapping errors.ErrUnsupported. On xstream's server,
// whose XGROUPCFG command sets a policy, Groups reports it (DeadLetter,
// DeadLettered) from the fields the server adds to XINFO GROUPS. No engine
// passes an idempotent Add on (AddArgs.Idempotency, Redis 8.6's XADD IDMP
// and IDMPAUTO): such an Add fails with an error wrapping
// errors.ErrUnsupported, and the engine is no xstream.IdempotenceEngine.
//
// Info, InfoFull, Groups and Consumers read XINFO's fields of Redis 7
// (length, radix-tree-keys, last-generated-id, max-deleted-entry-id,
// entries-added, recorded-first-entry-id, entries-read, lag, ...) and of
// Redis 7.2 (a consumer's inactive and active-time), and of Redis 8.6 and
// 8.8 when the server gives them (the IDMP fields, StreamInfo.Idempotence;
// a group's nacked-count, GroupDetail.Nacked). A field the server
// does not give stays zero: on Redis 7.0, ConsumerInfo.InactiveKnown is
// false and ConsumerDetail.ActiveTime is zero; on a server older than
// Redis 7 (not tested here), the counters of Redis 7 would be zero and a
// group's entries-read and lag unknown.
// StreamInfo.RadixTreeKeys is Redis's count of listpack nodes. Idle
// times of InfoFull are measured on the server's clock (TIME).
//
// Behaviour of the server that the engine does not change: Redis 7.0's
// XCLAIM and XAUTOCLAIM create their consumer only when they claim
// something (the core and Redis 7.2 always do), Redis 7.0's entries-read
// and lag of a group the stream was trimmed past differ from 7.2's (the
// core follows 7.2), and Redis 7.0's XSETID accepts an ID below an entry
// deleted from the end of the stream (the core refuses it). Remove
// deletes keys of any type, as DEL does.
//
// # The sharded stream across processes
//
// CreateSharded and OpenSharded return a Sharded: a Kinesis-style
// sharded stream (xstream.ShardedEngine) that every process opening it by
// name shares, on Redis, Valkey or a Redis Cluster (it needs Lua scripts:
// xstream's server, which has none, refuses it with an error wrapping
// errors.ErrUnsupported). Each shard is a stream key of its own,
// "xs:{name:n}", whose hash tag spreads the shards over the cluster's
// slots, with a state hash "xs:{name:n}:state" in the same slot; the
// shard map (ranges, states, parents, sequence number ranges) is JSON in
// the hash "xs:{name}:meta", at an epoch that each reshard step
// increments. Records are entries whose first field is "pk", the
// partition key, then the record's fields; sequence numbers are the
// entries' IDs.
//
//   - Put routes by MD5 (xstream.PartitionHashKey) against a cached shard
//     map and adds with one XADD NOMKSTREAM: the script that closes a
//     shard sets its stream's last ID to the largest there is, in the
//     same atomic step as its CLOSED state, so that a put to a shard that
//     a reshard in another process closed adds nothing; the engine reads
//     the map again and routes again. So no record lands in a closed
//     shard, and a record acknowledged is kept, at the cost of a plain
//     XADD (see BENCHMARKS.md).
//
//   - SplitShard, MergeShards and UpdateShardCount hold a lock in the
//     metadata (another reshard meanwhile, in any process, fails with
//     xstream.ErrResourceInUse, and Status says UPDATING); each split or
//     merge is recorded, then done in idempotent parts: close the parents
//     (the script that sets CLOSED returns the stream's last ID at that
//     moment as the ending sequence number), create the children (their
//     streams start above their parents' ending sequence numbers, so that
//     sequence numbers grow from parent to child), publish the new map by
//     a compare-and-set on the epoch. Any process that finds a step
//     recorded completes it: a reshard once the lock's deadline
//     (WithReshardLease) has passed, OpenSharded, a read of the map, a
//     refused put. A rescale interrupted midway leaves the stream at a
//     shard count between the two, every hash key owned by one OPEN shard.
//     The rules are the core's, with the stricter ones of Kinesis: a
//     split key must lie above start+1 and below end, and the adjacent
//     shard of a merge must come after the first.
//
//   - GetShardIterator and GetRecords work as in the core, with
//     iterators as opaque strings naming the stream, the shard and the
//     position; ChildShards at a CLOSED shard's end. NewReader is the
//     parent-before-child reader, its checkpoints on the client side.
//
//   - ListShards takes every filter type; times (the trim horizon,
//     creation and closing of shards, MillisBehindLatest, lock
//     deadlines) are on the engine's clock (WithShardClock).
//
//   - The sharded consumer groups: a Redis group of the same name on
//     each shard's stream, listed in "xs:{name}:groups"; ReadGroup reads
//     a child only once its parents are done: EXPIRED, or drained
//     (delivered, and with StrictOrder acknowledged) with their own
//     parents done, so that a child waits for every ancestor, also
//     through a CLOSED shard that never had a record. Drained is checked
//     on the shards' streams, so consumers on any engines share the
//     group. ReadGroup delivers at
//     most Count records, starting at another shard each call. A blocked
//     ReadGroup waits by blocking XREADs of 100 ms at most on its shards
//     and the stream's events: a put or a reshard wakes it at once, an
//     Ack of another process that frees a child within that time. With
//     ReadGroupArgs.Claim it first takes over the records pending for
//     ClaimMinIdle, shard by shard, by a script of XPENDING IDLE and
//     XCLAIM (Redis 7 has no XREADGROUP CLAIM): idle times are the
//     server's, not the engine's clock.
//
//   - Retention: an engine trims every live shard by MINID at its
//     clock's now minus the retention (stream IDs are arrival
//     milliseconds) at most once a second, in the call that finds a pass
//     due (or at ApplyRetention); reads at a trimmed position fail with
//     xstream.ErrPastTrimHorizon, and a CLOSED shard whose records are
//     all past the retention becomes EXPIRED (a step under the reshard
//     lock) and its keys are deleted.
//
//   - SaveCheckpoints and LoadCheckpoints keep a reader's checkpoints in
//     a hash per application, so that a reader of another process resumes
//     from them.
//
//   - LeaseTable is the lease table of an application's
//     xstream.Workers, the hash "xs:{name}:leases:app" in the slot of the
//     metadata: one field per shard's lease, "counter|end|sequence
//     number|owner", and one "worker:<ID>" per live worker; a Lua script
//     updates a lease if its counter has not moved, so that workers in
//     any processes share the shards, each leased to one of them at a
//     time.
//
//   - RemoveSharded deletes a sharded stream with all its keys, so that
//     its name can be created again (the Kinesis endpoint's DeleteStream).
package xredis
