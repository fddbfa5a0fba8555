package server

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"
)

func addOne(ctx context.Context, rdb *redis.Client, id string) error {
	return rdb.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: id, Values: []string{"f", "v"}}).Err()
}

func wantXLen(t *testing.T, srv *Server, want int64) {
	t.Helper()
	var n int64
	if s, ok := srv.DB(0).Lookup("s"); ok {
		n = s.Len()
	}
	if n != want {
		t.Fatalf("stream s holds %d entries, want %d", n, want)
	}
}

func wantErr(t *testing.T, err error, msg string) {
	t.Helper()
	if err == nil || err.Error() != msg {
		t.Fatalf("got error %v, want %q", err, msg)
	}
}

// SetError fails every command, for clients connected before and after,
// until SetError("").
func TestSetError(t *testing.T) {
	srv := RunT(t)
	ctx := context.Background()
	before := newGoRedis(t, srv)
	if err := before.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	const msg = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
	srv.SetError(msg)
	wantErr(t, addOne(ctx, before, "1-1"), msg)
	wantErr(t, before.Ping(ctx).Err(), msg)
	after := newGoRedis(t, srv) // its HELLO and CLIENT SETINFO are let through
	wantErr(t, addOne(ctx, after, "1-1"), msg)
	wantErr(t, after.XRange(ctx, "s", "-", "+").Err(), msg)
	wantXLen(t, srv, 0)

	srv.SetError("")
	if err := addOne(ctx, after, "1-1"); err != nil {
		t.Fatal(err)
	}
	wantXLen(t, srv, 1)

	// CR and LF cannot be in an error reply: they become spaces.
	srv.SetError("ERR two\r\nlines")
	wantErr(t, before.Ping(ctx).Err(), "ERR two  lines")
}

// FailNext fails the next n commands, whoever sends them, then no more.
func TestFailNext(t *testing.T) {
	srv := RunT(t)
	ctx := context.Background()
	a, b := newGoRedis(t, srv), newGoRedis(t, srv)
	if err := srv.FailNext(3, "ERR injected"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, addOne(ctx, a, "1-1"), "ERR injected")
	wantErr(t, addOne(ctx, b, "1-1"), "ERR injected") // connects first: not counted
	wantErr(t, a.XLen(ctx, "s").Err(), "ERR injected")
	if err := addOne(ctx, b, "1-1"); err != nil {
		t.Fatalf("fourth command: %v", err)
	}
	wantXLen(t, srv, 1)

	// A new FailNext replaces the old; 0 cancels it.
	if err := srv.FailNext(5, "ERR first"); err != nil {
		t.Fatal(err)
	}
	if err := srv.FailNext(1, "ERR second"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, a.Ping(ctx).Err(), "ERR second")
	if err := a.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := srv.FailNext(2, "ERR gone"); err != nil {
		t.Fatal(err)
	}
	if err := srv.FailNext(0, ""); err != nil {
		t.Fatal(err)
	}
	if err := a.Ping(ctx).Err(); err != nil {
		t.Fatalf("after FailNext(0): %v", err)
	}
}

// go-redis retries a LOADING error (as it does after a Redis restart):
// with FailNext the test sees its retries succeed, and the entry is added
// once.
func TestFailNextClientRetries(t *testing.T) {
	srv := RunT(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: 3})
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := srv.FailNext(2, "LOADING Redis is loading the dataset in memory"); err != nil {
		t.Fatal(err)
	}
	if err := addOne(ctx, rdb, "1-1"); err != nil {
		t.Fatalf("XADD after 2 retries: %v", err)
	}
	wantXLen(t, srv, 1)
	if err := srv.FailNext(4, "LOADING Redis is loading the dataset in memory"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, addOne(ctx, rdb, "1-2"), "LOADING Redis is loading the dataset in memory")
	wantXLen(t, srv, 1)
}

// FailCommand fails one command, one subcommand, or a container's every
// subcommand; the others run.
func TestFailCommand(t *testing.T) {
	srv := RunT(t)
	ctx := context.Background()
	rdb := newGoRedis(t, srv)
	if err := srv.FailCommand("XADD", "READONLY You can't write against a read only replica."); err != nil {
		t.Fatal(err)
	}
	wantErr(t, addOne(ctx, rdb, "1-1"), "READONLY You can't write against a read only replica.")
	if n, err := rdb.XLen(ctx, "s").Result(); err != nil || n != 0 {
		t.Fatalf("XLEN: %d, %v", n, err)
	}
	if err := srv.FailCommand("xadd", ""); err != nil {
		t.Fatal(err)
	}
	if err := addOne(ctx, rdb, "1-1"); err != nil {
		t.Fatal(err)
	}

	if err := srv.FailCommand("XGROUP CREATE", "ERR no group for you"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, rdb.XGroupCreate(ctx, "s", "g", "0").Err(), "ERR no group for you")
	if err := rdb.XGroupCreateConsumer(ctx, "s", "g", "c").Err(); err == nil || err.Error() == "ERR no group for you" {
		t.Fatalf("XGROUP CREATECONSUMER: %v, want the group's absence", err)
	}
	if err := srv.FailCommand("xgroup|create", ""); err != nil {
		t.Fatal(err)
	}
	if err := rdb.XGroupCreate(ctx, "s", "g", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := srv.FailCommand("xgroup", "ERR all of XGROUP"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, rdb.XGroupCreateConsumer(ctx, "s", "g", "c").Err(), "ERR all of XGROUP")
	wantErr(t, rdb.XGroupDestroy(ctx, "s", "g").Err(), "ERR all of XGROUP")
	if err := rdb.XInfoGroups(ctx, "s").Err(); err != nil {
		t.Fatalf("XINFO GROUPS: %v", err)
	}

	// Named, a setup command fails too: a new client cannot connect.
	if err := srv.FailCommand("HELLO", "ERR no hello"); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, srv.Addr())
	expect(t, c, `-"ERR no hello"`, "HELLO", "3")
}

