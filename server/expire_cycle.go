package server

import "time"

// The active expiry cycle: as Redis's (hz 10), every expireEvery each DB
// is sampled expireSample keys with an expiry at a time, the expired ones
// removed, and sampled again while more than a quarter of a sample had
// expired, for at most expireBudget of each cycle. Keys nobody names go
// this way.
const (
	expireEvery  = 100 * time.Millisecond
	expireSample = 20
	expireBudget = 25 * time.Millisecond
)

// expireLoop runs the active expiry cycle until the server stops. Start
// runs it; Close waits for it.
func (s *Server) expireLoop() {
	defer s.wg.Done()
	t := time.NewTicker(expireEvery)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
			s.tickLRU() // Redis's cron refreshes its LRU clock as often
			if !s.expirePaused.Load() {
				s.expireCycle(time.Now().Add(expireBudget))
			}
		}
	}
}

// expireCycle runs one cycle over the DBs, until deadline (wall clock),
// with the server's clock as the time keys expire by; it returns how many
// keys it removed. Each sample with keys kept that have time left moves
// the DB's avg_ttl estimate (noteTTL).
func (s *Server) expireCycle(deadline time.Time) int {
	removed := 0
	for i := range s.dbs {
		db := s.db(i)
		t := s.access(i)
		if db.Expiring() == 0 {
			t.avgTTL.Store(0) // as Redis, when the DB has nothing to expire
			continue
		}
		for db.Expiring() > 0 {
			x := db.SampleExpiry(s.now(), expireSample)
			s.track.invalidate(nil, x.Removed, true)
			if x.TTLs > 0 {
				t.noteTTL(x.TTLSum.Milliseconds() / int64(x.TTLs))
			}
			n := len(x.Removed)
			removed += n
			if n*4 <= x.Sampled || !time.Now().Before(deadline) {
				break
			}
		}
	}
	return removed
}

// noteTTL moves the DB's avg_ttl estimate towards a sample's average TTL
// (ms), as Redis's activeExpireCycle: 98% the estimate, 2% the sample,
// the first sample taken whole. Only the cycle's goroutine calls it.
func (t *accessTable) noteTTL(avg int64) {
	cur := t.avgTTL.Load()
	if cur == 0 {
		cur = avg
	}
	t.avgTTL.Store(cur/50*49 + avg/50)
}
