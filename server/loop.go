package server

import "errors"

// Event loops (Options.EventLoops; Linux only, see loop_linux.go).
//
// By default each connection has its own goroutine, which waits for the
// client's requests in the Go runtime's network poller. Unpipelined, that
// wait is where the time goes: every request wakes the connection's
// goroutine through the poller and the scheduler, which on a machine with
// few CPUs keeps a second thread spinning and waking on the CPU the
// clients need. An event loop serves its connections as Redis's does: one
// goroutine waits in epoll_wait (level-triggered) on all of them, and
// reads, runs and answers each connection that has input, in turn, with
// the same code as a connection goroutine (conn.serveRun), until its input
// is drained (errWouldBlock); then it moves to the next.
//
// A connection leaves its loop for a goroutine of its own, for good, when
// it would have to wait: before a command blocks (XREAD or XREADGROUP
// with BLOCK, WAIT; conn.watch) or when the client does not take a reply
// as fast as it comes (a write that would block). The loop's goroutine
// then carries on with that connection, blocking as a connection
// goroutine does, and hands the loop to a new goroutine (loop.handOff),
// so the other connections never wait for it. Pushes (invalidations,
// MONITOR lines, Pub/Sub messages) wake the loop for their connection.

// defaultEventLoops is the EventLoops of Options that leave it 0: none.
// The tests set it (TestMain), to run on event loops.
var defaultEventLoops = 0

// errWouldBlock is what a connection of an event loop reads when its
// socket holds nothing more: serveRun returns, and the loop serves the
// connection again once epoll reports input.
var errWouldBlock = errors.New("xstream server: no input yet")

// lingerer is a connection whose SO_LINGER can be set: a net.TCPConn or
// a connection of an event loop.
type lingerer interface{ SetLinger(sec int) error }
