package server

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ROLE, WAIT, FUNCTION and CONFIG answer as Redis 7.0 does on a master
// with no replicas and no functions, errors included.
func TestDiffAdmin(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		for _, args := range [][]string{
			{"ROLE"}, {"ROLE", "x"},
			{"WAIT", "0", "0"}, {"WAIT", "1", "10"}, {"WAIT", "x", "0"}, {"WAIT", "0", "x"}, {"WAIT", "0", "-1"}, {"WAIT", "0"},
			{"FUNCTION", "FLUSH"}, {"FUNCTION", "FLUSH", "async"}, {"FUNCTION", "FLUSH", "SYNC"}, {"FUNCTION", "FLUSH", "bad"},
			{"FUNCTION", "FLUSH", "SYNC", "x"},
			{"FUNCTION", "LIST"}, {"FUNCTION", "LIST", "WITHCODE"}, {"FUNCTION", "LIST", "LIBRARYNAME", "x*"},
			{"FUNCTION", "LIST", "bad"}, {"FUNCTION", "LIST", "LIBRARYNAME"},
			{"FUNCTION", "STATS"}, {"FUNCTION", "STATS", "x"}, {"FUNCTION"},
			{"CONFIG", "RESETSTAT"}, {"CONFIG", "RESETSTAT", "x"},
			{"CONFIG", "GET", "maxclients"}, {"CONFIG", "GET", "databases"}, {"CONFIG", "GET", "save"},
			{"CONFIG", "GET", "appendonly"}, {"CONFIG", "GET", "APPENDFSYNC"}, {"CONFIG", "GET", "nosuch*"}, {"CONFIG", "GET"},
			{"CONFIG", "GET", "maxmemory", "maxmemory"}, // (several names: Redis answers in its hash order)
		} {
			p.do(args...)
		}
		p.do("DEL", "ttlkey")
		p.do("XADD", "ttlkey", "1-1", "a", "1")
		for _, args := range [][]string{
			{"TTL", "ttlkey"}, {"PTTL", "ttlkey"}, {"TTL", "nokey"}, {"PTTL", "nokey"}, {"TTL"}, {"TTL", "a", "b"},
			{"OBJECT", "ENCODING", "ttlkey"}, {"OBJECT", "ENCODING", "nokey"}, {"OBJECT", "ENCODING", "ttlkey", "x"},
			{"OBJECT", "REFCOUNT", "ttlkey"}, {"OBJECT", "REFCOUNT", "nokey"}, {"OBJECT", "nosuch", "ttlkey"}, {"OBJECT"},
			{"OBJECT", "FREQ", "ttlkey"}, {"OBJECT", "FREQ", "nokey"},
			{"MEMORY", "USAGE", "nokey"}, {"MEMORY", "USAGE", "ttlkey", "SAMPLES", "x"}, {"MEMORY", "USAGE", "ttlkey", "BAD"},
			{"MEMORY", "USAGE", "ttlkey", "SAMPLES"}, {"MEMORY", "USAGE"},
		} {
			p.do(args...)
		}
		// MEMORY USAGE of a stream is an integer on both (their sizes differ).
		if w, g := p.real.do(t, "MEMORY", "USAGE", "ttlkey"), p.xs.do(t, "MEMORY", "USAGE", "ttlkey"); w.kind != ':' || g.kind != ':' || g.n <= 0 {
			t.Errorf("MEMORY USAGE: redis %v, xstream %v", w, g)
		}
		// Inside MULTI, WAIT does not block (Redis answers at once).
		p.do("MULTI")
		p.do("WAIT", "5", "0")
		p.do("EXEC")
	})
}

// cmdstatLine is one line of INFO commandstats without its times.
var cmdstatLine = regexp.MustCompile(`^cmdstat_([^:]+):calls=(\d+),usec=\d+,usec_per_call=[\d.]+,rejected_calls=(\d+),failed_calls=(\d+)$`)

// statLines returns INFO section's lines name:value, with commandstats'
// times left out.
func statLines(t *testing.T, c *client, section string) map[string]string {
	t.Helper()
	r := c.do(t, "INFO", section)
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimPrefix(r.s, "txt:"), "\r\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		if m := cmdstatLine.FindStringSubmatch(line); m != nil {
			out[m[1]] = "calls=" + m[2] + ",rejected=" + m[3] + ",failed=" + m[4]
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("INFO %s line %q", section, line)
		}
		out[k] = v
	}
	return out
}

