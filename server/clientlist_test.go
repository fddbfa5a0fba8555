package server

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// CLIENT LIST and CLIENT INFO against a redis-server 7.0 of the test's
// own: the same clients in the same states on both give the same lines
// but for the client IDs (numbered in order on each side), addresses,
// descriptors, ages, idle times and memory figures.

// clientListVaries matches the fields that differ between the servers.
var clientListVaries = regexp.MustCompile(`\b(addr|laddr|fd|age|idle|qbuf|qbuf-free|argv-mem|multi-mem|rbs|rbp|obl|oll|omem|tot-mem)=[^ ]*`)

// clientIDs matches the fields holding a client ID.
var clientIDs = regexp.MustCompile(`\b(id|redir)=([0-9]+)`)

// normalizeClientList rewrites the lines of a CLIENT LIST or INFO reply
// (a bulk or verbatim string) for comparison: IDs are replaced by the
// names of ids, and the lines sorted by ID (Redis's cron rotates its
// list of clients).
func normalizeClientList(reply []byte, ids map[string]string) string {
	head, body, _ := strings.Cut(string(reply), "\r\n")
	lines := strings.Split(strings.TrimSuffix(body, "\n\r\n"), "\n")
	idOf := func(l string) int {
		n, _ := strconv.Atoi(clientIDs.FindStringSubmatch(l + " id=0")[2])
		return n
	}
	slices.SortFunc(lines, func(a, b string) int { return cmp.Compare(idOf(a), idOf(b)) })
	s := head + "\r\n" + strings.Join(lines, "\n") + "\n\r\n"
	s = clientListVaries.ReplaceAllString(s, "$1=*")
	s = clientIDs.ReplaceAllStringFunc(s, func(m string) string {
		k, v, _ := strings.Cut(m, "=")
		if name, ok := ids[v]; ok {
			return k + "=" + name
		}
		return m
	})
	// The length of the bulk string varies with what was replaced.
	_, rest, _ := strings.Cut(s, "\r\n")
	return rest
}

