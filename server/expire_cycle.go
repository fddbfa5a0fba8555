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
// keys it removed.
func (s *Server) expireCycle(deadline time.Time) int {
	removed := 0
	for i := range s.dbs {
		db := s.db(i)
		for db.Expiring() > 0 {
			sampled, gone := db.RemoveExpiredSample(s.now(), expireSample)
			s.track.invalidate(nil, gone, true)
			n := len(gone)
			removed += n
			if n*4 <= sampled || !time.Now().Before(deadline) {
				break
			}
		}
	}
	return removed
}