// SetError goes first, then FailNext, then FailCommand; a command one
// of them fails does not use up FailNext's count.
func TestFaultOrder(t *testing.T) {
	srv := RunT(t)
	ctx := context.Background()
	rdb := newGoRedis(t, srv)
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := srv.FailCommand("PING", "ERR by name"); err != nil {
		t.Fatal(err)
	}
	if err := srv.FailNext(1, "ERR next"); err != nil {
		t.Fatal(err)
	}
	srv.SetError("ERR all")
	wantErr(t, rdb.Ping(ctx).Err(), "ERR all")
	srv.SetError("")
	wantErr(t, rdb.Ping(ctx).Err(), "ERR next")
	wantErr(t, rdb.Ping(ctx).Err(), "ERR by name")
	if err := rdb.Echo(ctx, "x").Err(); err != nil {
		t.Fatal(err)
	}
}

// A command failed in a transaction aborts it, as one refused when
// queued does; a failed EXEC ends it. Nothing of it runs.
func TestFaultInTransaction(t *testing.T) {
	srv := RunT(t)
	ctx := context.Background()
	rdb := newGoRedis(t, srv)
	if err := srv.FailCommand("XADD", "ERR injected"); err != nil {
		t.Fatal(err)
	}
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.XLen(ctx, "s")
		p.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: "1-1", Values: []string{"f", "v"}})
		return nil
	})
	wantErr(t, err, "EXECABORT Transaction discarded because of previous errors.")
	if err := srv.FailCommand("XADD", ""); err != nil {
		t.Fatal(err)
	}
	if err := srv.FailCommand("EXEC", "ERR no exec"); err != nil {
		t.Fatal(err)
	}
	_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: "1-1", Values: []string{"f", "v"}})
		return nil
	})
	wantErr(t, err, "ERR no exec")
	wantXLen(t, srv, 0)
	// The connection left the transaction.
	c := newClient(t, srv.Addr())
	expect(t, c, `+"OK"`, "MULTI")
	expect(t, c, `-"ERR no exec"`, "EXEC")
	expect(t, c, `$"1-1"`, "XADD", "s", "1-1", "f", "v")
}

// Bad arguments fail with ErrFault and change nothing.
func TestFaultBadArguments(t *testing.T) {
	srv := RunT(t)
	ctx := context.Background()
	rdb := newGoRedis(t, srv)
	if err := srv.FailCommand("XLEN", "ERR kept"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  error
		text string
	}{
		{"FailNext(-1)", srv.FailNext(-1, "ERR x"), `xstream server: bad fault injection: FailNext(-1, "ERR x"): n must be >= 0 and, when > 0, msg not empty`},
		{"FailNext(1, \"\")", srv.FailNext(1, ""), `xstream server: bad fault injection: FailNext(1, ""): n must be >= 0 and, when > 0, msg not empty`},
		{"FailCommand(NOPE)", srv.FailCommand("NOPE", "ERR x"), `xstream server: bad fault injection: FailCommand("NOPE"): no such command`},
		{"FailCommand(XGROUP NOPE)", srv.FailCommand("XGROUP NOPE", "ERR x"), `xstream server: bad fault injection: FailCommand("XGROUP NOPE"): no such command`},
		{"FailCommand(XLEN, \"\") of a sub", srv.FailCommand("XLEN SUB", ""), `xstream server: bad fault injection: FailCommand("XLEN SUB"): no such command`},
	} {
		if !errors.Is(tc.err, ErrFault) || tc.err.Error() != tc.text {
			t.Errorf("%s: %v, want %q (ErrFault)", tc.name, tc.err, tc.text)
		}
	}
	// Nothing changed: XLEN still fails, the rest runs.
	wantErr(t, rdb.XLen(ctx, "s").Err(), "ERR kept")
	for range 3 {
		if err := rdb.Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// A queued command uses FailNext's count when queued; EXEC does not run
// it through the failures again.
func TestFailNextInTransaction(t *testing.T) {
	srv := RunT(t)
	c := newClient(t, srv.Addr())
	expect(t, c, `+"OK"`, "MULTI")
	expect(t, c, `+"QUEUED"`, "XADD", "s", "1-1", "f", "v")
	if err := srv.FailNext(1, "ERR once"); err != nil {
		t.Fatal(err)
	}
	expect(t, c, `-"ERR once"`, "XADD", "s", "1-2", "f", "v")
	expect(t, c, `-"EXECABORT Transaction discarded because of previous errors."`, "EXEC")
	wantXLen(t, srv, 0)

	expect(t, c, `+"OK"`, "MULTI")
	expect(t, c, `+"QUEUED"`, "XADD", "s", "1-1", "f", "v")
	if err := srv.FailNext(1, "ERR once"); err != nil {
		t.Fatal(err)
	}
	expect(t, c, `-"ERR once"`, "EXEC") // EXEC itself is the next command
	wantXLen(t, srv, 0)
	expect(t, c, `+"OK"`, "MULTI")
	expect(t, c, `+"QUEUED"`, "XADD", "s", "1-1", "f", "v")
	expect(t, c, `[$"1-1"]`, "EXEC")
	wantXLen(t, srv, 1)
}
