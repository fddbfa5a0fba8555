package server

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xstreamgo/xstream"
)

// newGoRedis returns a go-redis client of srv, closed when the test ends.
func newGoRedis(t *testing.T, srv *Server) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// SetTime stops the clock: XADD * takes its millisecond, and the
// sequence counts on while it stands still; FastForward moves it on.
func TestSetTimeAutoIDs(t *testing.T) {
	srv := RunT(t)
	rdb := newGoRedis(t, srv)
	ctx := context.Background()
	srv.SetTime(time.UnixMilli(1_700_000_000_000))
	add := func(want string) {
		t.Helper()
		id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []string{"f", "v"}}).Result()
		if err != nil || id != want {
			t.Fatalf("XADD *: %q, %v; want %q", id, err, want)
		}
	}
	add("1700000000000-0")
	add("1700000000000-1")
	srv.FastForward(1500 * time.Millisecond)
	add("1700000001500-0")
	srv.FastForward(-time.Hour) // back: the IDs stay increasing
	add("1700000001500-1")
	srv.SetTime(time.UnixMilli(1_800_000_000_000))
	add("1800000000000-0")
}

// FastForward without SetTime adds to the wall clock, which goes on.
func TestFastForwardWallClock(t *testing.T) {
	srv := RunT(t)
	before := time.Now()
	srv.FastForward(24 * time.Hour)
	got := srv.now()
	if got.Before(before.Add(24*time.Hour)) || got.After(time.Now().Add(24*time.Hour)) {
		t.Fatalf("now = %v, want between %v and %v", got, before.Add(24*time.Hour), time.Now().Add(24*time.Hour))
	}
	id, err := newGoRedis(t, srv).XAdd(context.Background(), &redis.XAddArgs{Stream: "s", Values: []string{"f", "v"}}).Result()
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := xstream.ParseID(id)
	if int64(ms.Ms) < before.Add(24*time.Hour).UnixMilli() {
		t.Fatalf("XADD * gave %s, before the clock's %d", id, before.Add(24*time.Hour).UnixMilli())
	}
}

// FastForward with Options.Clock adds to that clock.
func TestFastForwardOptionsClock(t *testing.T) {
	base := time.UnixMilli(1_000_000)
	srv := RunTWith(t, Options{Clock: func() time.Time { return base }})
	srv.FastForward(time.Second)
	if got := srv.now(); !got.Equal(base.Add(time.Second)) {
		t.Fatalf("now = %v, want %v", got, base.Add(time.Second))
	}
}

