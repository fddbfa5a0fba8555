package server

import (
	"bufio"
	"errors"
	"net"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xstreamgo/xstream"
)

// Tests of durable servers (Options.Dir) and of the persistence commands
// and INFO fields, over the protocol.

// infoFields returns the fields of an INFO reply's section (e.g.
// "Persistence"), in order, as name:value pairs.
func infoFields(t testing.TB, r *reply, section string) [][2]string {
	t.Helper()
	text := strings.TrimPrefix(r.s, "txt:")
	var out [][2]string
	in := false
	for _, line := range strings.Split(text, "\r\n") {
		switch {
		case strings.HasPrefix(line, "# "):
			in = line == "# "+section
		case in && line != "":
			name, value, ok := strings.Cut(line, ":")
			if !ok {
				t.Fatalf("INFO line %q", line)
			}
			out = append(out, [2]string{name, value})
		}
	}
	if out == nil {
		t.Fatalf("INFO has no %s section: %q", section, text)
	}
	return out
}

// infoField returns the value of one field of INFO persistence.
func infoField(t testing.TB, c *client, name string) string {
	t.Helper()
	for _, f := range infoFields(t, c.do(t, "INFO", "persistence"), "Persistence") {
		if f[0] == name {
			return f[1]
		}
	}
	t.Fatalf("INFO persistence has no %s", name)
	return ""
}

func fieldNames(fs [][2]string) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f[0])
	}
	return out
}

