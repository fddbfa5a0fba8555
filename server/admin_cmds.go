package server

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/xstreamgo/xstream"
)

// Commands about the server that Redis's tools and client libraries send
// on connecting or to watch a server (ROLE, WAIT, FUNCTION, CONFIG): they
// answer as a Redis 7.0 master with no replicas, no functions and the
// configuration this server really has.

func init() {
	register("role", 1, func(c *conn, args [][]byte) {
		c.array(3)
		c.bulk("master")
		c.int(0)
		c.array(0)
	})
	register("wait", 3, wait)
	register("function|flush", -2, func(c *conn, args [][]byte) {
		if len(args) > 3 {
			c.err("ERR unknown subcommand or wrong number of arguments for '" + string(args[1]) + "'. Try FUNCTION HELP.")
			return
		}
		if len(args) == 3 && !strings.EqualFold(string(args[2]), "sync") && !strings.EqualFold(string(args[2]), "async") {
			c.err("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
			return
		}
		c.ok()
	})
	register("function|list", -2, functionList)
	register("function|stats", 2, func(c *conn, args [][]byte) {
		c.mapLen(2)
		c.bulk("running_script")
		c.null()
		c.bulk("engines")
		c.mapLen(1)
		c.bulk("LUA")
		c.mapLen(2)
		c.bulk("libraries_count")
		c.int(0)
		c.bulk("functions_count")
		c.int(0)
	})
	register("config|resetstat", 2, func(c *conn, args [][]byte) {
		c.srv.stats.reset()
		c.srv.commands.Store(0)
		c.ok()
	})
	register("config|get", -3, configGet)
	register("config|set", -4, configSet)
	// The latency monitor is off (Redis's latency-monitor-threshold 0):
	// no event is ever recorded.
	register("latency|latest", 2, func(c *conn, args [][]byte) { c.array(0) })
	register("latency|reset", -2, func(c *conn, args [][]byte) { c.int(0) })
}

// wait answers WAIT numreplicas timeout: no replica ever acknowledges, so
// it replies 0, at once for numreplicas <= 0 and otherwise after timeout
// milliseconds (0: until the client goes away or the server shuts down),
// as Redis does without replicas.
func wait(c *conn, args [][]byte) {
	n, ok := c.intArg(args[1], "")
	if !ok {
		return
	}
	ms, ok := c.intArg(args[2], "timeout is not an integer or out of range")
	if !ok {
		return
	}
	if ms < 0 {
		c.err("ERR timeout is negative")
		return
	}
	if n > 0 && !c.multi && !c.inExec {
		stop := c.watch()
		var timeout <-chan time.Time
		if ms > 0 {
			t := time.NewTimer(time.Duration(ms) * time.Millisecond)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-timeout:
		case <-c.ctx.Done():
		}
		stop()
	}
	c.int(0)
}

// functionList answers FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE]:
// there are no libraries.
func functionList(c *conn, args [][]byte) {
	for i := 2; i < len(args); i++ {
		switch strings.ToLower(string(args[i])) {
		case "withcode":
		case "libraryname":
			if i+1 >= len(args) {
				c.err("ERR library name argument was not given")
				return
			}
			i++
		default:
			c.err("ERR Unknown argument " + string(args[i]))
			return
		}
	}
	c.array(0)
}

// configParams are the settings CONFIG GET reports: the ones this server
// has, under Redis's names, with its values.
func (c *conn) configParams() [][2]string {
	o, entries, bytes := c.srv.settings()
	appendonly, fsync := "no", "everysec"
	if o.Dir != "" {
		appendonly = "yes"
		switch o.AppendFsync {
		case xstream.SyncAlways:
			fsync = "always"
		case xstream.SyncNo:
			fsync = "no"
		}
	}
	return [][2]string{
		{"maxclients", strconv.Itoa(o.MaxClients)},
		{"databases", strconv.Itoa(numDBs)},
		{"port", c.srv.port()},
		{"appendonly", appendonly},
		{"appendfsync", fsync},
		{"dir", o.Dir},
		{"save", ""},
		{"maxmemory", strconv.FormatInt(o.MaxMemory, 10)},
		{"maxmemory-policy", "noeviction"},
		{"proto-max-bulk-len", strconv.Itoa(o.MaxRequestBytes)},
		{"stream-node-max-entries", strconv.FormatInt(entries, 10)},
		{"stream-node-max-bytes", strconv.FormatInt(bytes, 10)},
		{"slowlog-log-slower-than", strconv.FormatInt(c.srv.slow.threshold.Load(), 10)},
		{"slowlog-max-len", strconv.FormatInt(c.srv.slow.maxLen.Load(), 10)},
		{"client-output-buffer-limit", c.srv.bufLimitsValue()},
		{"active-expire-effort", strconv.FormatInt(c.srv.expireEffort.Load(), 10)},
	}
}

// configGet answers CONFIG GET pattern [pattern ...] with the settings
// whose names match a pattern (a glob, case-insensitive), each once. A
// name without glob characters is answered under the name as given, as
// Redis 7.0 does.
func configGet(c *conn, args [][]byte) {
	var hits [][2]string
	for _, p := range c.configParams() {
		for _, pat := range args[2:] {
			lower := strings.ToLower(string(pat))
			if !strings.ContainsAny(lower, "*?[") {
				if lower == p[0] {
					hits = append(hits, [2]string{string(pat), p[1]})
					break
				}
				continue
			}
			if globMatch(lower, p[0]) {
				hits = append(hits, p)
				break
			}
		}
	}
	c.mapLen(len(hits))
	for _, p := range hits {
		c.bulk(p[0])
		c.bulk(p[1])
	}
}

// configSet answers CONFIG SET param value [param value ...]: every
// value is checked before any is set, as Redis does. The settings it
// changes are the ones the server has: stream-node-max-entries and
// stream-node-max-bytes (the node size of every stream, see
// xstream.DB.SetNodeSize), maxclients, slowlog-log-slower-than,
// slowlog-max-len, active-expire-effort (expire_cycle.go) and
// client-output-buffer-limit (outlimit.go).
func configSet(c *conn, args [][]byte) {
	if len(args)%2 != 0 {
		c.err(errSyntax)
		return
	}
	type change struct {
		name   string
		v      int64
		limits [3]bufLimit // client-output-buffer-limit
	}
	var changes []change
	seen := map[string]bool{}
	for i := 2; i < len(args); i += 2 {
		name := strings.ToLower(string(args[i]))
		fail := func(why string) {
			c.err(fmt.Sprintf("ERR CONFIG SET failed (possibly related to argument '%s') - %s", args[i], why))
		}
		var v int64
		var err error
		var limits [3]bufLimit
		switch name {
		case "client-output-buffer-limit":
			c.srv.mu.Lock()
			cur := c.srv.bufLimits
			c.srv.mu.Unlock()
			var why string
			if limits, why = parseBufLimits(string(args[i+1]), cur); why != "" {
				fail(why)
				return
			}
		case "stream-node-max-entries":
			v, err = strconv.ParseInt(string(args[i+1]), 10, 64)
			if err != nil {
				fail("argument couldn't be parsed into an integer")
				return
			}
			if v < 0 {
				fail("argument must be between 0 and 9223372036854775807 inclusive")
				return
			}
		case "stream-node-max-bytes":
			if v, err = ParseMemory(string(args[i+1])); err != nil {
				fail("argument must be a memory value")
				return
			}
		case "slowlog-log-slower-than", "slowlog-max-len":
			v, err = strconv.ParseInt(string(args[i+1]), 10, 64)
			if err != nil {
				fail("argument couldn't be parsed into an integer")
				return
			}
			least := int64(0)
			if name == "slowlog-log-slower-than" {
				least = -1 // off
			}
			if v < least {
				fail("argument must be between " + strconv.FormatInt(least, 10) + " and 9223372036854775807 inclusive")
				return
			}
		case "maxclients", "active-expire-effort":
			v, err = strconv.ParseInt(string(args[i+1]), 10, 64)
			if err != nil {
				fail("argument couldn't be parsed into an integer")
				return
			}
			most := int64(4294967295)
			if name == "active-expire-effort" {
				most = 10
			}
			if v < 1 || v > most {
				fail("argument must be between 1 and " + strconv.FormatInt(most, 10) + " inclusive")
				return
			}
		default:
			c.err(fmt.Sprintf("ERR Unknown option or number of arguments for CONFIG SET - '%s'", args[i]))
			return
		}
		if seen[name] {
			fail("duplicate parameter")
			return
		}
		seen[name] = true
		changes = append(changes, change{name, v, limits})
	}
	s := c.srv
	s.mu.Lock()
	node := false
	for _, ch := range changes {
		switch ch.name {
		case "stream-node-max-entries":
			s.nodeEntries, node = ch.v, true
		case "stream-node-max-bytes":
			s.nodeBytes, node = ch.v, true
		case "maxclients":
			s.opts.MaxClients = int(min(ch.v, 1<<31-1))
		case "active-expire-effort":
			s.expireEffort.Store(ch.v)
		case "slowlog-log-slower-than":
			s.slow.threshold.Store(ch.v)
		case "slowlog-max-len":
			s.slow.maxLen.Store(ch.v)
		case "client-output-buffer-limit":
			s.bufLimits = ch.limits
			limits := ch.limits
			s.outLimits.Store(&limits)
		}
	}
	s.nodeSizeSet = s.nodeSizeSet || node
	entries, bytes := s.nodeEntries, s.nodeBytes
	dbs := s.dbList()
	s.mu.Unlock()
	if node {
		for _, db := range dbs {
			if db != nil {
				db.SetNodeSize(nodeSize(entries, bytes))
			}
		}
	}
	c.ok()
}

// nodeSize turns the CONFIG values into xstream's node size (beyond 2^30,
// Redis's own cap, there is no limit).
func nodeSize(entries, bytes int64) (int, int) {
	if entries > 1<<30 {
		entries = 0
	}
	if bytes > 1<<30 {
		bytes = 0
	}
	return int(entries), int(bytes)
}

// settings returns the options and node size as CONFIG SET left them
// (it changes MaxClients and the node size under s.mu).
func (s *Server) settings() (opts Options, nodeEntries, nodeBytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opts, s.nodeEntries, s.nodeBytes
}

// port returns the port the server listens on, "" before Start.
func (s *Server) port() string {
	_, p, _ := net.SplitHostPort(s.Addr())
	return p
}
