package server

import (
	"testing"
	"time"
)

// The active expiry cycle's settings and its rule for sampling a DB again,
// as Redis 7.0's activeExpireCycle.

func TestExpireParams(t *testing.T) {
	for _, tc := range []struct {
		effort int64
		want   expireParams
	}{
		{1, expireParams{sample: 20, stalePct: 10, timeBudget: 25 * time.Millisecond}},
		{2, expireParams{sample: 25, stalePct: 9, timeBudget: 27 * time.Millisecond}},
		{10, expireParams{sample: 65, stalePct: 1, timeBudget: 43 * time.Millisecond}},
	} {
		if got := expireParamsFor(tc.effort); got != tc.want {
			t.Errorf("effort %d: %+v, want %+v", tc.effort, got, tc.want)
		}
	}
	p := expireParamsFor(1)
	for _, tc := range []struct {
		expired, sampled int
		again            bool
	}{
		{0, 0, true}, {0, 20, false}, {2, 20, false}, {3, 20, true}, {5, 20, true},
		{1, 10, false}, {2, 19, false}, {2, 18, true}, {20, 20, true}, // 200/19 is 10 in integers
	} {
		if got := p.again(tc.expired, tc.sampled); got != tc.again {
			t.Errorf("again(%d, %d) = %v", tc.expired, tc.sampled, got)
		}
	}
	if expireParamsFor(10).again(1, 65) || !expireParamsFor(10).again(1, 50) {
		t.Error("effort 10: 1% of stale keys is acceptable")
	}
}

// 4 expired keys among 21 with an expiry: a sample of 20 finds 3 or 4 of
// them (15% or 20%), more than Redis's acceptable 10%, so the cycle
// samples again and the last one goes in the same cycle (with Redis 6's
// 25% it stopped, with one left, whenever the first sample missed one).
// On the server's clock; 50 rounds, each a new draw of the sample.
func TestExpireCycleAcceptableStale(t *testing.T) {
	srv := RunT(t)
	srv.SetTime(clockT0)
	srv.expirePaused.Store(true) // the test runs the cycle itself
	c := newClient(t, srv.Addr())
	// makeKeys makes n keys that expire, the first expired of them in 1 s,
	// the others in an hour.
	makeKeys := func(n, expired int) {
		for i := range n {
			k := "k" + itoa(i)
			c.do(t, "XADD", k, "1-1", "f", "v")
			ttl := "3600000"
			if i < expired {
				ttl = "1000"
			}
			wantInt(t, c, 1, "PEXPIRE", k, ttl)
		}
	}
	for round := range 50 {
		makeKeys(21, 4)
		srv.FastForward(1001 * time.Millisecond)
		if n := srv.expireCycle(time.Now().Add(time.Hour)); n != 4 {
			t.Fatalf("round %d: the cycle removed %d keys, want 4", round, n)
		}
		wantInt(t, c, 17, "DBSIZE")
		c.do(t, "FLUSHDB")
	}

	// With effort 10 a sample is 65 keys and 1% is acceptable: 2 expired
	// among 100 are found by samples until none is left in one.
	c.do(t, "CONFIG", "SET", "active-expire-effort", "10")
	makeKeys(100, 2)
	srv.FastForward(1001 * time.Millisecond)
	srv.expireCycle(time.Now().Add(time.Hour))
	if n := srv.DB(0).Len(); n < 98 {
		t.Fatalf("%d keys left", n)
	}
}

// CONFIG GET and SET active-expire-effort as Redis 7.0: 1 to 10.
func TestDiffConfigActiveExpireEffort(t *testing.T) {
	p := newPair(t)
	t.Cleanup(func() { p.real.do(t, "CONFIG", "SET", "active-expire-effort", "1") })
	p.do("CONFIG", "GET", "active-expire-effort")
	p.do("CONFIG", "SET", "active-expire-effort", "7")
	p.do("CONFIG", "GET", "active-expire-eff*")
	for _, bad := range []string{"0", "11", "-1", "x", "1.5", ""} {
		p.do("CONFIG", "SET", "active-expire-effort", bad)
	}
	p.do("CONFIG", "GET", "active-expire-effort") // unchanged by the errors
	p.do("CONFIG", "SET", "active-expire-effort", "1")
}
