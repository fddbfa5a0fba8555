package server

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// Fault injection, for testing a service's error paths: SetError (as
// miniredis's) makes every command fail, FailNext the next n commands,
// FailCommand the commands of one name. A failed command is not run: the
// client gets the error reply instead, and nothing changes. The
// commands a client sends to set up its connection (HELLO, AUTH, SELECT,
// CLIENT SETNAME and SETINFO, QUIT) are left alone by SetError and
// FailNext, so that a client connecting meanwhile reaches the command under
// test (go-redis sends HELLO and two CLIENT SETINFO on each new
// connection); FailCommand fails them when named.

// ErrFault reports bad arguments of FailNext or FailCommand.
var ErrFault = errors.New("xstream server: bad fault injection")

// faults holds the failures to inject.
type faults struct {
	on atomic.Bool // some failure is set: the fast path skips the lock

	mu      sync.Mutex
	all     string            // SetError's message, "" for none
	next    int               // commands FailNext still fails
	nextMsg string            // their error
	byName  map[string]string // FailCommand's: command name -> error
}

// SetError makes every command answer msg, as an error reply (say
// "LOADING Redis is loading the dataset in memory"), until SetError("").
// The message is sent as given, its CR and LF replaced by spaces; an error
// reply conventionally starts with a code such as ERR. Safe for
// concurrent use, O(1).
func (s *Server) SetError(msg string) {
	f := &s.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	f.all = msg
	f.updateLocked()
}

// FailNext makes the next n commands, from any client, answer msg as an
// error reply, in the order the server receives them; later commands run
// as usual. It replaces what an earlier FailNext left; n 0 cancels it. It
// fails with ErrFault, changing nothing, for n < 0 or, with n > 0, an
// empty msg. SetError goes first: while it is set, the commands it fails
// do not count. A command of a transaction counts when it is queued
// (MULTI ... EXEC), not again when EXEC runs it. Safe for concurrent use,
// O(1).
func (s *Server) FailNext(n int, msg string) error {
	if n < 0 || n > 0 && msg == "" {
		return fmt.Errorf("%w: FailNext(%d, %q): n must be >= 0 and, when > 0, msg not empty", ErrFault, n, msg)
	}
	f := &s.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next, f.nextMsg = n, msg
	f.updateLocked()
	return nil
}

// FailCommand makes every command of the given name answer msg as an
// error reply, until FailCommand(name, ""). The name is as in Redis,
// in any case: "XADD", a subcommand as "XGROUP CREATE" (or
// "xgroup|create", COMMAND's spelling), or a container such as "XGROUP"
// for all its subcommands. It fails with ErrFault, changing nothing, for
// a name the server does not know. SetError and FailNext go first: a
// command they fail does not meet this failure. Safe for concurrent use,
// O(1).
func (s *Server) FailCommand(name, msg string) error {
	key := strings.ToLower(strings.Join(strings.Fields(name), "|"))
	if !knownCommand(key) {
		return fmt.Errorf("%w: FailCommand(%q): no such command", ErrFault, name)
	}
	f := &s.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	if msg == "" {
		delete(f.byName, key)
	} else {
		if f.byName == nil {
			f.byName = map[string]string{}
		}
		f.byName[key] = msg
	}
	f.updateLocked()
	return nil
}

// knownCommand reports whether name is a command, container or
// "container|sub" subcommand of the table.
func knownCommand(name string) bool {
	parent, sub, isSub := strings.Cut(name, "|")
	cmd := commands[parent]
	if cmd == nil || !isSub {
		return cmd != nil
	}
	_, ok := cmd.subs[sub]
	return ok
}

func (f *faults) updateLocked() {
	f.on.Store(f.all != "" || f.next > 0 || len(f.byName) > 0)
}

// setupCommands are what a client sends to set up a connection.
var setupCommands = map[string]bool{
	"hello": true, "auth": true, "select": true, "quit": true,
	"client|setname": true, "client|setinfo": true,
}

// failure returns the error cmd is to answer instead of running, if any.
// O(1); without failures set, one atomic load.
func (f *faults) failure(cmd *command) (string, bool) {
	if !f.on.Load() {
		return "", false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !setupCommands[cmd.name] {
		if f.all != "" {
			return f.all, true
		}
		if f.next > 0 {
			f.next--
			msg := f.nextMsg
			f.updateLocked()
			return msg, true
		}
	}
	if msg, ok := f.byName[cmd.name]; ok {
		return msg, true
	}
	if parent, _, ok := strings.Cut(cmd.name, "|"); ok {
		if msg, ok := f.byName[parent]; ok {
			return msg, true
		}
	}
	return "", false
}

// injectedFailure answers msg instead of running cmd. In a transaction a
// failed command aborts it as a command refused when queued does (EXEC
// then answers EXECABORT); a failed EXEC or DISCARD ends the transaction,
// so that the connection is not left in it.
func (c *conn) injectedFailure(cmd *command, msg string) {
	switch {
	case cmd.name == "exec" || cmd.name == "discard":
		c.resetMulti()
	case c.multi:
		c.dirty = true
	}
	c.err(msg)
}
