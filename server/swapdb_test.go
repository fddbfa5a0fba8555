package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiffSwapDB(t *testing.T) {
	p := newPair(t)
	t.Cleanup(func() { p.real.do(t, "FLUSHALL") })
	p.do("XADD", "a", "1-1", "f", "0")
	p.do("EXPIREAT", "a", "2100000000")
	p.do("SELECT", "3")
	p.do("XADD", "b", "1-1", "f", "3")
	p.do("SWAPDB", "0", "3")
	p.do("KEYS", "*") // DB 3 now holds what DB 0 held
	p.do("EXPIRETIME", "a")
	p.do("SELECT", "0")
	p.do("XRANGE", "b", "-", "+")
	p.keyspace()
	p.do("SWAPDB", "3", "3")
	p.do("SWAPDB", "3", "0")
	p.do("KEYS", "*")
	p.keyspace()

	// Bad input, and nothing changes.
	p.do("SWAPDB", "x", "0")
	p.do("SWAPDB", "0", "x")
	p.do("SWAPDB", "0", "16")
	p.do("SWAPDB", "-1", "0")
	p.do("SWAPDB", "0")
	p.do("SWAPDB", "0", "1", "2")
	p.do("KEYS", "*")
	p.keyspace()
}

// A durable server records the swap (Dir/dbmap): a restart finds each
// DB's keys under the index SWAPDB gave them.
func TestSwapDBDurable(t *testing.T) {
	dir := t.TempDir()
	srv := RunTDir(t, dir)
	c := newClient(t, srv.Addr())
	c.do(t, "XADD", "zero", "1-1", "f", "v")
	c.do(t, "SELECT", "5")
	c.do(t, "XADD", "five", "1-1", "f", "v")
	if r := c.do(t, "SWAPDB", "0", "5"); r.s != "OK" {
		t.Fatalf("SWAPDB: %+v", r)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	keysOf := func(db string) string {
		t.Helper()
		c := newClient(t, srv.Addr())
		c.do(t, "SELECT", db)
		var ks []string
		for _, k := range c.do(t, "KEYS", "*").kids {
			ks = append(ks, k.s)
		}
		return strings.Join(ks, " ")
	}
	if k0, k5 := keysOf("0"), keysOf("5"); k0 != "five" || k5 != "zero" {
		t.Fatalf("after a restart DB 0 has %q, DB 5 %q", k0, k5)
	}
	c = newClient(t, srv.Addr())
	c.do(t, "SWAPDB", "5", "7")
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if k0, k5, k7 := keysOf("0"), keysOf("5"), keysOf("7"); k0 != "five" || k5 != "" || k7 != "zero" {
		t.Fatalf("after a second swap and restart DB 0 has %q, DB 5 %q, DB 7 %q", k0, k5, k7)
	}
}

// A damaged Dir/dbmap stops the server from starting, naming the file.
func TestSwapDBBadMap(t *testing.T) {
	for _, content := range []string{"0 1 2\n", "0 0 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n", "x 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n"} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, dbMapFile), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		srv := New(Options{Addr: "127.0.0.1:0", Dir: dir})
		err := srv.Start()
		if err == nil {
			srv.Close()
			t.Fatalf("Start with dbmap %q: no error", content)
		}
		if !strings.Contains(err.Error(), dbMapFile) {
			t.Fatalf("Start with dbmap %q: %v, which does not name the file", content, err)
		}
	}
}

// An XREAD blocked when SWAPDB swaps its DB waits on in the DB swapped
// in, for entries after what it waited for, and is served at once if
// they are there, as Redis 7.0 serves it.
func TestDiffSwapDBBlocked(t *testing.T) {
	p := newPair(t)
	block, served := swapBlockers(t, p)
	p.script(`
		XADD k 1-0 f old
		SELECT 1
		XADD k 5-0 f new
		SELECT 0`)
	// The DB swapped in has an entry after the last ID of the one it
	// waited in: served at the swap.
	block("XREAD", "BLOCK", "0", "STREAMS", "k", "$")
	p.do("SWAPDB", "0", "1")
	served()
	// A key missing where it waited, present in the DB swapped in.
	p.script(`
		SELECT 1
		XADD n 4-0 f v
		SELECT 0`)
	block("XREAD", "BLOCK", "0", "STREAMS", "n", "$")
	p.do("SWAPDB", "0", "1")
	served()
	// Not there either: it waits on.
	block("XREAD", "BLOCK", "0", "STREAMS", "none", "$")
	p.do("SWAPDB", "0", "1")
	p.waitBlockedClients(1)
	p.do("XADD", "none", "1-1", "f", "v")
	served()
	// The DB swapped in has only older entries: an entry after those but
	// not after the ID it waited for leaves it blocked.
	p.script(`
		SELECT 1
		DEL k
		XADD k 2-0 f two
		SELECT 0
		XADD k 9-0 f nine`)
	block("XREAD", "BLOCK", "0", "STREAMS", "k", "$")
	p.do("SWAPDB", "0", "1")
	p.waitBlockedClients(1)
	p.do("XADD", "k", "3-0", "f", "three")
	p.waitBlockedClients(1)
	p.do("XADD", "k", "10-0", "f", "ten")
	served()
	// Another DB's swap leaves it be; a swap back and forth too.
	block("XREAD", "BLOCK", "0", "STREAMS", "k", "$")
	p.do("SWAPDB", "2", "3")
	p.do("SWAPDB", "0", "1")
	p.do("SWAPDB", "0", "1")
	p.waitBlockedClients(1)
	p.do("XADD", "k", "11-0", "f", "v")
	served()
	// With a timeout, it times out as it would have.
	block("XREAD", "BLOCK", "300", "STREAMS", "k", "$")
	p.do("SWAPDB", "0", "1")
	served()
}