// A server on a directory, closed and started again on it, has its
// streams, groups, consumers and pending entries in every database.
func TestDurableRestart(t *testing.T) {
	dir := t.TempDir()
	for _, policy := range []xstream.SyncPolicy{xstream.SyncEverySecond, xstream.SyncAlways, xstream.SyncNo} {
		t.Run(policy.String(), func(t *testing.T) {
			dir := filepath.Join(dir, policy.String())
			srv := RunTWith(t, Options{Dir: dir, AppendFsync: policy})
			c := newClient(t, srv.Addr())
			c.do(t, "XADD", "s", "1-1", "a", "1", "b", "2")
			c.do(t, "XADD", "s", "2-1", "a", "3")
			c.do(t, "XGROUP", "CREATE", "s", "g", "0")
			c.do(t, "XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", "s", ">")
			c.do(t, "SELECT", "15")
			c.do(t, "XADD", "t", "5-5", "f", "v")
			if err := srv.Close(); err != nil {
				t.Fatal(err)
			}
			if srv.DB(0) != nil {
				t.Fatal("DB(0) after Close")
			}

			srv = RunTDir(t, dir)
			c = newClient(t, srv.Addr())
			expect(t, c, `[[$"1-1" [$"a" $"1" $"b" $"2"]] [$"2-1" [$"a" $"3"]]]`, "XRANGE", "s", "-", "+")
			expect(t, c, `[:1 $"1-1" $"1-1" [[$"alice" $"1"]]]`, "XPENDING", "s", "g")
			expect(t, c, `[[$"s" [[$"2-1" [$"a" $"3"]]]]]`, "XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">")
			expect(t, c, `:0`, "EXISTS", "t")
			c.do(t, "SELECT", "15")
			expect(t, c, `[[$"5-5" [$"f" $"v"]]]`, "XRANGE", "t", "-", "+")
			if got := infoField(t, c, "rdb_last_load_keys_loaded"); got != "2" {
				t.Errorf("rdb_last_load_keys_loaded:%s, want 2", got)
			}
		})
	}
}

// Start fails cleanly: a DB it cannot open (here one that is open
// elsewhere) makes it close those it opened, and report which database.
func TestStartFailsCleanly(t *testing.T) {
	dir := t.TempDir()
	held, err := xstream.Open(filepath.Join(dir, "5"))
	if err != nil {
		t.Fatal(err)
	}
	srv := New(Options{Dir: dir})
	err = srv.Start()
	if !errors.Is(err, xstream.ErrLocked) || !strings.Contains(err.Error(), "database 5") {
		t.Fatalf("Start with database 5 locked: %v", err)
	}
	if srv.DB(0) != nil {
		t.Fatal("DB(0) after a failed Start")
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := held.Close(); err != nil {
		t.Fatal(err)
	}

	// Databases 0 to 4 were closed: a server starts on the directory.
	first := RunTDir(t, dir)
	// A second server on it is refused, and the first goes on.
	err = New(Options{Dir: dir}).Start()
	if !errors.Is(err, xstream.ErrLocked) || !strings.Contains(err.Error(), "database 0") {
		t.Fatalf("second server on the directory: %v", err)
	}
	expect(t, newClient(t, first.Addr()), `$"1-1"`, "XADD", "s", "1-1", "f", "v")
	// Nor does the first start twice, which would open its DBs again.
	if err := first.Start(); err == nil {
		t.Fatal("a second Start of a started server")
	}
	expect(t, newClient(t, first.Addr()), `:1`, "XLEN", "s")

	// A busy address: the DBs opened are closed again.
	other := t.TempDir()
	err = New(Options{Dir: other, Addr: first.Addr()}).Start()
	if !errors.As(err, new(*net.OpError)) {
		t.Fatalf("Start on a busy address: %v", err)
	}
	RunTDir(t, other)

	// An unknown sync policy.
	if err := New(Options{Dir: t.TempDir(), AppendFsync: 9}).Start(); !errors.Is(err, xstream.ErrInvalidArgument) {
		t.Fatalf("AppendFsync 9: %v", err)
	}
}

// SAVE, BGSAVE and BGREWRITEAOF take snapshots of every database, LASTSAVE
// and INFO persistence count them, and a server started again on the
// directory loads the snapshots and the log after them.
func TestSaveCommands(t *testing.T) {
	dir := t.TempDir()
	srv := RunTDir(t, dir)
	c := newClient(t, srv.Addr())
	start := srv.started.Unix()
	expect(t, c, ":"+strconv.FormatInt(start, 10), "LASTSAVE")
	for i := 1; i <= 3; i++ {
		c.do(t, "XADD", "s", itoa(i)+"-0", "f", "v")
	}
	c.do(t, "XLEN", "s")
	c.do(t, "SELECT", "7")
	c.do(t, "XADD", "t", "1-0", "f", "v")
	want := func(name, value string) {
		t.Helper()
		if got := infoField(t, c, name); got != value {
			t.Errorf("%s:%s, want %s", name, got, value)
		}
	}
	want("rdb_changes_since_last_save", "4")
	want("aof_base_size", "0")
	expect(t, c, `+"OK"`, "SAVE")
	expect(t, c, `+"OK"`, "SAVE") // nothing changed: still OK
	want("rdb_changes_since_last_save", "0")
	want("rdb_saves", "2")
	want("rdb_last_bgsave_time_sec", "-1") // SAVE is not a background save
	if r := c.do(t, "LASTSAVE"); r.kind != ':' || r.n < start {
		t.Errorf("LASTSAVE after SAVE: %v", r)
	}
	base := infoField(t, c, "aof_base_size")
	if base == "0" || infoField(t, c, "aof_current_size") != base {
		t.Errorf("after SAVE: aof_base_size:%s aof_current_size:%s", base, infoField(t, c, "aof_current_size"))
	}

	expect(t, c, `+"Background saving started"`, "BGSAVE")
	srv.persist.wait()
	want("rdb_saves", "3")
	want("rdb_last_bgsave_status", "ok")
	want("rdb_last_bgsave_time_sec", "0")
	want("rdb_bgsave_in_progress", "0")
	expect(t, c, `+"Background saving started"`, "BGSAVE", "schedule")
	srv.persist.wait()
	expect(t, c, `-"ERR syntax error"`, "BGSAVE", "x")
	expect(t, c, `-"ERR syntax error"`, "BGSAVE", "SCHEDULE", "x")

	c.do(t, "XADD", "t", "2-0", "f", "v")
	if infoField(t, c, "aof_current_size") == infoField(t, c, "aof_base_size") {
		t.Error("aof_current_size did not grow with a change")
	}
	expect(t, c, `+"Background append only file rewriting started"`, "BGREWRITEAOF")
	srv.persist.wait()
	want("aof_rewrites", "1")
	want("aof_last_bgrewrite_status", "ok")
	want("aof_last_rewrite_time_sec", "0")
	want("aof_rewrite_in_progress", "0")
	want("rdb_changes_since_last_save", "1") // a rewrite is not a save

	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	c = newClient(t, RunTDir(t, dir).Addr())
	expect(t, c, ":3", "XLEN", "s")
	c.do(t, "SELECT", "7")
	expect(t, c, `[[$"1-0" [$"f" $"v"]] [$"2-0" [$"f" $"v"]]]`, "XRANGE", "t", "-", "+")
}

// holdSnapshots makes the snapshots of database 0 wait: each tells entered
// and waits for a value on release. It must be called before Start.
func holdSnapshots(srv *Server) (entered chan int, release chan struct{}) {
	entered, release = make(chan int, 16), make(chan struct{})
	snap := srv.persist.snapshot
	srv.persist.snapshot = func(i int) error {
		if i == 0 {
			entered <- i
			<-release
		}
		return snap(i)
	}
	return entered, release
}

// startT starts srv for the test.
func startT(t *testing.T, srv *Server) *Server {
	t.Helper()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	return srv
}

// While a background job runs, the saving commands are answered as Redis
// answers them, INFO tells what runs and what is scheduled, and the
// scheduled jobs run when it ends.
func TestSaveInProgress(t *testing.T) {
	srv := New(Options{Dir: t.TempDir()})
	entered, release := holdSnapshots(srv)
	startT(t, srv)
	c := newClient(t, srv.Addr())
	c.do(t, "XADD", "s", "1-1", "f", "v")
	want := func(pairs ...string) {
		t.Helper()
		fs := infoFields(t, c.do(t, "INFO", "persistence"), "Persistence")
		for i := 0; i < len(pairs); i += 2 {
			for _, f := range fs {
				if f[0] == pairs[i] && f[1] != pairs[i+1] {
					t.Errorf("%s:%s, want %s", f[0], f[1], pairs[i+1])
				}
			}
		}
	}
	start := ":" + strconv.FormatInt(srv.started.Unix(), 10)

	expect(t, c, `+"Background saving started"`, "BGSAVE")
	<-entered // INFO answers while database 0's snapshot is in progress
	want("rdb_bgsave_in_progress", "1", "rdb_current_bgsave_time_sec", "0", "aof_rewrite_in_progress", "0", "rdb_saves", "1")
	expect(t, c, `-"ERR Background save already in progress"`, "BGSAVE")
	expect(t, c, `-"ERR Background save already in progress"`, "BGSAVE", "SCHEDULE")
	expect(t, c, `-"ERR Background save already in progress"`, "SAVE")
	expect(t, c, `+"Background append only file rewriting scheduled"`, "BGREWRITEAOF")
	expect(t, c, `+"Background append only file rewriting scheduled"`, "BGREWRITEAOF")
	want("aof_rewrite_scheduled", "1", "aof_pending_rewrite", "1", "aof_rewrite_in_progress", "0")
	expect(t, c, start, "LASTSAVE")

	release <- struct{}{} // the save ends, the rewrite begins
	<-entered
	want("rdb_bgsave_in_progress", "0", "rdb_saves", "1", "rdb_last_bgsave_status", "ok",
		"aof_rewrite_in_progress", "1", "aof_rewrite_scheduled", "0", "aof_current_rewrite_time_sec", "0", "aof_rewrites", "1")
	if r := c.do(t, "LASTSAVE"); r.String() == start && r.n < srv.started.Unix() {
		t.Errorf("LASTSAVE after the save: %v", r)
	}
	expect(t, c, `-"ERR Background append only file rewriting already in progress"`, "BGREWRITEAOF")
	expect(t, c, `-"ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible."`, "BGSAVE")
	expect(t, c, `+"Background saving scheduled"`, "BGSAVE", "SCHEDULE")

	release <- struct{}{} // the rewrite ends, the scheduled save begins
	<-entered
	want("rdb_bgsave_in_progress", "1", "aof_rewrite_in_progress", "0", "aof_rewrites", "1", "rdb_saves", "2")
	release <- struct{}{}
	srv.persist.wait()
	want("rdb_bgsave_in_progress", "0", "aof_rewrite_in_progress", "0", "rdb_saves", "2", "aof_last_bgrewrite_status", "ok")

	// Inside MULTI/EXEC, BGSAVE and BGREWRITEAOF are scheduled, and run
	// after the EXEC; SAVE is refused.
	c.do(t, "MULTI")
	c.do(t, "BGSAVE")
	expect(t, c, `[+"Background saving scheduled"]`, "EXEC")
	<-entered
	release <- struct{}{}
	srv.persist.wait()
	c.do(t, "MULTI")
	c.do(t, "BGREWRITEAOF")
	expect(t, c, `[+"Background append only file rewriting scheduled"]`, "EXEC")
	<-entered
	release <- struct{}{}
	srv.persist.wait()
	want("rdb_saves", "3", "aof_rewrites", "2")
	c.do(t, "MULTI")
	expect(t, c, `-"ERR Command not allowed inside a transaction"`, "SAVE")
	expect(t, c, `-"EXECABORT Transaction discarded because of previous errors."`, "EXEC")
}

// A failed snapshot is an error of SAVE and an "err" status of the
// background jobs; LASTSAVE keeps the last success.
func TestSaveFailure(t *testing.T) {
	srv := New(Options{Dir: t.TempDir()})
	var failing atomic.Bool
	snap := srv.persist.snapshot
	srv.persist.snapshot = func(i int) error {
		if i == 3 && failing.Load() {
			return errors.New("disk on fire")
		}
		return snap(i)
	}
	startT(t, srv)
	c := newClient(t, srv.Addr())
	want := func(name, value string) {
		t.Helper()
		if got := infoField(t, c, name); got != value {
			t.Errorf("%s:%s, want %s", name, got, value)
		}
	}
	start := ":" + strconv.FormatInt(srv.started.Unix(), 10)
	c.do(t, "XADD", "s", "1-1", "f", "v")
	failing.Store(true)
	expect(t, c, `-"ERR database 3: disk on fire"`, "SAVE")
	expect(t, c, start, "LASTSAVE")
	want("rdb_changes_since_last_save", "1")
	expect(t, c, `+"Background saving started"`, "BGSAVE")
	srv.persist.wait()
	want("rdb_last_bgsave_status", "err")
	expect(t, c, start, "LASTSAVE")
	for i := 1; i <= 2; i++ {
		expect(t, c, `+"Background append only file rewriting started"`, "BGREWRITEAOF")
		srv.persist.wait()
		want("aof_last_bgrewrite_status", "err")
		want("aof_rewrites_consecutive_failures", itoa(i))
	}
	failing.Store(false)
	expect(t, c, `+"Background append only file rewriting started"`, "BGREWRITEAOF")
	srv.persist.wait()
	want("aof_last_bgrewrite_status", "ok")
	want("aof_rewrites_consecutive_failures", "0")
	expect(t, c, `+"Background saving started"`, "BGSAVE")
	srv.persist.wait()
	want("rdb_last_bgsave_status", "ok")
	want("rdb_changes_since_last_save", "0")
}

// Without Dir there is nothing to save: the saving commands say so,
// LASTSAVE is the start, and INFO persistence has Redis's fields with
// aof_enabled:0.
func TestInMemoryPersistence(t *testing.T) {
	srv := RunT(t)
	c := newClient(t, srv.Addr())
	for _, cmd := range []string{"SAVE", "BGSAVE", "BGREWRITEAOF"} {
		expect(t, c, `-"`+errNoPersistence+`"`, cmd)
	}
	expect(t, c, `-"ERR syntax error"`, "BGSAVE", "now")
	expect(t, c, ":"+strconv.FormatInt(srv.started.Unix(), 10), "LASTSAVE")
	c.do(t, "XADD", "s", "1-1", "f", "v")
	c.do(t, "XADD", "s", "2-1", "f", "v")
	fs := infoFields(t, c.do(t, "INFO", "persistence"), "Persistence")
	for _, f := range fs {
		switch f[0] {
		case "aof_enabled":
			if f[1] != "0" {
				t.Errorf("aof_enabled:%s", f[1])
			}
		case "rdb_changes_since_last_save":
			if f[1] != "2" {
				t.Errorf("rdb_changes_since_last_save:%s", f[1])
			}
		case "aof_current_size":
			t.Error("aof_current_size without AOF")
		}
	}
}

// Once a DB's log failed, commands that may change it get Redis's MISCONF
// error, and so do PING, FLUSHALL and an EXEC of changes; reads go on, and
// the other DBs take changes.
func TestMisconf(t *testing.T) {
	srv := New(Options{Dir: t.TempDir()})
	var failing atomic.Bool
	full := errors.New("write /data/0/00000000000000000001.log: no space left on device")
	srv.logErr = func(i int) error {
		if i == 0 && failing.Load() {
			return full
		}
		return srv.db(i).Err()
	}
	startT(t, srv)
	c := newClient(t, srv.Addr())
	misconf := `-"MISCONF Errors writing to the AOF file: ` + full.Error() + `"`
	c.do(t, "XADD", "s", "1-1", "f", "v")
	c.do(t, "XGROUP", "CREATE", "s", "g", "0")
	c.do(t, "MULTI")
	c.do(t, "XADD", "s", "2-1", "f", "v")
	failing.Store(true)
	expect(t, c, `-"EXECABORT Transaction discarded because of: MISCONF Errors writing to the AOF file: `+full.Error()+`"`, "EXEC")

	expect(t, c, misconf, "XADD", "s", "3-1", "f", "v")
	expect(t, c, misconf, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
	expect(t, c, misconf, "XGROUP", "CREATE", "s", "h", "0")
	expect(t, c, misconf, "DEL", "s")
	expect(t, c, misconf, "PING")
	expect(t, c, misconf, "FLUSHALL")
	expect(t, c, `:1`, "XLEN", "s")
	expect(t, c, `[[$"1-1" [$"f" $"v"]]]`, "XRANGE", "s", "-", "+")
	expect(t, c, `[[$"s" [[$"1-1" [$"f" $"v"]]]]]`, "XREAD", "STREAMS", "s", "0")
	if got := infoField(t, c, "aof_last_write_status"); got != "err" {
		t.Errorf("aof_last_write_status:%s", got)
	}
	c.do(t, "MULTI")
	expect(t, c, misconf, "XADD", "s", "3-1", "f", "v")
	expect(t, c, `+"QUEUED"`, "XLEN", "s")
	expect(t, c, `-"EXECABORT Transaction discarded because of previous errors."`, "EXEC")
	c.do(t, "MULTI")
	c.do(t, "XLEN", "s")
	expect(t, c, `[:1]`, "EXEC")

	c.do(t, "SELECT", "1") // another DB, whose log is fine
	expect(t, c, `$"1-1"`, "XADD", "s", "1-1", "f", "v")
	expect(t, c, `+"OK"`, "FLUSHDB")
	c.do(t, "SELECT", "0")

	failing.Store(false)
	expect(t, c, `+"PONG"`, "PING")
	expect(t, c, `$"3-1"`, "XADD", "s", "3-1", "f", "v")
	if got := infoField(t, c, "aof_last_write_status"); got != "ok" {
		t.Errorf("aof_last_write_status:%s", got)
	}
}

// The server writes the log of a batch of commands to the OS before their
// replies go out: once a reply has arrived, Flush has nothing left to
// write. So it is for replies of pipelined commands, for those written
// before a blocking read waits, and for a blocked read served by another
// client's change.
func TestRepliesAfterLog(t *testing.T) {
	for _, policy := range []xstream.SyncPolicy{xstream.SyncEverySecond, xstream.SyncNo} {
		t.Run(policy.String(), func(t *testing.T) {
			srv := RunTWith(t, Options{Dir: t.TempDir(), AppendFsync: policy})
			check := func(what string) {
				t.Helper()
				db := srv.DB(0)
				before, _ := db.Persistence()
				if err := db.Flush(); err != nil {
					t.Fatal(err)
				}
				after, _ := db.Persistence()
				if after.LogBytes != before.LogBytes {
					t.Errorf("%s: the reply came before its change was written (%d bytes of log were buffered)", what, after.LogBytes-before.LogBytes)
				}
			}
			c := newClient(t, srv.Addr())
			c.do(t, "XADD", "s", "*", "f", "v")
			check("XADD")
			c.do(t, "XGROUP", "CREATE", "s", "g", "0")
			check("XGROUP CREATE")

			nc, err := net.Dial("tcp", srv.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			rd := bufio.NewReader(nc)
			read := func() *reply {
				t.Helper()
				r, err := readReply(rd)
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			nc.Write([]byte(resp("XADD", "s", "*", "a", "1") + resp("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">") + resp("XADD", "s", "*", "b", "2")))
			read()
			read()
			read()
			check("pipelined XADD, XREADGROUP, XADD")

			// The replies before a blocking read go out before it waits;
			// another client's XADD serves it.
			s, _ := srv.DB(0).Lookup("s")
			waitBlocked := func() {
				for s.Blocked() != 1 {
					runtime.Gosched()
				}
			}
			nc.Write([]byte(resp("XADD", "s", "*", "c", "3") + resp("XREAD", "BLOCK", "0", "STREAMS", "s", "$")))
			read()
			waitBlocked()
			check("XADD before a blocking XREAD")
			c.do(t, "XADD", "s", "*", "d", "4")
			if r := read(); len(r.kids) != 1 {
				t.Fatalf("blocked XREAD: %v", r)
			}
			check("blocked XREAD served")

			nc.Write([]byte(resp("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">") + resp("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")))
			read()
			waitBlocked() // (a blocked XREADGROUP may log its consumer's seen time, not acknowledged yet)
			c.do(t, "XADD", "s", "*", "e", "5")
			if r := read(); len(r.kids) != 1 {
				t.Fatalf("blocked XREADGROUP: %v", r)
			}
			check("blocked XREADGROUP served")
		})
	}
}

// INFO persistence has the fields of Redis 7.0's, in its order, with and
// without an AOF; the section comes where Redis puts it; the values that
// do not depend on timing or file formats are Redis's, after the same
// commands; the persistence commands answer as Redis's when nothing else
// runs.
func TestDiffInfoPersistence(t *testing.T) {
	p := newPair(t) // an in-memory server and a Redis without AOF
	names := func(c *client) []string {
		return slices.DeleteFunc(fieldNames(infoFields(t, c.do(t, "INFO", "persistence"), "Persistence")), func(n string) bool {
			return n == "aof_last_load_truncated_bytes" // xstream's own, last (logcut.go)
		})
	}
	if want, got := names(p.real), names(p.xs); !slices.Equal(want, got) {
		t.Errorf("INFO persistence without AOF:\n  redis:   %v\n  xstream: %v", want, got)
	}
	sections := func(c *client) []string {
		var out []string
		for _, line := range strings.Split(c.do(t, "INFO").s, "\r\n") {
			if strings.HasPrefix(line, "# ") {
				out = append(out, line)
			}
		}
		return out
	}
	want, got := sections(p.real), sections(p.xs)
	if i := slices.Index(want, "# Persistence"); i < 0 || !slices.Contains(got, "# Persistence") {
		t.Fatalf("sections: redis %v, xstream %v", want, got)
	}
	if got := slices.DeleteFunc(slices.Clone(got), func(s string) bool { return !slices.Contains(want, s) }); len(got) != len(sections(p.xs)) {
		t.Errorf("sections not in Redis: %v", sections(p.xs))
	} else {
		kept := slices.DeleteFunc(slices.Clone(want), func(s string) bool { return !slices.Contains(got, s) })
		if !slices.Equal(kept, got) {
			t.Errorf("sections in another order than Redis's: %v, redis %v", got, want)
		}
	}
	p.do("MULTI")
	p.do("SAVE")
	p.do("EXEC")
	p.do("SAVE", "x")
	p.do("BGREWRITEAOF", "x")
	p.do("LASTSAVE", "x")
	p.do("BGSAVE", "x")
	p.do("BGSAVE", "SCHEDULE", "x")

	// With an AOF, always.
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("no redis-server on PATH to run with an AOF")
	}
	proc, addr, err := startRedisWith(path, t.TempDir(), "--appendonly", "yes", "--appendfsync", "always")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		proc.Process.Kill()
		proc.Wait()
	})
	srv := RunTWith(t, Options{Dir: t.TempDir(), AppendFsync: xstream.SyncAlways})
	real, xs := newClient(t, addr), newClient(t, srv.Addr())
	if want, got := names(real), names(xs); !slices.Equal(want, got) {
		t.Errorf("INFO persistence with AOF:\n  redis:   %v\n  xstream: %v", want, got)
	}
	// Times, sizes of files and of fork copies-on-write.
	varying := map[string]bool{
		"rdb_last_save_time": true, "rdb_last_bgsave_time_sec": true, "aof_last_rewrite_time_sec": true,
		"aof_current_size": true, "aof_base_size": true, "rdb_last_cow_size": true, "aof_last_cow_size": true,
	}
	same := func(when string) {
		t.Helper()
		w := infoFields(t, real.do(t, "INFO", "persistence"), "Persistence")
		g := infoFields(t, xs.do(t, "INFO", "persistence"), "Persistence")
		for i := range min(len(w), len(g)) {
			if !varying[w[i][0]] && w[i] != g[i] {
				t.Errorf("%s: redis %s:%s, xstream %s:%s", when, w[i][0], w[i][1], g[i][0], g[i][1])
			}
		}
	}
	both := func(want string, args ...string) {
		t.Helper()
		for _, c := range []*client{real, xs} {
			if got := c.do(t, args...).String(); got != want {
				t.Errorf("%q: %s, want %s", args, got, want)
			}
		}
	}
	// Wait for the background job on both (Redis: its child has exited
	// and been reaped).
	idle := func(field string) {
		t.Helper()
		srv.persist.wait()
		deadline := time.Now().Add(time.Minute)
		for infoField(t, real, field) != "0" {
			if time.Now().After(deadline) {
				t.Fatalf("redis: %s stays on", field)
			}
			runtime.Gosched()
		}
	}
	same("at start")
	for i := 1; i <= 3; i++ {
		both(`$"`+itoa(i)+`-1"`, "XADD", "s", itoa(i)+"-1", "f", "v")
	}
	both(`+"OK"`, "XGROUP", "CREATE", "s", "g", "0")
	same("after 4 changes")
	both(`+"OK"`, "SAVE")
	same("after SAVE")
	both(`+"Background saving started"`, "BGSAVE")
	idle("rdb_bgsave_in_progress")
	same("after BGSAVE")
	both(`$"4-1"`, "XADD", "s", "4-1", "f", "v")
	both(`+"Background append only file rewriting started"`, "BGREWRITEAOF")
	idle("aof_rewrite_in_progress")
	same("after BGREWRITEAOF")
	for _, c := range []*client{real, xs} {
		if r := c.do(t, "LASTSAVE"); r.kind != ':' || r.n < srv.started.Unix()-60 {
			t.Errorf("LASTSAVE: %v", r)
		}
	}
}

// The server snapshots by itself a DB whose log has grown past the
// minimum (64 MiB by default) and its last snapshot, as Redis rewrites a
// grown AOF, and counts it as a rewrite.
func TestAutoRewrite(t *testing.T) {
	dir := t.TempDir()
	srv := New(Options{Dir: dir})
	srv.persist.autoMin = 1 << 10
	startT(t, srv)
	c := newClient(t, srv.Addr())
	c.do(t, "SELECT", "2")
	for i := 1; i <= 100; i++ {
		c.do(t, "XADD", "s", itoa(i)+"-1", "field", strings.Repeat("v", 20))
	}
	srv.persist.autoRewrite()
	srv.persist.wait()
	if n, _ := strconv.Atoi(infoField(t, c, "aof_rewrites")); n < 1 {
		t.Fatalf("aof_rewrites:%d after the log passed the minimum", n)
	}
	info, _ := srv.DB(2).Persistence()
	if info.SnapshotBytes == 0 || info.LogBytes != 0 {
		t.Errorf("DB 2 after the automatic rewrite: %+v", info)
	}
	if got := infoField(t, c, "aof_last_bgrewrite_status"); got != "ok" {
		t.Errorf("aof_last_bgrewrite_status:%s", got)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	c = newClient(t, RunTDir(t, dir).Addr())
	c.do(t, "SELECT", "2")
	expect(t, c, ":100", "XLEN", "s")
}

// A SAVE during a rewrite snapshots alongside it, and both succeed even
// when they reach the same database.
func TestSaveDuringRewrite(t *testing.T) {
	srv := New(Options{Dir: t.TempDir()})
	entered, release := holdSnapshots(srv)
	startT(t, srv)
	c := newClient(t, srv.Addr())
	for i := range numDBs {
		c.do(t, "SELECT", itoa(i))
		c.do(t, "XADD", "s", "1-1", "f", "v")
	}
	expect(t, c, `+"Background append only file rewriting started"`, "BGREWRITEAOF")
	<-entered // the rewrite is at database 0
	saved := make(chan *reply, 1)
	go func() {
		r, err := newClient(t, srv.Addr()).send("SAVE")
		if err != nil {
			r = &reply{kind: '-', s: err.Error()}
		}
		saved <- r
	}()
	<-entered // the SAVE is at database 0 too
	release <- struct{}{}
	release <- struct{}{}
	if r := <-saved; r.String() != `+"OK"` {
		t.Fatalf("SAVE during a rewrite: %v", r)
	}
	srv.persist.wait()
	if got := infoField(t, c, "aof_last_bgrewrite_status"); got != "ok" {
		t.Errorf("aof_last_bgrewrite_status:%s", got)
	}
}
