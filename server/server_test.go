package server

import (
	"bufio"
	"context"
	"errors"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Tests of the xstream server alone: what a real Redis cannot be compared
// with (passwords, limits, shutdown, Redis 8 commands).

func expect(t *testing.T, c *client, want string, args ...string) {
	t.Helper()
	if got := c.do(t, args...).String(); got != want {
		t.Fatalf("%q:\n  got  %s\n  want %s", args, got, want)
	}
}

func TestRunTWithGoRedis(t *testing.T) {
	srv := RunT(t)
	ctx := context.Background()
	// The default go-redis client asks for RESP3 and falls back to RESP2.
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: "orders", ID: "1-1", Values: []string{"item", "book"}}).Result()
	if err != nil || id != "1-1" {
		t.Fatalf("XAdd: %q, %v", id, err)
	}
	if err := rdb.XGroupCreate(ctx, "orders", "billing", "0").Err(); err != nil {
		t.Fatal(err)
	}
	res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "billing", Consumer: "w1", Streams: []string{"orders", ">"}, Count: 10}).Result()
	if err != nil || len(res) != 1 || len(res[0].Messages) != 1 || res[0].Messages[0].Values["item"] != "book" {
		t.Fatalf("XReadGroup: %v, %v", res, err)
	}
	if n, err := rdb.XAck(ctx, "orders", "billing", "1-1").Result(); err != nil || n != 1 {
		t.Fatalf("XAck: %d, %v", n, err)
	}
	if err := rdb.XGroupCreate(ctx, "orders", "billing", "0").Err(); err == nil || !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		t.Fatalf("second XGroupCreate: %v", err)
	}
	if _, err := rdb.Get(ctx, "k").Result(); err == nil || !strings.Contains(err.Error(), "unknown command 'get'") {
		t.Fatalf("GET: %v", err)
	}
	s, ok := srv.DB(0).Lookup("orders")
	if !ok || s.Len() != 1 {
		t.Fatalf("DB(0) does not hold the stream")
	}
}

func TestHelloProtocols(t *testing.T) {
	c := newClient(t, RunT(t).Addr())
	expect(t, c, `-"NOPROTO unsupported protocol version"`, "HELLO", "4")
	expect(t, c, `-"NOPROTO unsupported protocol version"`, "HELLO", "1")
	r := c.do(t, "HELLO", "3")
	if r.kind != '%' || len(r.kids) != 14 || r.kids[5].n != 3 {
		t.Fatalf("HELLO 3: %v", r)
	}
	expect(t, c, `_nil`, "CLIENT", "GETNAME")
	r = c.do(t, "HELLO", "2", "SETNAME", "me")
	if len(r.kids) != 14 || r.kids[5].n != 2 {
		t.Fatalf("HELLO 2: %v", r)
	}
	expect(t, c, `$"me"`, "CLIENT", "GETNAME")
	expect(t, c, `+"OK"`, "CLIENT", "SETINFO", "LIB-NAME", "x")
	expect(t, c, `-"ERR Unrecognized option 'foo'"`, "CLIENT", "SETINFO", "foo", "x")
}

func TestRequirePass(t *testing.T) {
	srv := RunTWith(t, Options{Password: "s3cret"})
	nc, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	rd := bufio.NewReader(nc)
	send := func(cmd, want string) {
		t.Helper()
		if _, err := nc.Write([]byte(cmd)); err != nil {
			t.Fatal(err)
		}
		r, err := readReply(rd)
		if err != nil {
			t.Fatal(err)
		}
		if r.String() != want {
			t.Fatalf("%q: got %s, want %s", cmd, r, want)
		}
	}
	send("PING\r\n", `-"NOAUTH Authentication required."`)
	send("XADD s 1-1 f v\r\n", `-"NOAUTH Authentication required."`)
	send("HELLO 2\r\n", `-"NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"`)
	// Replies below as redis-server 7.0.15 with requirepass gives them.
	send("EXEC\r\n", `-"EXECABORT Transaction discarded because of: NOAUTH Authentication required."`)
	send("MULTI\r\n", `-"NOAUTH Authentication required."`)
	send("EXEC\r\n", `-"EXECABORT Transaction discarded because of: NOAUTH Authentication required."`)
	send("AUTH wrong\r\n", `-"WRONGPASS invalid username-password pair or user is disabled."`)
	send("AUTH other s3cret\r\n", `-"WRONGPASS invalid username-password pair or user is disabled."`)
	send("HELLO 3\r\n", `-"NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"`)
	send("HELLO 3 AUTH default wrong\r\n", `-"WRONGPASS invalid username-password pair or user is disabled."`)
	send("AUTH s3cret\r\n", `+"OK"`)
	send("PING\r\n", `+"PONG"`)
	send("COMMAND INFO nosuchcommand\r\n", `[$nil]`)
	// The failed HELLO 3s left the connection in RESP2.
	send("XADD missing NOMKSTREAM * f v\r\n", `$nil`)
	send("HELLO 3 AUTH default s3cret SETNAME me\r\n", `%[$"server" $"redis" $"version" $"7.0.15" $"proto" :3 $"id" :1 $"mode" $"standalone" $"role" $"master" $"modules" []]`)
	send("CLIENT GETNAME\r\n", `$"me"`)
	send("XADD missing NOMKSTREAM * f v\r\n", `_nil`)
	if srv.DB(0).Len() != 0 {
		t.Fatal("a command ran before AUTH")
	}

	// go-redis with the password: HELLO ... AUTH.
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), Password: "s3cret"})
	defer rdb.Close()
	if err := rdb.XAdd(context.Background(), &redis.XAddArgs{Stream: "s", ID: "1-1", Values: []string{"f", "v"}}).Err(); err != nil {
		t.Fatal(err)
	}
	bad := redis.NewClient(&redis.Options{Addr: srv.Addr(), Password: "nope"})
	defer bad.Close()
	if err := bad.Ping(context.Background()).Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGPASS") {
		t.Fatalf("wrong password: %v", err)
	}
}

