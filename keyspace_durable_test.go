package xstream

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestKeyspaceDurable runs random Rename, Copy, SetExpiry, RemoveExpired
// and Remove calls, among adds and group reads, on a durable DB that is
// closed and reopened at random, sometimes after a snapshot or with one
// running meanwhile (reopener): after each reopen the DB must hold the
// same names, streams and expiries (dumpState), and the expiry count
// must match the streams.
func TestKeyspaceDurable(t *testing.T) {
	ctx := context.Background()
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run("seed="+strconv.FormatUint(seed, 10), func(t *testing.T) {
			t.Parallel()
			clk := newTestClock(expT0.UnixMilli())
			d := newReopener(t, clk, seed)
			r := rand.New(rand.NewPCG(seed, 0x6b6579))
			names := []string{"a", "b", "c", "d"}
			name := func() string { return names[r.IntN(len(names))] }
			for step := range 400 {
				db := d.db
				switch r.IntN(8) {
				case 0, 1:
					_, err := db.Add(name(), AddArgs{}, Fields("f", strconv.Itoa(step))...)
					require.NoError(t, err)
				case 2:
					db.Rename(name(), name(), r.IntN(2) == 0)
				case 3:
					if src, dst := name(), name(); src != dst {
						db.Copy(src, db, dst, r.IntN(2) == 0)
					}
				case 4:
					at := time.Time{}
					if r.IntN(3) != 0 {
						at = time.UnixMilli(clk.now().UnixMilli() + int64(r.IntN(5000)))
					}
					db.SetExpiry(name(), at)
				case 5:
					clk.advance(time.Duration(r.IntN(2000)) * time.Millisecond)
					if r.IntN(2) == 0 {
						db.RemoveExpired(clk.now(), names...)
					} else {
						db.RemoveExpiredSample(clk.now(), 2)
					}
				case 6:
					n := name()
					if s, ok := db.Lookup(n); ok {
						s.CreateGroup("g", "0", GroupOptions{}) // may exist already
						_, err := db.ReadGroup(ctx, "g", "c", ReadGroupArgs{Count: 2}, n, ">")
						require.NoError(t, err)
					}
				case 7:
					if r.IntN(4) == 0 {
						db.Remove(name())
					}
				}
				d.maybeReopen(t)
				expiring := 0
				for _, n := range d.db.Names("") {
					s, _ := d.db.Lookup(n)
					if _, ok := s.ExpiresAt(); ok {
						expiring++
					}
				}
				require.Equal(t, expiring, d.db.Expiring(), "step %d", step)
			}
			t.Logf("%d reopens, %d snapshots", d.reopens, d.snapshots)
			require.NotZero(t, d.reopens)
		})
	}
}
