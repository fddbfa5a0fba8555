// Package server serves xstream streams over the Redis protocol (RESP2, and
// RESP3 after HELLO 3), so that programs using a Redis client (go-redis,
// rueidis, redis-cli) can use xstream unchanged: as an in-process fake of
// Redis Streams in their tests, or as a small stream broker.
//
// # Tour
//
// In a test, RunT starts a server on a free loopback port and closes it
// when the test ends:
//
//	srv := server.RunT(t)
//	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
//
// RunTWith does the same with Options: a password, limits on requests,
// replies, transactions and clients, and a clock for deterministic auto
// IDs and idle times. Server.DB gives the xstream.DB behind a database, to
// set up or inspect streams directly. Server.SetTime and
// Server.FastForward move the time of every stream (auto IDs, idle times,
// retention), as miniredis's SetTime and FastForward do for its keys.
// SetError, FailNext and FailCommand make commands fail, and Restart
// restarts the server on the same address, keeping the data.
//
// As a broker, New and Start listen on Options.Addr (127.0.0.1:6379 for the
// xstream-server command in cmd/xstream-server); Shutdown stops reading new
// commands, ends blocked reads, lets the commands already received finish
// and closes the connections; Close does so with a grace period.
//
// # Durability
//
// With Options.Dir (xstream-server -dir) the databases are durable
// xstream DBs (xstream.Open), database i in the directory Dir/i (after
// a SWAPDB, the one Dir/dbmap names), with
// Options.AppendFsync as their sync policy (-appendfsync always, everysec
// or no, as Redis's). Start loads them before it listens; Shutdown and
// Close close them, which syncs their logs. As Redis writes its AOF before
// it replies, a connection writes the log of the commands it ran to the OS
// (DB.Flush) before it sends their replies, and under always syncs it
// (DB.Sync; the DBs are opened with xstream.WithDeferredSync, so that the
// commands do not wait for the disk one by one); an event loop does so
// once for all the clients it served in a pass, as Redis does once an
// event-loop iteration. A crash of the server process loses nothing it
// acknowledged, whatever the policy; a crash of the OS can lose about the
// last second under everysec, nothing under always. Once writing a DB's
// log failed, its write commands (and PING) get Redis's MISCONF error
// while reads go on; under always, a write whose change could not be
// synced answers MISCONF too. SAVE, BGSAVE, BGREWRITEAOF and
// LASTSAVE take and report snapshots (DB.Snapshot), and INFO has Redis's
// persistence section. To test recovery code, restart the server
// (Server.Restart reopens its DBs from disk on the same address), or close
// it and start another on the same directory (RunTDir, or RunTWith with
// Options.Dir, twice).
//
// A Server holds 16 databases (SELECT 0..15), each an xstream.DB, and
// answers the stream commands of Redis 7 and 8 with Redis's replies and
// error strings, checked against a real redis-server by the package's
// differential tests. One command is its own: XGROUPCFG key group
// MAXDELIVER n DEADLETTER stream sets a group's dead-letter policy
// (xstream.DeadLetterPolicy; MAXDELIVER 0 removes it), and XINFO GROUPS
// then adds max-deliveries, dead-letter-stream and dead-lettered for that
// group only. docs/server-commands.md lists the commands and every known
// difference.
//
// # Connections
//
// Each connection reads, runs and answers its commands on one goroutine,
// in order, as Redis's event loop does for each client; replies to
// pipelined commands go out together. A blocking XREAD or XREADGROUP holds
// only its own connection: while it waits, a second goroutine reads on
// (up to a bound) so that the connection notices its client going away,
// which ends the wait and leaves nothing behind. Requests are parsed by
// github.com/tidwall/redcon.
//
// With Options.EventLoops (Linux), the connections are served by event
// loops instead: a goroutine waits in epoll_wait on all the connections of
// its loop and runs the commands of each that has input in turn, with the
// same code; a connection about to block, or whose client does not take
// its replies, moves to a goroutine of its own (see loop.go).
package server
