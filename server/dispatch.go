package server

import (
	"fmt"
	"strings"
)

// command is an entry of the command table.
type command struct {
	name   string // lower case, "xgroup|create" for a subcommand
	arity  int    // as in Redis: n exactly, -n at least n
	fn     func(c *conn, args [][]byte)
	noAuth bool                // allowed before AUTH
	subs   map[string]*command // subcommands of a container (XGROUP, XINFO, ...)
	spec   *commandSpec        // what COMMAND says of it
	// From spec's flags: write (it may change a DB: refused when the
	// DB's log failed) and no_multi (refused inside MULTI).
	write, noMulti bool
	readonly       bool // a read of its keys, remembered for tracking clients
	noMonitor      bool // admin: not shown to MONITOR
	blocking       bool // may block (XREAD, XREADGROUP)
	skipSlowlog    bool // not logged by SLOWLOG (EXEC)
	idx            int  // in commandsInOrder, and in a server's stats
	denyOOM        bool // refused past MaxMemory (maxmemory.go)
	touches        bool // stamps its keys' access time (idle.go)
	touchOne       bool // touches, and its one key is the first argument
	parseFirst     bool // checks its arguments before it looks its keys up (idle.go)
}

var (
	commands        = map[string]*command{}
	commandsInOrder []*command // every command and subcommand, in registration order
)

// newCommand makes a command of the table and gives it its index.
func newCommand(name string, arity int, fn func(c *conn, args [][]byte)) *command {
	cmd := &command{name: name, arity: arity, fn: fn, spec: specOf(name), idx: len(commandsInOrder)}
	commandsInOrder = append(commandsInOrder, cmd)
	return cmd
}

// register adds a command (or "container|sub" subcommand) to the table,
// with its entry of commandSpecs, which must exist.
func register(name string, arity int, fn func(c *conn, args [][]byte)) *command {
	cmd := newCommand(name, arity, fn)
	for _, f := range strings.Fields(cmd.spec.flags) {
		cmd.write = cmd.write || f == "write"
		cmd.noMulti = cmd.noMulti || f == "no_multi"
		cmd.denyOOM = cmd.denyOOM || f == "denyoom"
		cmd.readonly = cmd.readonly || f == "readonly"
		cmd.noMonitor = cmd.noMonitor || f == "admin" || f == "skip_monitor"
		cmd.blocking = cmd.blocking || f == "blocking"
		cmd.skipSlowlog = cmd.skipSlowlog || f == "skip_slowlog"
	}
	cmd.touches = len(cmd.spec.specs) > 0 && !noTouch[name]
	cmd.parseFirst = parseFirst[name]
	if sp := cmd.spec.specs; cmd.touches && len(sp) == 1 {
		cmd.touchOne = sp[0].index == 1 && sp[0].keyword == "" && sp[0].lastkey == 0
	}
	if parent, sub, ok := strings.Cut(name, "|"); ok {
		p := commands[parent]
		if p == nil {
			p = newCommand(parent, -2, nil)
			commands[parent] = p
		}
		if p.subs == nil {
			p.subs = map[string]*command{}
		}
		p.subs[sub] = cmd
		return cmd
	}
	commands[name] = cmd
	return cmd
}

func specOf(name string) *commandSpec {
	spec := commandSpecs[name]
	if spec == nil {
		panic("server: no commandSpecs entry for " + name)
	}
	return spec
}

// lookup finds the command of args, or writes Redis's error for an
// unknown command or subcommand or a wrong number of arguments.
func (c *conn) lookup(args [][]byte) *command {
	var cmd *command
	if c.lastCmd != nil && string(args[0]) == c.lastName {
		cmd = c.lastCmd // a client mostly sends the same few commands, spelled the same
	} else if cmd = commands[string(c.lower(args[0]))]; cmd != nil { // no allocation for the key
		c.lastCmd, c.lastName = cmd, string(args[0])
	}
	if cmd == nil {
		c.public.cmd.Store(nil)
		c.err(unknownCommand(args))
		return nil
	}
	if cmd.subs != nil && len(args) >= 2 {
		sub := cmd.subs[string(c.lower(args[1]))]
		if sub == nil {
			c.public.cmd.Store(nil)
			c.err(fmt.Sprintf("ERR unknown subcommand '%.128s'. Try %s HELP.", args[1], strings.ToUpper(cmd.name)))
			return nil
		}
		cmd = sub
	}
	if (cmd.arity > 0 && len(args) != cmd.arity) || (cmd.arity < 0 && len(args) < -cmd.arity) {
		c.srv.stats.rejected(cmd)
		c.public.cmd.Store(cmd)
		c.err(fmt.Sprintf("ERR wrong number of arguments for '%s' command", cmd.name))
		return nil
	}
	return cmd
}