func TestDiffClientList(t *testing.T) {
	type side struct {
		addr  string
		conns map[string]*wireConn
		ids   map[string]string // client ID -> name
	}
	sides := []*side{{addr: redisWithT(t)}, {addr: RunT(t).Addr()}}
	names := []string{"ctl", "sub", "sub3", "mon", "trk", "bc", "target", "red", "mul", "blk", "ne", "rst"}
	for _, s := range sides {
		s.conns, s.ids = map[string]*wireConn{}, map[string]string{}
		for _, name := range names {
			rc := dialWire(t, s.addr)
			id := rc.do(t, "CLIENT", "ID")
			s.conns[name] = rc
			s.ids[strings.TrimSuffix(strings.TrimPrefix(string(id), ":"), "\r\n")] = name
		}
	}
	// each runs a command on the named connection of both servers and
	// compares the replies, with IDs named.
	each := func(name string, args ...string) {
		t.Helper()
		var got [2]string
		for i, s := range sides {
			sent := append([]string(nil), args...)
			for k, a := range sent {
				for id, n := range s.ids {
					if a == "{"+n+"}" {
						sent[k] = id
					}
				}
			}
			r := s.conns[name].do(t, sent...)
			got[i] = string(r)
			if strings.EqualFold(args[0], "CLIENT") {
				got[i] = normalizeClientList(r, s.ids)
			}
		}
		if got[0] != got[1] {
			t.Fatalf("%s %q:\n  redis:   %q\n  xstream: %q", name, args, got[0], got[1])
		}
	}
	list := func() {
		t.Helper()
		each("ctl", "CLIENT", "LIST")
		each("ctl", "CLIENT", "LIST", "TYPE", "pubsub")
		each("ctl", "CLIENT", "LIST", "TYPE", "normal")
	}
	list()
	each("sub", "SUBSCRIBE", "a")
	each("sub", "SUBSCRIBE", "b")
	for _, s := range sides {
		s.conns["sub3"].do(t, "HELLO", "3") // its reply has the ID
	}
	var subs [2][]byte
	for i, s := range sides {
		s.conns["sub3"].send(t, "SUBSCRIBE", "x")
		subs[i] = s.conns["sub3"].push(t) // a push in RESP3
	}
	if string(subs[0]) != string(subs[1]) {
		t.Fatalf("SUBSCRIBE in RESP3: %q, %q", subs[0], subs[1])
	}
	each("mon", "MONITOR")
	each("trk", "CLIENT", "TRACKING", "ON")
	each("trk", "XLEN", "k")
	each("bc", "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "p")
	each("red", "CLIENT", "TRACKING", "ON", "REDIRECT", "{target}")
	each("red", "XLEN", "k")
	each("mul", "MULTI")
	each("mul", "XADD", "m", "1-1", "f", "v")
	each("mul", "XLEN", "m")
	each("ne", "CLIENT", "NO-EVICT", "on")
	each("rst", "CLIENT", "NO-EVICT", "on")
	each("rst", "CLIENT", "TRACKING", "ON")
	each("rst", "CLIENT", "INFO")
	each("rst", "RESET")
	each("rst", "CLIENT", "INFO")
	each("trk", "CLIENT", "INFO")
	each("bc", "CLIENT", "INFO")
	list()
	// The redirect target goes: the next invalidation finds it gone.
	for _, s := range sides {
		s.conns["target"].nc.Close()
	}
	for _, s := range sides {
		var id string
		for k, n := range s.ids {
			if n == "target" {
				id = k
			}
		}
		deadline := time.Now().Add(10 * time.Second)
		for strings.Contains(string(s.conns["ctl"].do(t, "CLIENT", "LIST")), "id="+id+" ") {
			if time.Now().After(deadline) {
				t.Fatal("the closed client stays listed")
			}
			time.Sleep(time.Millisecond) // polling the server's state
		}
	}
	each("ctl", "XADD", "k", "1-1", "f", "v")
	list()
	// A blocked read.
	for _, s := range sides {
		s.conns["blk"].send(t, "XREAD", "BLOCK", "0", "STREAMS", "nokey", "$")
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(string(s.conns["ctl"].do(t, "INFO", "clients")), "blocked_clients:1\r") {
			if time.Now().After(deadline) {
				t.Fatal("XREAD never blocked")
			}
			time.Sleep(time.Millisecond)
		}
	}
	list()
	each("ctl", "XADD", "nokey", "1-1", "f", "v")
	for _, s := range sides {
		s.conns["blk"].reply(t)
	}
	each("mul", "EXEC")
	each("sub", "UNSUBSCRIBE", "a")
	list()
	each("sub", "UNSUBSCRIBE", "b")
	each("ne", "NOSUCH")
	each("trk", "XLEN")
	each("bc", "XINFO", "NOSUCH")
	each("ne", "CLIENT", "NO-EVICT", "off")
	list()
}

// fieldOf returns the integer field name of a CLIENT LIST or INFO line
// (-1 when it is not there).
func fieldOf(line, name string) int64 {
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, name+"="); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}

// A client's own CLIENT INFO gives Redis's figures of its query buffer
// (the requests of the batch, the running one included), of the running
// command's arguments and of the replies before it not yet written.
func TestDiffClientInfoBuffers(t *testing.T) {
	addrs := []string{redisWithT(t), RunT(t).Addr()}
	var got [2][]string
	for i, addr := range addrs {
		c := dialWire(t, addr)
		for _, batch := range [][][]string{
			{{"CLIENT", "INFO"}},
			{{"PING"}, {"CLIENT", "INFO"}},
			{{"ECHO", strings.Repeat("e", 100)}, {"PING"}, {"CLIENT", "INFO"}},
			{{"CLIENT", "LIST", "ID", "1", "2", "3", "4", "5", "6", "7", "8", "9"}},
		} {
			var req strings.Builder
			for _, args := range batch {
				req.WriteString(resp(args...))
			}
			if _, err := c.nc.Write([]byte(req.String())); err != nil { // one write: one batch on both
				t.Fatal(err)
			}
			for range len(batch) - 1 {
				c.reply(t)
			}
			line := string(c.reply(t))
			var row []string
			for _, f := range []string{"qbuf", "argv-mem", "obl", "oll", "omem"} {
				row = append(row, f+"="+strconv.FormatInt(fieldOf(line, f), 10))
			}
			got[i] = append(got[i], strings.Join(row, " "))
		}
	}
	for i := range got[0] {
		if got[0][i] != got[1][i] {
			t.Errorf("batch %d:\n  redis:   %s\n  xstream: %s", i, got[0][i], got[1][i])
		}
	}
}