// A blocked XREADGROUP at a SWAPDB, against Redis 7.0.15, which looks at
// its key in the DB swapped in: with the group and entries past the
// group's last delivered, served at once; with the group and none, it
// waits there (not on the DB swapped out); without the group, NOGROUP;
// without the key, UNBLOCKED. Its timeout runs on.
func TestDiffSwapDBBlockedGroup(t *testing.T) {
	p := newPair(t)
	block, served := swapBlockers(t, p)
	read := []string{"XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "k", ">"}
	// each starts a case: DB 0 has k with the group g at its end, DB 1
	// what setup makes.
	each := func(setup string) {
		t.Helper()
		p.do("FLUSHALL")
		p.script(`
			XADD k 1-0 f old
			XGROUP CREATE k g $
			SELECT 1
			` + setup + `
			SELECT 0`)
	}
	// The group there has an entry to deliver: served at the swap.
	each(`XADD k 5-0 f new
		XGROUP CREATE k g 0`)
	block(read...)
	p.do("SWAPDB", "0", "1")
	served()

	// Nothing to deliver there: it waits on the stream swapped in, and
	// an entry of the one swapped out does not serve it.
	each(`XADD k 5-0 f new
		XGROUP CREATE k g $`)
	block(read...)
	p.do("SWAPDB", "0", "1")
	p.waitBlockedClients(1)
	p.script(`
		SELECT 1
		XADD k 6-0 f swapped-out
		SELECT 0`)
	p.waitBlockedClients(1)
	p.do("XADD", "k", "7-0", "f", "swapped-in")
	served()

	// The key there has not the group: NOGROUP.
	each(`XADD k 5-0 f new`)
	block(read...)
	p.do("SWAPDB", "0", "1")
	served()

	// No such key there: UNBLOCKED.
	each(`XADD other 5-0 f new`)
	block(read...)
	p.do("SWAPDB", "1", "0")
	served()

	// Back and forth: it waits on its own stream again.
	each(`XADD k 5-0 f new
		XGROUP CREATE k g $`)
	block(read...)
	p.do("SWAPDB", "0", "1")
	p.do("SWAPDB", "0", "1")
	p.waitBlockedClients(1)
	p.do("XADD", "k", "8-0", "f", "v")
	served()

	// A timeout runs on in the DB swapped in.
	each(`XADD k 5-0 f new
		XGROUP CREATE k g $`)
	block("XREADGROUP", "GROUP", "g", "c", "BLOCK", "300", "STREAMS", "k", ">")
	p.do("SWAPDB", "0", "1")
	served()
	p.do("XPENDING", "k", "g")
}

// swapBlockers returns, for the SWAPDB tests of p, block, which sends a
// blocking read on a connection of each server and waits until it
// blocks, and served, which compares the replies the reads get.
func swapBlockers(t *testing.T, p *pair) (block func(args ...string), served func()) {
	blockers := []*wireConn{dialWire(t, realAddr), dialWire(t, p.srv.Addr())}
	block = func(args ...string) {
		for _, b := range blockers {
			b.send(t, args...)
		}
		p.waitBlockedClients(1)
	}
	served = func() {
		t.Helper()
		want, got := blockers[0].reply(t), blockers[1].reply(t)
		if string(want) != string(got) {
			t.Fatalf("the blocked read's reply:\n  redis:   %q\n  xstream: %q", want, got)
		}
	}
	return block, served
}

// A SWAPDB or a CLIENT UNBLOCK that comes once a read counts as blocked
// (INFO blocked_clients) but before it waits ends the wait as it would
// later: the read is moved to the DB swapped in, or answers null. Before,
// it could be missed, and the read waited in the DB swapped out for good.
func TestSwapDBAsReadBlocks(t *testing.T) {
	srv := RunT(t)
	c := newClient(t, srv.Addr())
	for _, cmd := range [][]string{{"XADD", "k", "1-0", "f", "old"}, {"SELECT", "1"}, {"XADD", "k", "5-0", "f", "new"}, {"SELECT", "0"}} {
		c.do(t, cmd...)
	}
	hook := func(*conn) {
		srv.blockedHook.Store(nil) // once
		if err := srv.swapDBs(0, 1); err != nil {
			t.Error(err)
		}
	}
	srv.blockedHook.Store(&hook)
	got := c.do(t, "XREAD", "BLOCK", "0", "STREAMS", "k", "$")
	if want := `[[$"k" [[$"5-0" [$"f" $"new"]]]]]`; got.String() != want {
		t.Fatalf("XREAD at the swap: got %s, want %s", got, want)
	}

	unblock := func(c *conn) {
		srv.blockedHook.Store(nil)
		if !c.unblockRead(false) {
			t.Error("CLIENT UNBLOCK found no blocked read")
		}
	}
	srv.blockedHook.Store(&unblock)
	if got := c.do(t, "XREAD", "BLOCK", "0", "STREAMS", "k", "$"); !got.null {
		t.Fatalf("XREAD unblocked as it blocks: got %s, want a null reply", got)
	}
}