// maxNameLen is longer than any command or subcommand name.
const maxNameLen = 32

// lower returns b in lower case (ASCII), in a buffer of c's that the next
// call reuses.
func (c *conn) lower(b []byte) []byte {
	if len(b) > maxNameLen {
		return b // no command is this long: the lookup fails as it should
	}
	c.lowerBuf = append(c.lowerBuf[:0], b...)
	for i, ch := range c.lowerBuf {
		if 'A' <= ch && ch <= 'Z' {
			c.lowerBuf[i] = ch + 'a' - 'A'
		}
	}
	return c.lowerBuf
}

func unknownCommand(args [][]byte) string {
	var b strings.Builder
	for _, a := range args[1:] {
		if b.Len() >= 128 {
			break
		}
		fmt.Fprintf(&b, "'%.*s' ", 128-b.Len(), a)
	}
	return fmt.Sprintf("ERR unknown command '%.128s', with args beginning with: %s", args[0], b.String())
}

// dispatch runs or queues one command.
func (c *conn) dispatch(args [][]byte) {
	cmd := c.lookup(args)
	if cmd == nil {
		if c.multi {
			c.dirty = true
		}
		return
	}
	// CLIENT LIST's cmd: the command looked up, whether it then runs, is
	// queued or refused (Redis's lastcmd); lookup sets it when it fails.
	c.public.cmd.Store(cmd)
	errs := c.errs
	if !c.admit(cmd, args) {
		if c.errs != errs { // refused before it runs: Redis's rejected_calls
			c.srv.stats.rejected(cmd)
		}
		return
	}
	c.call(cmd, args)
}

// admit applies what stands between a known command and its run (AUTH,
// injected failures, MULTI's rules, MISCONF) and queues it inside MULTI;
// it reports whether the command runs now.
func (c *conn) admit(cmd *command, args [][]byte) bool {
	if !c.authed && !cmd.noAuth {
		if cmd.name == "exec" {
			// Redis aborts the transaction with the reason.
			c.resetMulti()
			c.err("EXECABORT Transaction discarded because of: NOAUTH Authentication required.")
			return false
		}
		c.err("NOAUTH Authentication required.")
		if c.multi {
			c.dirty = true
		}
		return false
	}
	if msg, ok := c.srv.faults.failure(cmd); ok {
		c.injectedFailure(cmd, msg)
		return false
	}
	if c.multi && cmd.noMulti {
		c.err("ERR Command not allowed inside a transaction")
		c.dirty = true
		return false
	}
	if c.srv.opts.MaxMemory > 0 && c.refuseOOM(cmd) {
		return false
	}
	if c.srv.durable && c.refuseWrite(cmd) {
		return false
	}
	if c.special && (c.monitor && c.monitorRefused(cmd) || c.subscribed() && c.pubsubRefused(cmd)) {
		if c.multi {
			c.dirty = true
		}
		return false
	}
	if c.multi {
		switch cmd.name {
		case "exec", "discard", "multi", "quit", "reset": // not queued, as in Redis
		default:
			cost := 24*len(args) + 64
			for _, a := range args {
				cost += len(a)
			}
			if c.queuedBytes+cost > c.srv.opts.MaxMultiBytes {
				c.err(fmt.Sprintf("ERR transaction larger than the limit of %d bytes", c.srv.opts.MaxMultiBytes))
				c.dirty = true
				return false
			}
			c.queuedBytes += cost
			q := make([][]byte, len(args))
			for i, a := range args {
				q[i] = append([]byte(nil), a...)
			}
			c.queued = append(c.queued, q)
			c.queuedWrite = c.queuedWrite || cmd.write
			c.queuedDenyOOM = c.queuedDenyOOM || cmd.denyOOM
			c.publish()
			c.simple("QUEUED")
			return false
		}
	}
	return true
}

// latencySample is how many calls of a connection one call in the
// latency histogram of the metrics stands for.
const latencySample = 16

