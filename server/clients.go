package server

import (
	"cmp"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Client introspection: CLIENT INFO, LIST and KILL, CLIENT NO-EVICT and
// REPLY, RESET. A connection's goroutine owns its state; what other
// clients may see of it (CLIENT LIST) is published in clientPublic.

// clientPublic is what other goroutines may read of a connection.
type clientPublic struct {
	created int64 // ms; set once
	addr    string
	laddr   string

	mu   sync.Mutex // guards name, db and resp: changed by the owner only, rarely
	name string
	db   int
	resp int

	cmd    atomic.Pointer[command] // the last command run
	active atomic.Int64            // ms of the last read from the client

	// What publish sets from the owner's state, for CLIENT LIST's flags,
	// sub, multi, multi-mem and redir.
	flags    atomic.Uint32 // clientFlag bits
	sub      atomic.Int32  // SUBSCRIBE channels
	multi    atomic.Int32  // commands queued in MULTI, -1 outside
	multiMem atomic.Int64  // their bytes
	redir    atomic.Int64  // the tracking redirect, -1 when not tracking
	fd       int           // the socket's descriptor, -1 if none; set once

	// The owner's buffers as it last published them (publishIn,
	// publishOut), for CLIENT LIST's qbuf, qbuf-free, rbs and obl.
	qbuf, qbufFree, rbs, obl atomic.Int64
}

// bufFields are the fields of CLIENT LIST and CLIENT INFO that tell of a
// client's buffers, as Redis 7.0's catClientInfoString defines them, in
// this server's terms: qbuf is the input read and not yet dropped (Redis
// keeps a batch's requests in its query buffer until it ran them all, the
// running command's included) and qbufFree the buffer's room past it;
// argvMem the bytes of the running command's arguments (0 for a client
// that runs none); rbs the output buffer's capacity and obl the replies
// in it not yet written; oll and omem the pushes queued for the client
// (invalidations, MONITOR lines, messages) and their bytes, with the
// pieces of a big reply held (Redis's reply list); totMem the sum of the
// buffers: input and output capacity, omem, argvMem and multi-mem.
type bufFields struct{ qbuf, qbufFree, argvMem, rbs, obl, oll, omem, totMem int64 }

// publishIn publishes the use of the input buffer: fill calls it before
// and after it reads. Two atomic stores.
func (c *conn) publishIn() {
	c.public.qbuf.Store(int64(len(c.in)))
	c.public.qbufFree.Store(int64(cap(c.in) - len(c.in)))
}

// publishOut publishes that n bytes of replies wait to be written (flush
// calls it before and after it writes) and the output buffer's size.
func (c *conn) publishOut(n int) {
	c.public.obl.Store(int64(n))
	c.public.rbs.Store(int64(cap(c.out)))
}

// buffers returns c's bufFields. For its own command (self, whose
// arguments are args) they are read from c's state; for another client,
// as c last published them, with its queued pushes read under their
// lock. O(len(args)).
func (c *conn) buffers(self bool, args [][]byte) bufFields {
	var f bufFields
	p := &c.public
	if self {
		f.qbuf, f.qbufFree = int64(len(c.in)), int64(cap(c.in)-len(c.in))
		for _, a := range args {
			f.argvMem += int64(len(a))
		}
		f.rbs, f.obl, f.omem = int64(cap(c.out)), int64(len(c.out)), int64(c.held)
	} else {
		f.qbuf, f.qbufFree, f.rbs, f.obl = p.qbuf.Load(), p.qbufFree.Load(), p.rbs.Load(), p.obl.Load()
	}
	b := &c.pushes
	b.mu.Lock()
	f.oll, f.omem = f.oll+int64(len(b.items)), f.omem+b.bytes
	b.mu.Unlock()
	f.totMem = f.qbuf + f.qbufFree + f.rbs + f.omem + f.argvMem + p.multiMem.Load()
	return f
}

// The flags of CLIENT LIST that publish sets, in the order Redis writes
// their letters (R, a broken redirect, goes between t and B; it is read
// from the tracker).
const (
	flagMonitor  = 1 << iota // O
	flagPubsub               // P: subscribed to a channel
	flagMulti                // x
	flagBlocked              // b: XREAD, XREADGROUP or WAIT waits
	flagTracking             // t
	flagBcast                // B
	flagNoEvict              // e: CLIENT NO-EVICT on
)

// flagLetters are the letters of the flags before R and after it.
var flagLetters = [...]struct {
	bit    uint32
	letter byte
}{{flagMonitor, 'O'}, {flagPubsub, 'P'}, {flagMulti, 'x'}, {flagBlocked, 'b'}, {flagTracking, 't'}, {0, 'R'}, {flagBcast, 'B'}, {flagNoEvict, 'e'}}

// publish publishes the owner's state that CLIENT LIST shows, after a
// change of it. O(1).
func (c *conn) publish() {
	p := &c.public
	var f uint32
	set := func(bit uint32, on bool) {
		if on {
			f |= bit
		}
	}
	set(flagMonitor, c.monitor)
	set(flagPubsub, len(c.trk.channels) > 0)
	set(flagMulti, c.multi)
	set(flagBlocked, c.blocked)
	set(flagTracking, c.trk.on)
	set(flagBcast, c.trk.on && c.trk.bcast)
	set(flagNoEvict, c.noEvict)
	p.flags.Store(f)
	p.sub.Store(int32(len(c.trk.channels)))
	multi, redir := int32(-1), int64(-1)
	if c.multi {
		multi = int32(len(c.queued))
	}
	if c.trk.on {
		redir = c.trk.redirect
	}
	p.multi.Store(multi)
	p.multiMem.Store(int64(c.queuedBytes))
	p.redir.Store(redir)
}

func (p *clientPublic) init(c *conn) {
	now := time.Now().UnixMilli()
	p.created = now
	p.active.Store(now)
	if a := c.nc.RemoteAddr(); a != nil {
		p.addr = a.String()
	}
	if a := c.nc.LocalAddr(); a != nil {
		p.laddr = a.String()
	}
	p.fd = socketFD(c.nc)
	p.changed(c)
	c.publish()
}

// changed publishes the owner's name, db and protocol after a change.
func (p *clientPublic) changed(c *conn) {
	p.mu.Lock()
	p.name, p.db, p.resp = c.name, c.db, c.resp
	p.mu.Unlock()
}

// clientLine writes c's line of CLIENT LIST and CLIENT INFO: Redis 7.0's
// fields in its order, those of the buffers as bufFields says (multi-mem:
// the bytes of the commands queued in MULTI; rbp, the peak of the output
// buffer, is 0); events is r. self and args are buffers'.
func (c *conn) clientLine(b *strings.Builder, self bool, args [][]byte) {
	p := &c.public
	p.mu.Lock()
	name, db, resp := p.name, p.db, p.resp
	p.mu.Unlock()
	t := &c.srv.track
	t.mu.Lock()
	broken := c.trk.brokenRedir // set by the goroutine of a change
	t.mu.Unlock()
	now := time.Now().UnixMilli()
	cmd := "NULL"
	if cm := p.cmd.Load(); cm != nil {
		cmd = cm.name
	}
	var flags []byte
	f := p.flags.Load()
	for _, l := range flagLetters {
		if l.bit&f != 0 || l.letter == 'R' && broken && f&flagTracking != 0 {
			flags = append(flags, l.letter)
		}
	}
	if len(flags) == 0 {
		flags = append(flags, 'N')
	}
	bf := c.buffers(self, args)
	fmt.Fprintf(b, "id=%d addr=%s laddr=%s fd=%d name=%s age=%d idle=%d flags=%s db=%d sub=%d psub=0 ssub=0 multi=%d "+
		"qbuf=%d qbuf-free=%d argv-mem=%d multi-mem=%d rbs=%d rbp=0 obl=%d oll=%d omem=%d tot-mem=%d events=r cmd=%s user=default redir=%d resp=%d\n",
		c.clientID, p.addr, p.laddr, p.fd, name, (now-p.created)/1000, max(now-p.active.Load(), 0)/1000, flags, db,
		p.sub.Load(), p.multi.Load(), bf.qbuf, bf.qbufFree, bf.argvMem, p.multiMem.Load(), bf.rbs, bf.obl, bf.oll, bf.omem, bf.totMem,
		cmd, p.redir.Load(), resp)
}

// socketFD returns the file descriptor of nc's socket, or -1.
func socketFD(nc net.Conn) int {
	if lc, ok := nc.(interface{ sysFD() int }); ok {
		return lc.sysFD()
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return -1
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	raw.Control(func(u uintptr) { fd = int(u) })
	return fd
}

func init() {
	register("client|info", 2, func(c *conn, args [][]byte) {
		var b strings.Builder
		c.clientLine(&b, true, args)
		c.verbatim(b.String())
	})
	register("client|list", -2, clientList)
	register("client|kill", -3, clientKill)
	register("client|unblock", -3, clientUnblock)
	register("client|no-evict", 3, func(c *conn, args [][]byte) {
		// No client is ever evicted here: there is nothing to switch.
		if !is(args[2], "on") && !is(args[2], "off") {
			c.err(errSyntax)
			return
		}
		c.noEvict = is(args[2], "on")
		c.publish()
		c.ok()
	})
	register("client|reply", 3, func(c *conn, args [][]byte) {
		switch {
		case is(args[2], "on"):
			c.replyMode = replyOn
			c.ok()
		case is(args[2], "off"):
			c.replyMode = replyOff
		case is(args[2], "skip"):
			c.replyMode = replySkipNext
		default:
			c.err(errSyntax)
		}
	})
	register("reset", 1, func(c *conn, args [][]byte) {
		c.resetMulti()
		c.resetTracking()
		c.unmonitor()
		c.db, c.resp, c.name = 0, 2, "" // CLIENT NO-EVICT stays, as in Redis 7.0
		c.publish()
		c.replyMode = replyOn
		c.authed = c.srv.opts.Password == ""
		c.public.changed(c)
		c.simple("RESET")
	}).noAuth = true
}

// The reply modes of CLIENT REPLY.
const (
	replyOn       = iota
	replyOff      // no replies until CLIENT REPLY ON
	replySkipNext // no reply to the next command
	replySkip     // no reply to this command
)

// clientList answers CLIENT LIST [TYPE normal|master|replica|pubsub] [ID
// id ...]: a line per connected client, by ID.
func clientList(c *conn, args [][]byte) {
	var ids map[int64]bool
	typ := ""
	for i := 2; i < len(args); i++ {
		switch {
		case is(args[i], "type") && i+1 < len(args):
			i++
			var ok bool
			if typ, ok = c.clientType(args[i]); !ok {
				return
			}
		case is(args[i], "id") && i+1 < len(args):
			ids = map[int64]bool{}
			for i++; i < len(args); i++ {
				id, err := strconv.ParseInt(string(args[i]), 10, 64)
				if err != nil || id <= 0 {
					c.err("ERR Invalid client ID")
					return
				}
				ids[id] = true
			}
		default:
			c.err(errSyntax)
			return
		}
	}
	var b strings.Builder
	for _, o := range c.srv.clients() {
		if (ids == nil || ids[o.clientID]) && (typ == "" || typ == o.kind()) {
			o.clientLine(&b, o == c, args)
		}
	}
	c.verbatim(b.String())
}

// kind is the client's type for CLIENT LIST and KILL: pubsub when it is
// subscribed to a channel, as Redis's getClientType, else normal (a
// monitor too).
func (c *conn) kind() string {
	if c.public.flags.Load()&flagPubsub != 0 {
		return "pubsub"
	}
	return "normal"
}

// clientType reads a client type of CLIENT LIST and KILL, in lower case,
// or answers Redis's error.
func (c *conn) clientType(b []byte) (string, bool) {
	typ := strings.ToLower(string(b))
	switch typ {
	case "normal", "master", "replica", "slave", "pubsub":
		return typ, true
	}
	c.err(fmt.Sprintf("ERR Unknown client type '%s'", b))
	return "", false
}

// clients returns the connected clients by ID.
func (s *Server) clients() []*conn {
	s.mu.Lock()
	out := make([]*conn, 0, len(s.conns))
	for o := range s.conns {
		out = append(out, o)
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b *conn) int { return cmp.Compare(a.clientID, b.clientID) })
	return out
}

// clientKill answers CLIENT KILL addr (the old form: OK, or "No such
// client") and CLIENT KILL [ID id] [ADDR addr] [LADDR addr] [TYPE type]
// [SKIPME yes|no] (the number of clients closed). A client closed is
// disconnected as when the network fails; the caller itself is closed
// after its reply.
func clientKill(c *conn, args [][]byte) {
	if len(args) == 3 {
		for _, o := range c.srv.clients() {
			if o.public.addr == string(args[2]) {
				c.ok()
				c.kill(o)
				return
			}
		}
		c.err("ERR No such client")
		return
	}
	var id int64
	addr, laddr, typ := "", "", ""
	skipme := true
	for i := 2; i < len(args); i += 2 {
		if i+1 >= len(args) {
			c.err(errSyntax)
			return
		}
		v := string(args[i+1])
		switch {
		case is(args[i], "id"):
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				c.err("ERR client-id should be greater than 0")
				return
			}
			id = n
		case is(args[i], "addr"):
			addr = v
		case is(args[i], "laddr"):
			laddr = v
		case is(args[i], "type"):
			var ok bool
			if typ, ok = c.clientType(args[i+1]); !ok {
				return
			}
		case is(args[i], "skipme"):
			switch {
			case is(args[i+1], "yes"):
				skipme = true
			case is(args[i+1], "no"):
				skipme = false
			default:
				c.err(errSyntax)
				return
			}
		default:
			c.err(errSyntax)
			return
		}
	}
	n := int64(0)
	var self bool
	for _, o := range c.srv.clients() {
		switch {
		case id != 0 && o.clientID != id,
			addr != "" && o.public.addr != addr,
			laddr != "" && o.public.laddr != laddr,
			typ != "" && typ != o.kind(),
			skipme && o == c:
			continue
		}
		n++
		if o == c {
			self = true
			continue
		}
		c.kill(o)
	}
	c.int(n)
	if self {
		c.quit = true // after the reply, as Redis closes the caller
	}
}