// Another client's buffers: a partial request in its query buffer, pushes
// queued for it while it is blocked, all counted in tot-mem.
func TestClientListBuffers(t *testing.T) {
	srv := RunT(t)
	ctl := dialWire(t, srv.Addr())
	line := func(id string) string {
		t.Helper()
		return string(ctl.do(t, "CLIENT", "LIST", "ID", id))
	}
	idOf := func(c *wireConn) string {
		return strings.Trim(string(c.do(t, "CLIENT", "ID")), ":\r\n")
	}
	// waitFor asks for the line of id until ok holds: the client's
	// goroutine publishes its state once its read returns or its command
	// blocks (each CLIENT LIST is a round trip; no sleep).
	waitFor := func(id string, ok func(l string) bool) string {
		t.Helper()
		for i := 0; ; i++ {
			l := line(id)
			if ok(l) {
				return l
			}
			if i > 100000 {
				t.Fatalf("never: %s", l)
			}
		}
	}
	totMem := func(l string) int64 {
		return fieldOf(l, "qbuf") + fieldOf(l, "qbuf-free") + fieldOf(l, "rbs") + fieldOf(l, "omem") + fieldOf(l, "argv-mem") + fieldOf(l, "multi-mem")
	}

	part := dialWire(t, srv.Addr())
	pid := idOf(part)
	l := line(pid)
	if fieldOf(l, "qbuf") != 0 || fieldOf(l, "obl") != 0 || fieldOf(l, "qbuf-free") <= 0 || fieldOf(l, "rbs") <= 0 || fieldOf(l, "tot-mem") != totMem(l) {
		t.Fatalf("idle client: %s", l)
	}
	const partial = "*5\r\n$4\r\nXADD\r\n$1\r\nk\r\n$1\r\n*\r\n$1"
	if _, err := part.nc.Write([]byte(partial)); err != nil {
		t.Fatal(err)
	}
	l = waitFor(pid, func(l string) bool { return fieldOf(l, "qbuf") == int64(len(partial)) })
	if fieldOf(l, "qbuf-free") <= 0 || fieldOf(l, "tot-mem") != totMem(l) {
		t.Fatalf("partial request: %s", l)
	}

	// A RESP3 tracking client blocked in XREAD gets its invalidations
	// when the block ends: meanwhile they are queued (oll, omem).
	blk := dialWire(t, srv.Addr())
	bid := idOf(blk)
	blk.do(t, "HELLO", "3")
	blk.do(t, "CLIENT", "TRACKING", "ON", "BCAST")
	blk.send(t, "XREAD", "BLOCK", "0", "STREAMS", "never", "$")
	before := waitFor(bid, func(l string) bool { return strings.Contains(l, " flags=btB ") })
	if fieldOf(before, "oll") != 0 || fieldOf(before, "omem") != 0 {
		t.Fatalf("blocked, nothing queued: %s", before)
	}
	ctl.do(t, "XADD", "a", "*", "f", "v")
	ctl.do(t, "XADD", "b", "*", "f", "v")
	after := line(bid)
	if fieldOf(after, "oll") != 2 || fieldOf(after, "omem") <= 0 || fieldOf(after, "tot-mem") != totMem(after) ||
		fieldOf(after, "tot-mem") != fieldOf(before, "tot-mem")+fieldOf(after, "omem") {
		t.Fatalf("two invalidations queued:\n  before: %s\n  after:  %s", before, after)
	}
}