// call runs cmd, noting the DB it runs on for the log barrier (see
// logBarrier).
func (c *conn) call(cmd *command, args [][]byte) {
	c.expireKeys(cmd, args)
	bit := uint16(1) << c.db
	c.touched |= bit
	outer := c.callWrote // EXEC's, around the calls of its commands
	c.callWrote = 0
	if cmd.write {
		c.noteWrites(bit)
		c.changes++
	}
	errs := c.errs
	c.calls++
	mon := c.srv.mon.n.Load() != 0 && !cmd.noMonitor
	if mon && cmd.blocking {
		c.blockFeed = args // shown when it blocks (watch), if it does
	}
	start, startSrv := c.mark, c.markSrv // see slowlog.go's Timing
	c.cmdStart = len(c.out)
	c.looked = !cmd.parseFirst
	if c.trk.on || cmd.write && c.srv.track.users.Load() != 0 {
		c.runTracked(cmd, args)
	} else {
		cmd.fn(c, args)
	}
	if c.holdReply() {
		c.noteReply(c.cmdStart)
	}
	c.callWrote = outer
	if cmd.touches && c.looked {
		c.touchKeys(cmd, args)
	}
	d := c.timeCall(start, startSrv)
	c.srv.stats.ran(cmd, d, c.errs != errs)
	if c.calls%latencySample == 1 {
		c.srv.stats.observeLatency(cmd, d)
	}
	if th := c.srv.slow.threshold.Load(); th >= 0 && d.Microseconds() >= th {
		c.slowEnd(d, cmd, args)
	}
	if mon {
		if !cmd.blocking || c.blockFeed != nil {
			c.feedMonitors(args)
		}
		c.blockFeed = nil
	}
}

// noteWrites notes that the command in call may change the DBs of mask
// (bit i: DB i), for the log barrier before its reply (logBarrier).
func (c *conn) noteWrites(mask uint16) {
	c.touched |= mask
	c.callWrote |= mask
}

// runTracked runs cmd's function with what tracking adds: the keys a
// tracking client reads, the invalidations of the keys a write changed
// (when a client tracks).
func (c *conn) runTracked(cmd *command, args [][]byte) {
	if cmd.write && c.srv.track.users.Load() != 0 {
		c.trackWrite(cmd, args)
		return
	}
	cmd.fn(c, args)
	if c.trk.on && cmd.readonly && !c.trk.bcast {
		c.remember(cmd, args)
	}
}

// refuseWrite answers Redis's MISCONF error, and reports true, for a
// command that may change a DB whose log failed (as Redis refuses writes
// once writing its AOF failed), for PING when any DB's log failed (Redis
// refuses it too, so that a health check sees it), and for an EXEC of
// such commands. Reads go on.
func (c *conn) refuseWrite(cmd *command) bool {
	var err error
	switch {
	case cmd.name == "ping" || cmd.name == "flushall" || cmd.name == "exec" && c.queuedWrite:
		for i := range numDBs {
			if err = c.srv.logErr(i); err != nil {
				break
			}
		}
	case cmd.write:
		err = c.srv.logErr(c.db)
	}
	if err == nil {
		return false
	}
	msg := misconf(err)
	switch {
	case cmd.name == "exec":
		c.resetMulti()
		c.err("EXECABORT Transaction discarded because of: " + msg)
	default:
		c.err(msg)
		if c.multi {
			c.dirty = true
		}
	}
	return true
}

func init() {
	register("multi", 1, func(c *conn, args [][]byte) {
		if c.multi {
			c.err("ERR MULTI calls can not be nested")
			return
		}
		c.multi = true
		c.publish()
		c.ok()
	})
	register("discard", 1, func(c *conn, args [][]byte) {
		if !c.multi {
			c.err("ERR DISCARD without MULTI")
			return
		}
		c.resetMulti()
		c.ok()
	})
	register("exec", 1, func(c *conn, args [][]byte) {
		if !c.multi {
			c.err("ERR EXEC without MULTI")
			return
		}
		queued, dirty := c.queued, c.dirty
		c.resetMulti()
		if dirty {
			c.err("EXECABORT Transaction discarded because of previous errors.")
			return
		}
		c.array(len(queued))
		c.inExec = true
		errs := c.errs
		for _, q := range queued {
			c.call(c.lookup(q), q)
		}
		c.errs = errs // the commands' errors are theirs, not EXEC's (Redis's failed_calls)
		c.inExec = false
	})
}

func (c *conn) resetMulti() {
	c.multi, c.dirty, c.queued, c.queuedBytes, c.queuedWrite, c.queuedDenyOOM = false, false, nil, 0, false, false
	c.publish()
}