// Every idle time of a consumer group follows the clock: XPENDING's,
// XINFO CONSUMERS's idle and inactive, XCLAIM's and XAUTOCLAIM's
// min-idle-time.
func TestFastForwardIdleTimes(t *testing.T) {
	srv := RunT(t)
	rdb := newGoRedis(t, srv)
	ctx := context.Background()
	srv.SetTime(time.UnixMilli(1_700_000_000_000))
	for _, id := range []string{"1-1", "1-2"} {
		if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: id, Values: []string{"f", "v"}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.XGroupCreate(ctx, "s", "g", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c1", Streams: []string{"s", ">"}, Count: 2}).Err(); err != nil {
		t.Fatal(err)
	}
	srv.FastForward(time.Hour)

	pend, err := rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: "s", Group: "g", Start: "-", End: "+", Count: 10}).Result()
	if err != nil || len(pend) != 2 || pend[0].Idle != time.Hour || pend[1].Idle != time.Hour {
		t.Fatalf("XPENDING: %+v, %v; want 2 entries idle 1h", pend, err)
	}
	// IDLE filters on the same clock.
	if pend, err := rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: "s", Group: "g", Idle: time.Hour + time.Millisecond, Start: "-", End: "+", Count: 10}).Result(); err != nil || len(pend) != 0 {
		t.Fatalf("XPENDING IDLE 1h+1ms: %+v, %v; want none", pend, err)
	}
	cons, err := rdb.XInfoConsumers(ctx, "s", "g").Result()
	if err != nil || len(cons) != 1 || cons[0].Idle != time.Hour || cons[0].Inactive != time.Hour {
		t.Fatalf("XINFO CONSUMERS: %+v, %v; want idle and inactive 1h", cons, err)
	}

	// Not idle long enough: XAUTOCLAIM and XCLAIM leave the entries.
	msgs, _, err := rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: "s", Group: "g", Consumer: "c2", MinIdle: 2 * time.Hour, Start: "0", Count: 10}).Result()
	if err != nil || len(msgs) != 0 {
		t.Fatalf("XAUTOCLAIM min-idle 2h after 1h: %v, %v; want none", msgs, err)
	}
	if msgs, err := rdb.XClaim(ctx, &redis.XClaimArgs{Stream: "s", Group: "g", Consumer: "c2", MinIdle: 2 * time.Hour, Messages: []string{"1-2"}}).Result(); err != nil || len(msgs) != 0 {
		t.Fatalf("XCLAIM min-idle 2h after 1h: %v, %v; want none", msgs, err)
	}
	srv.FastForward(time.Hour)
	msgs, _, err = rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: "s", Group: "g", Consumer: "c2", MinIdle: 2 * time.Hour, Start: "0", Count: 1}).Result()
	if err != nil || len(msgs) != 1 || msgs[0].ID != "1-1" {
		t.Fatalf("XAUTOCLAIM min-idle 2h after 2h: %v, %v; want 1-1", msgs, err)
	}
	if msgs, err := rdb.XClaim(ctx, &redis.XClaimArgs{Stream: "s", Group: "g", Consumer: "c2", MinIdle: 2 * time.Hour, Messages: []string{"1-2"}}).Result(); err != nil || len(msgs) != 1 {
		t.Fatalf("XCLAIM min-idle 2h after 2h: %v, %v; want 1-2", msgs, err)
	}

	// The claim reset the idle times, and c2 was seen and active now.
	srv.FastForward(5 * time.Second)
	pend, err = rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: "s", Group: "g", Start: "-", End: "+", Count: 10}).Result()
	if err != nil || len(pend) != 2 || pend[0].Idle != 5*time.Second || pend[0].Consumer != "c2" {
		t.Fatalf("XPENDING after the claims: %+v, %v; want idle 5s, owned by c2", pend, err)
	}
	cons, err = rdb.XInfoConsumers(ctx, "s", "g").Result()
	if err != nil || len(cons) != 2 {
		t.Fatalf("XINFO CONSUMERS: %+v, %v", cons, err)
	}
	want := map[string][2]time.Duration{"c1": {2*time.Hour + 5*time.Second, 2*time.Hour + 5*time.Second}, "c2": {5 * time.Second, 5 * time.Second}}
	for _, c := range cons {
		if w := want[c.Name]; c.Idle != w[0] || c.Inactive != w[1] {
			t.Fatalf("XINFO CONSUMERS %s: idle %v inactive %v, want %v", c.Name, c.Idle, c.Inactive, w)
		}
	}
	// XINFO STREAM FULL's seen-time and active-time are times of the clock.
	full, err := rdb.XInfoStreamFull(ctx, "s", 10).Result()
	if err != nil || len(full.Groups) != 1 {
		t.Fatalf("XINFO STREAM FULL: %+v, %v", full, err)
	}
	for _, c := range full.Groups[0].Consumers {
		wantSeen := time.UnixMilli(1_700_000_000_000).Add(2 * time.Hour)
		if c.Name == "c1" {
			wantSeen = time.UnixMilli(1_700_000_000_000)
		}
		if !c.SeenTime.Equal(wantSeen) || !c.ActiveTime.Equal(wantSeen) {
			t.Fatalf("XINFO STREAM FULL %s: seen %v active %v, want %v", c.Name, c.SeenTime, c.ActiveTime, wantSeen)
		}
	}
}

// A sharded stream made through Server.DB drops its records once the
// clock passes their retention.
func TestFastForwardRetention(t *testing.T) {
	srv := RunT(t)
	srv.SetTime(time.UnixMilli(1_700_000_000_000))
	ss, err := srv.DB(0).CreateShardedStream("events", xstream.ShardedArgs{Shards: 1, Retention: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ss.Put("k", xstream.PutArgs{}, xstream.Fields("f", "v")...); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		n := 0
		for _, err := range ss.ScanShard("shardId-000000000000", xstream.IteratorArgs{Type: xstream.TrimHorizon}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		return n
	}
	srv.FastForward(59 * time.Minute)
	if n := count(); n != 1 {
		t.Fatalf("after 59m: %d records, want 1", n)
	}
	srv.FastForward(2 * time.Minute)
	if n := count(); n != 0 {
		t.Fatalf("after 61m: %d records, want 0 (retention 1h)", n)
	}
}

// SetTime and FastForward may run beside commands (go test -race).
func TestClockConcurrent(t *testing.T) {
	srv := RunT(t)
	rdb := newGoRedis(t, srv)
	ctx := context.Background()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			srv.FastForward(time.Millisecond)
			if i%50 == 0 {
				srv.SetTime(time.UnixMilli(int64(1_700_000_000_000 + i)))
			}
		}
	}()
	var last string
	for range 200 {
		id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []string{"f", "v"}}).Result()
		if err != nil {
			t.Fatal(err)
		}
		if last != "" && !idLess(last, id) {
			t.Fatalf("XADD * gave %s after %s", id, last)
		}
		last = id
	}
	<-done
}