// INFO commandstats and errorstats count as Redis 7.0 does: calls, with
// those that replied an error as failed, refusals before running (arity,
// in a transaction) as rejected, error replies by their code; CONFIG
// RESETSTAT zeroes them.
func TestDiffCommandStats(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		p.do("DEL", "cs")
		p.do("CONFIG", "RESETSTAT")
		for _, args := range [][]string{
			{"XADD", "cs", "1-1", "a", "1"},
			{"XADD", "cs", "1-1", "a", "1"}, // failed: ID too small
			{"XADD", "cs"},                  // rejected: arity
			{"XGROUP", "CREATE", "cs", "g", "0"},
			{"XGROUP", "CREATE", "cs", "g", "0"}, // BUSYGROUP
			{"XREADGROUP", "GROUP", "nog", "c", "STREAMS", "cs", ">"},
			{"NOSUCH", "x"}, // an unknown command counts only as an error
			{"XLEN", "cs"},
			{"MULTI"}, {"XLEN", "cs"}, {"XADD", "cs", "0-1", "a", "1"}, {"EXEC"},
		} {
			p.do(args...)
		}
		for _, section := range []string{"commandstats", "errorstats"} {
			want, got := statLines(t, p.real, section), statLines(t, p.xs, section)
			if !maps.Equal(want, got) {
				t.Errorf("INFO %s:\n  redis:   %v\n  xstream: %v", section, want, got)
			}
		}
		p.do("CONFIG", "RESETSTAT")
		if got, want := statLines(t, p.xs, "commandstats"), map[string]string{"config|resetstat": "calls=1,rejected=0,failed=0"}; !maps.Equal(got, want) {
			t.Errorf("after CONFIG RESETSTAT: %v", got)
		}
		if got := statLines(t, p.xs, "errorstats"); len(got) != 0 {
			t.Errorf("errorstats after CONFIG RESETSTAT: %v", got)
		}
	})
}