func TestLimits(t *testing.T) {
	srv := RunTWith(t, Options{MaxRequestBytes: 1 << 10, MaxArgs: 8, MaxReplyBytes: 4 << 10})
	// More arguments than MaxArgs are refused at the *N header, with
	// Redis's error for a bad one, and the connection closes; an inline
	// request is refused after it is parsed, with an error reply.
	expectRefused(t, srv.Addr(), resp("PING")+"*9\r\n", `+"PONG"`, `-"ERR Protocol error: invalid multibulk length"`)
	c := newClient(t, srv.Addr())
	expect(t, c, `$"1-1"`, "XADD", "s", "1-1", "a", "1", "b", "2")
	for i := 2; i < 200; i++ {
		c.do(t, "XADD", "s", itoa(i)+"-1", "field", "value")
	}
	expect(t, c, `:199`, "XLEN", "s")
	r := c.do(t, "XRANGE", "s", "-", "+")
	if r.kind != '-' || !strings.Contains(r.s, "exceeds the output limit of 4096 bytes") {
		t.Fatalf("large reply: %v", r)
	}
	expect(t, c, `:199`, "XLEN", "s") // the connection still works
	c.rc.Write([]byte("XADD s 2-2 a 1 b 2 c 3\r\nXLEN s\r\n"))
	rd := bufio.NewReader(c.rc)
	for _, want := range []string{`-"ERR too many arguments: 9, the limit is 8"`, `:199`} {
		if r, err := readReply(rd); err != nil || r.String() != want {
			t.Fatalf("inline request: %v, %v; want %s", r, err, want)
		}
	}

	// A request over the limit is an error, and the connection closes.
	nc, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	big := strings.Repeat("x", 4<<10)
	go nc.Write([]byte("*3\r\n$4\r\nECHO\r\n$" + itoa(len(big)) + "\r\n" + big + "\r\n"))
	rd = bufio.NewReader(nc)
	r, err = readReply(rd)
	if err != nil || r.kind != '-' || !strings.Contains(r.s, "request larger than the limit of 1024 bytes") {
		t.Fatalf("large request: %v, %v", r, err)
	}
	if _, err := readReply(rd); err == nil {
		t.Fatal("the connection stayed open after a request over the limit")
	}
}

func TestShutdownEndsBlockedReads(t *testing.T) {
	srv := New(Options{})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, srv.Addr())
	c.do(t, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
	s, _ := srv.DB(0).Lookup("s")
	blocked := newClient(t, srv.Addr())
	got := make(chan *reply, 1)
	go func() {
		r, err := blocked.send("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
		if err != nil {
			r = &reply{kind: '-', s: err.Error()}
		}
		got <- r
	}()
	for s.Blocked() != 1 {
		runtime.Gosched()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.String() != "*nil" {
		t.Fatalf("blocked read at shutdown: %v", r)
	}
	if s.Blocked() != 0 {
		t.Fatal("a reader is still registered after shutdown")
	}
	if _, err := net.Dial("tcp", srv.Addr()); err == nil {
		t.Fatal("the server still accepts connections")
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestUnknownAndArity(t *testing.T) {
	c := newClient(t, RunT(t).Addr())
	expect(t, c, `-"ERR unknown command 'SET', with args beginning with: 'k' 'v' "`, "SET", "k", "v")
	expect(t, c, `-"ERR wrong number of arguments for 'xlen' command"`, "XLEN")
	expect(t, c, `-"ERR unknown subcommand 'foo'. Try XINFO HELP."`, "XINFO", "foo")
	expect(t, c, `-"ERR wrong number of arguments for 'xinfo|groups' command"`, "XINFO", "GROUPS")
	expect(t, c, `:`+itoa(len(commands)), "COMMAND", "COUNT")
	if r := c.do(t, "COMMAND", "INFO", "xadd"); len(r.kids) != 1 || r.kids[0].kids[1].n != -5 {
		t.Fatalf("COMMAND INFO xadd: %v", r)
	}
	r := c.do(t, "INFO")
	if !strings.Contains(r.s, "redis_version:") || !strings.Contains(r.s, "# Keyspace") {
		t.Fatalf("INFO: %v", r)
	}
	expect(t, c, `+"OK"`, "QUIT")
}

func TestClockOption(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	c := newClient(t, RunTWith(t, Options{Clock: func() time.Time { return now }}).Addr())
	expect(t, c, `$"1700000000000-0"`, "XADD", "s", "*", "f", "v")
	expect(t, c, `$"1700000000000-1"`, "XADD", "s", "*", "f", "v")
}

func TestStartFailsOnBusyAddress(t *testing.T) {
	srv := RunT(t)
	other := New(Options{Addr: srv.Addr()})
	if err := other.Start(); err == nil {
		other.Close()
		t.Fatal("a second server started on a busy address")
	} else if !errors.As(err, new(*net.OpError)) {
		t.Fatalf("unexpected error: %v", err)
	}
}

// A malformed request gets Redis 7.0's protocol error, said once.
func TestProtocolErrorText(t *testing.T) {
	srv := RunT(t)
	nc, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := nc.Write([]byte("*abc\r\n")); err != nil {
		t.Fatal(err)
	}
	r, err := readReply(bufio.NewReader(nc))
	if err != nil {
		t.Fatal(err)
	}
	if want := `-"ERR Protocol error: invalid multibulk length"`; r.String() != want {
		t.Fatalf("got %s, want %s", r, want)
	}
}
