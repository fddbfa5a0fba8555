package server

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The client commands whose replies do not name connections answer as
// Redis 7.0 does, errors included.
func TestDiffClientCommands(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		for _, args := range [][]string{
			{"CLIENT", "NO-EVICT", "on"}, {"CLIENT", "NO-EVICT", "OFF"}, {"CLIENT", "NO-EVICT", "x"}, {"CLIENT", "NO-EVICT"},
			{"CLIENT", "REPLY", "x"}, {"CLIENT", "REPLY"},
			{"LATENCY", "LATEST"}, {"LATENCY", "RESET"}, {"LATENCY", "RESET", "command"}, {"LATENCY"},
			{"CLIENT", "KILL", "ID", "999999"}, {"CLIENT", "KILL", "ADDR", "1.2.3.4:5"}, {"CLIENT", "KILL", "1.2.3.4:5"},
			{"CLIENT", "KILL", "ID", "x"}, {"CLIENT", "KILL", "ID", "0"}, {"CLIENT", "KILL", "TYPE", "bad"},
			{"CLIENT", "KILL", "ID"}, {"CLIENT", "KILL", "SKIPME", "maybe"}, {"CLIENT", "KILL", "NOSUCH", "x"},
			{"CLIENT", "LIST", "TYPE", "bad"}, {"CLIENT", "LIST", "ID", "999999"}, {"CLIENT", "LIST", "ID", "x"},
			{"CLIENT", "LIST", "TYPE", "pubsub"}, {"CLIENT", "LIST", "bad"},
			{"RESET"}, {"RESET", "x"},
		} {
			p.do(args...)
		}
	})
}

// requests writes reqs as RESP requests.
func requests(reqs [][]string) string {
	var b strings.Builder
	for _, r := range reqs {
		b.WriteString(resp(r...))
	}
	return b.String()
}

// CLIENT REPLY OFF, ON and SKIP leave out the replies Redis leaves out:
// the same bytes as redis-server's.
func TestDiffClientReply(t *testing.T) {
	if realAddr == "" {
		t.Skip("no Redis to compare with")
	}
	srv := RunT(t)
	for _, reqs := range [][][]string{
		{{"CLIENT", "REPLY", "OFF"}, {"PING"}, {"XLEN", "x"}, {"CLIENT", "REPLY", "ON"}, {"PING"}},
		{{"CLIENT", "REPLY", "SKIP"}, {"PING"}, {"ECHO", "a"}},
		{{"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "OFF"}, {"PING"}, {"CLIENT", "REPLY", "ON"}},
		{{"CLIENT", "REPLY", "OFF"}, {"CLIENT", "REPLY", "SKIP"}, {"PING"}, {"CLIENT", "REPLY", "ON"}, {"PING"}},
		{{"CLIENT", "REPLY", "OFF"}, {"NOSUCH"}, {"RESET"}, {"PING"}},
	} {
		want, got := rawExchange(t, realAddr, requests(reqs), true), rawExchange(t, srv.Addr(), requests(reqs), true)
		if !slices.Equal(want, got) {
			t.Errorf("%q:\n  redis:   %q\n  xstream: %q", reqs, want, got)
		}
	}
}

// CLIENT INFO and CLIENT LIST describe the connections: ID, address,
// name, database, protocol and last command, in Redis's format.
func TestClientInfoAndList(t *testing.T) {
	srv := RunT(t)
	a := newClient(t, srv.Addr())
	b := newClientProto(t, srv.Addr(), 3)
	a.do(t, "CLIENT", "SETNAME", "alpha")
	a.do(t, "SELECT", "3")
	b.do(t, "XLEN", "x")
	id := a.do(t, "CLIENT", "ID").n
	info := a.do(t, "CLIENT", "INFO").s
	fields := clientFields(t, info)
	for k, v := range map[string]string{"id": strconv.FormatInt(id, 10), "name": "alpha", "db": "3", "resp": "2", "cmd": "client|info", "flags": "N", "user": "default"} {
		if fields[k] != v {
			t.Errorf("CLIENT INFO %s=%q, want %q: %s", k, fields[k], v, info)
		}
	}
	if fields["addr"] == "" || fields["laddr"] != srv.Addr() {
		t.Errorf("addresses: %s", info)
	}
	list := strings.TrimPrefix(b.do(t, "CLIENT", "LIST").s, "txt:")
	lines := strings.Split(strings.TrimSuffix(list, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("CLIENT LIST: %q", list)
	}
	first, second := clientFields(t, lines[0]), clientFields(t, lines[1])
	if first["name"] != "alpha" || first["cmd"] != "client|info" || second["resp"] != "3" || second["cmd"] != "client|list" {
		t.Errorf("CLIENT LIST:\n%s", list)
	}
	if only := strings.TrimPrefix(b.do(t, "CLIENT", "LIST", "ID", strconv.FormatInt(id, 10)).s, "txt:"); clientFields(t, only)["name"] != "alpha" || strings.Count(only, "\n") != 1 {
		t.Errorf("CLIENT LIST ID %d: %q", id, only)
	}
	// RESET forgets the name and the database.
	if r := a.do(t, "RESET"); r.s != "RESET" {
		t.Fatalf("RESET: %v", r)
	}
	if f := clientFields(t, a.do(t, "CLIENT", "INFO").s); f["name"] != "" || f["db"] != "0" {
		t.Errorf("after RESET: %v", f)
	}
}

func clientFields(t *testing.T, line string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, kv := range strings.Fields(strings.TrimPrefix(line, "txt:")) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			t.Fatalf("field %q in %q", kv, line)
		}
		out[k] = v
	}
	return out
}

// CLIENT KILL closes the clients it matches, the caller too with SKIPME
// no (after its reply), and the old form by address.
func TestClientKill(t *testing.T) {
	srv := RunT(t)
	a := newClient(t, srv.Addr())
	victim := newClient(t, srv.Addr())
	vid := victim.do(t, "CLIENT", "ID").n
	if r := a.do(t, "CLIENT", "KILL", "ID", strconv.FormatInt(vid, 10)); r.n != 1 {
		t.Fatalf("CLIENT KILL ID: %v", r)
	}
	if _, err := victim.send("PING"); err == nil {
		t.Error("the killed client still works")
	}
	other := newClient(t, srv.Addr())
	addr := clientFields(t, other.do(t, "CLIENT", "INFO").s)["addr"]
	if r := a.do(t, "CLIENT", "KILL", addr); r.s != "OK" {
		t.Fatalf("CLIENT KILL %s: %v", addr, r)
	}
	if _, err := other.send("PING"); err == nil {
		t.Error("the client killed by address still works")
	}
	aid := strconv.FormatInt(a.do(t, "CLIENT", "ID").n, 10)
	if r := a.do(t, "CLIENT", "KILL", "ID", aid); r.n != 0 {
		t.Errorf("SKIPME yes (the default) killed the caller: %v", r)
	}
	if r := a.do(t, "CLIENT", "KILL", "ID", aid, "SKIPME", "no"); r.n != 1 {
		t.Errorf("SKIPME no: %v", r)
	}
	if _, err := a.send("PING"); err == nil {
		t.Error("the caller survived CLIENT KILL SKIPME no")
	}
}
