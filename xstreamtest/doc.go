// Package xstreamtest is the conformance suite of xstream.Engine: one set
// of tests of the semantics of Redis Streams that every implementation of
// the interface runs, the in-process DB (xstream.Local) as well as an
// engine over Redis, Valkey or Redis Cluster.
//
// An implementation's own tests call Run with a Factory, which makes a
// fresh engine for each test, and the Caps the engine has:
//
//	func TestConformance(t *testing.T) {
//		xstreamtest.Run(t, func(t *testing.T) xstreamtest.Target {
//			e := myengine.New(...)
//			t.Cleanup(func() { e.Close() })
//			return xstreamtest.Target{Engine: e, Prefix: uniquePrefix(t)}
//		}, xstreamtest.Caps{DeleteEx: true})
//	}
//
// Run runs one subtest per area (Add, Range, Read, ReadGroup, Claim, ...),
// and inside each one subtest per case, each of which calls the Factory
// once. Run returns when they are all done; it does not call t.Parallel.
//
// # Names of streams
//
// Every stream a test uses is named Target.Prefix followed by a short
// name, so a factory that gives each test a prefix of its own lets tests
// share one server, run in parallel (from several test binaries, say) and
// leave no trace in each other without a FLUSHALL. On a Redis Cluster the
// prefix should be a hash tag unique to the test, such as "{t42}:", so that
// all the streams of a test are in one slot.
//
// A few tests of Read and ReadGroup over several streams deliberately use
// streams in different slots: their names start with Target.SlotPrefix(i)
// for i = 1, 2, ..., which a cluster factory makes a prefix in another
// slot (for example "{t42.1}:"). Without SlotPrefix they get Prefix with a
// suffix, which suits any engine that does not partition keys.
//
// # What is asserted
//
// The suite asserts only what Redis itself does (redis-server 7.0 and
// later, and Valkey), in the terms of xstream's API: where xstream's API
// deliberately differs from a Redis command (a count of 0 means "no
// limit"; a negative count, an Idle given with a Time, or Claim without IDs
// is an ErrInvalidArgument error; see "Differences from Redis" in
// docs/streams.md), the suite asserts the API's meaning and an engine over Redis
// translates. Errors are checked with errors.Is against xstream's
// sentinels, never by their text.
//
// Results that would depend on the clock use explicit IDs. Idle times are
// asserted only as bounds that hold for a real clock (a claim with Idle set
// to an hour is idle at least an hour), unless Target.Advance is set:
// then tests move the engine's clock and check MinIdle, idle times and
// auto IDs against it. Fields that depend on the storage layout
// (StreamInfo.RadixTreeKeys) are never asserted.
//
// Behaviour that Redis versions differ on is left out: the lag of a group
// after a trim past its last delivered ID, or after a deletion between its
// last delivered ID and the next entry it reads (7.0 and 8 count these
// differently); whether a read or claim that delivers nothing creates its
// consumer (7.2 and later do); XINFO CONSUMERS' inactive field (7.2), which
// is asserted only with Target.Advance. Capabilities that only newer servers have are tested only when Caps
// says the engine has them (Caps.ReadLast: Redis 7.4's XREAD "+";
// Caps.DeleteEx: Redis 8.2's XDELEX, XACKDEL and the DELREF and ACKED trim
// policies; Caps.Nack: Redis 8.8's XNACK; Caps.DeadLetters:
// MoveDeadLetters; Caps.DeadLetterPolicy: a group's DeadLetterPolicy,
// which no Redis has). For an engine without Nack, DeleteEx, DeadLetters
// or DeadLetterPolicy, the suite checks instead that xstream.Nack,
// DeleteEx, AckDel, MoveDeadLetters and SetDeadLetterPolicy (and a
// CreateGroup with a policy) fail with an error wrapping errors.ErrUnsupported,
// whether the engine lacks the optional interface or reports the server's
// lack of the command that way.
//
// Blocking reads are bounded: a test that waits for a blocked Read or
// ReadGroup fails after a few seconds instead of hanging, and no test
// sleeps to synchronise with another goroutine (one that must wait until
// a reader is blocked adds entries in a loop until the reader returns).
package xstreamtest