// INFO without arguments has Redis 7.0's default sections in its order;
// commandstats comes with "all" or by name; the fields tools read are
// there and true.
func TestInfoSections(t *testing.T) {
	p := newPair(t)
	headers := func(c *client, args ...string) []string {
		var hs []string
		for _, line := range strings.Split(c.do(t, append([]string{"INFO"}, args...)...).s, "\r\n") {
			if strings.HasPrefix(line, "# ") {
				hs = append(hs, line[2:])
			}
		}
		return hs
	}
	for _, args := range [][]string{nil, {"default"}} {
		if want, got := headers(p.real, args...), headers(p.xs, args...); !slices.Equal(want, got) {
			t.Errorf("INFO %v sections:\n  redis:   %v\n  xstream: %v", args, want, got)
		}
	}
	if got := headers(p.xs, "clients", "CPU"); !slices.Equal(got, []string{"Clients", "CPU"}) {
		t.Errorf("INFO clients CPU: %v", got)
	}
	for _, a := range []string{"all", "everything", "commandstats"} {
		if !slices.Contains(headers(p.xs, a), "Commandstats") {
			t.Errorf("INFO %s has no commandstats", a)
		}
	}
	srv := p.xs.do(t, "INFO", "server").s
	if !strings.Contains(srv, "process_id:"+strconv.Itoa(os.Getpid())+"\r\n") {
		t.Errorf("INFO server: process_id is not %d:\n%s", os.Getpid(), srv)
	}
	if !regexp.MustCompile(`run_id:[0-9a-f]{40}\r\n`).MatchString(srv) {
		t.Errorf("INFO server: no run_id:\n%s", srv)
	}
	for section, fields := range map[string][]string{
		"clients":     {"connected_clients", "blocked_clients", "maxclients"},
		"memory":      {"used_memory", "used_memory_human", "used_memory_rss", "used_memory_peak", "maxmemory", "maxmemory_policy"},
		"replication": {"role", "connected_slaves"},
		"cpu":         {"used_cpu_sys", "used_cpu_user"},
		"stats":       {"total_connections_received", "total_commands_processed", "total_error_replies"},
	} {
		want, got := statLines(t, p.real, section), statLines(t, p.xs, section)
		for _, f := range fields {
			if _, ok := want[f]; !ok {
				t.Fatalf("Redis's INFO %s has no %s", section, f)
			}
			if _, ok := got[f]; !ok {
				t.Errorf("INFO %s has no %s", section, f)
			}
		}
	}
	mem := statLines(t, p.xs, "memory")
	used, err1 := strconv.ParseInt(mem["used_memory"], 10, 64)
	peak, err2 := strconv.ParseInt(mem["used_memory_peak"], 10, 64)
	rss, err3 := strconv.ParseInt(mem["used_memory_rss"], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || used <= 0 || peak < used || rss <= 0 {
		t.Errorf("INFO memory: used %q, peak %q, rss %q", mem["used_memory"], mem["used_memory_peak"], mem["used_memory_rss"])
	}
	if role := statLines(t, p.xs, "replication")["role"]; role != "master" {
		t.Errorf("role %q", role)
	}
	if pol := mem["maxmemory_policy"]; pol != "noeviction" {
		t.Errorf("maxmemory_policy %q", pol)
	}
}

// blocked_clients counts the clients waiting in a blocking command, as
// Redis's does, and connected_clients the connections.
func TestInfoBlockedClients(t *testing.T) {
	srv := RunT(t)
	c := newClient(t, srv.Addr())
	before := statLines(t, c, "clients")
	if n, err := strconv.Atoi(before["connected_clients"]); err != nil || n < 1 || before["blocked_clients"] != "0" {
		t.Fatalf("INFO clients before: %v", before)
	}

	blocker := newClient(t, srv.Addr())
	done := make(chan *reply, 1)
	go func() {
		r, _ := blocker.send("XREAD", "BLOCK", "0", "STREAMS", "bk", "$")
		done <- r
	}()
	for statLines(t, c, "clients")["blocked_clients"] != "1" {
		select {
		case r := <-done:
			t.Fatalf("XREAD ended before an add: %v", r)
		default:
		}
	}
	c.do(t, "XADD", "bk", "1-1", "a", "1")
	<-done
	if n := statLines(t, c, "clients")["blocked_clients"]; n != "0" {
		t.Errorf("blocked_clients %s after the read ended", n)
	}
}

// WAIT with replicas to wait for blocks for its timeout, or until the
// client goes away, and answers 0.
func TestWaitBlocks(t *testing.T) {
	srv := RunT(t)
	c := newClient(t, srv.Addr())
	w := newClient(t, srv.Addr())
	done := make(chan *reply, 1)
	go func() {
		r, _ := w.send("WAIT", "1", "0")
		done <- r
	}()
	for statLines(t, c, "clients")["blocked_clients"] != "1" {
	}
	if err := w.rdb.Close(); err != nil {
		t.Fatal(err)
	}
	<-done
	for statLines(t, c, "clients")["blocked_clients"] != "0" {
	}
	if r := c.do(t, "WAIT", "2", "20"); r.kind != ':' || r.n != 0 {
		t.Errorf("WAIT 2 20: %v", r)
	}
}

// CONFIG SET stream-node-max-entries and -bytes set the node size of
// every stream, and so what an approximate trim removes, as in Redis; its
// errors are Redis's and leave the settings as they were.
func TestDiffConfigSetNodeSize(t *testing.T) {
	p := newPair(t)
	defer p.do("CONFIG", "SET", "stream-node-max-entries", "100", "stream-node-max-bytes", "4096")
	for _, args := range [][]string{
		{"CONFIG", "SET", "stream-node-max-entries", "x"},
		{"CONFIG", "SET", "stream-node-max-entries", "-1"},
		{"CONFIG", "SET", "stream-node-max-bytes", "x"},
		{"CONFIG", "SET", "nosuch", "1"},
		{"CONFIG", "SET", "stream-node-max-entries", "5", "nosuch", "1"},
		{"CONFIG", "SET", "stream-node-max-entries", "1", "stream-node-max-entries", "2"},
		{"CONFIG", "SET", "stream-node-max-entries", "1", "x"},
		{"CONFIG", "SET", "stream-node-max-entries"},
		{"CONFIG", "GET", "stream-node-max-entries"}, {"CONFIG", "GET", "stream-node-max-bytes"},
		{"CONFIG", "SET", "STREAM-NODE-MAX-ENTRIES", "10", "stream-node-max-bytes", "1kb"},
		{"CONFIG", "GET", "stream-node-max-entries"}, {"CONFIG", "GET", "stream-node-max-bytes"},
		{"DEL", "ns"},
	} {
		p.do(args...)
	}
	for i := 1; i <= 100; i++ {
		p.do("XADD", "ns", itoa(i)+"-1", "f", "v")
	}
	p.do("XTRIM", "ns", "MAXLEN", "~", "25")
	p.do("XLEN", "ns")
	p.do("XRANGE", "ns", "-", "+", "COUNT", "1")
	// By bytes: nodes of at most 100 bytes hold a few of these entries.
	p.do("CONFIG", "SET", "stream-node-max-entries", "0", "stream-node-max-bytes", "100")
	p.do("DEL", "ns")
	for i := 1; i <= 50; i++ {
		p.do("XADD", "ns", itoa(i)+"-1", "field", "a-longer-value-"+itoa(i))
	}
	p.do("XTRIM", "ns", "MAXLEN", "~", "20")
	p.do("XLEN", "ns")
	p.do("CONFIG", "SET", "maxclients", "0")
}