// kill disconnects o: its reads fail, which ends its goroutine (a blocked
// command is woken by its context).
func (c *conn) kill(o *conn) {
	if o == c {
		c.quit = true
		return
	}
	if tc, ok := o.nc.(lingerer); ok {
		tc.SetLinger(0)
	}
	o.cancel()
	o.nc.Close()
}

// clientUnblock is CLIENT UNBLOCK client-id [TIMEOUT | ERROR]: the client's
// blocked XREAD or XREADGROUP ends at once, answering as timed out (a null
// array) or with the UNBLOCKED error; 1 when it was blocked, else 0. A
// group read so ended has delivered nothing, so a client can stop another
// connection's read without losing entries to it.
func clientUnblock(c *conn, args [][]byte) {
	if len(args) > 4 {
		c.err(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%s'. Try CLIENT HELP.", args[1]))
		return
	}
	id, ok := parseLL(args[2])
	if !ok {
		c.err(errNotInt)
		return
	}
	withErr := false
	if len(args) > 3 {
		switch {
		case is(args[3], "timeout"):
		case is(args[3], "error"):
			withErr = true
		default:
			c.err("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	}
	if o := c.srv.clientByID(id); o != nil && o != c && o.unblockRead(withErr) {
		c.int(1)
		return
	}
	c.int(0)
}
