package server

import "time"

// The active expiry cycle: as Redis 7.0's slow cycle (hz 10), every
// expireEvery each DB is sampled keys with an expiry, the expired ones
// removed, and sampled again while more than an acceptable share of a
// sample had expired, for at most a share of each cycle's time. With
// Redis's active-expire-effort e (1 to 10, CONFIG SET; 1 by default) a
// sample is 20 + 20/4*(e-1) keys, the acceptable share of expired keys
// is 10-(e-1) percent (ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE less the
// effort) and the time 25+2*(e-1) percent of the 100 ms between cycles.
// Keys nobody names go this way.
const (
	expireEvery = 100 * time.Millisecond
	// defaultExpireEffort is Redis's default active-expire-effort.
	defaultExpireEffort = 1
)

// expireParams are the cycle's settings for an active-expire-effort.
type expireParams struct {
	sample     int           // keys a sample looks at
	stalePct   int           // repeat while more than this percent of a sample expired
	timeBudget time.Duration // of each cycle
}

// expireParamsFor returns Redis 7.0's activeExpireCycle settings for the
// effort (1 to 10).
func expireParamsFor(effort int64) expireParams {
	e := int(effort - 1)
	return expireParams{
		sample:     20 + 20/4*e,
		stalePct:   10 - e,
		timeBudget: time.Duration(25+2*e) * expireEvery / 100,
	}
}

// again reports whether the cycle samples a DB again after a sample that
// looked at sampled keys and found expired of them expired, as Redis's
// loop condition: nothing sampled, or more than the acceptable percent
// (in integers, as Redis computes it).
func (p expireParams) again(expired, sampled int) bool {
	return sampled == 0 || expired*100/sampled > p.stalePct
}

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
				s.expireCycle(time.Now().Add(expireParamsFor(s.expireEffort.Load()).timeBudget))
			}
		}
	}
}

// expireCycle runs one cycle over the DBs, until deadline (wall clock),
// with the server's clock as the time keys expire by; it returns how many
// keys it removed. Each sample with keys kept that have time left moves
// the DB's avg_ttl estimate (noteTTL).
func (s *Server) expireCycle(deadline time.Time) int {
	p := expireParamsFor(s.expireEffort.Load())
	removed := 0
	for i := range s.dbs {
		db := s.db(i)
		t := s.access(i)
		if db.Expiring() == 0 {
			t.avgTTL.Store(0) // as Redis, when the DB has nothing to expire
			continue
		}
		for db.Expiring() > 0 {
			x := db.SampleExpiry(s.now(), p.sample)
			s.track.invalidate(nil, x.Removed, true)
			if x.TTLs > 0 {
				t.noteTTL(x.TTLSum.Milliseconds() / int64(x.TTLs))
			}
			n := len(x.Removed)
			removed += n
			if !p.again(n, x.Sampled) || !time.Now().Before(deadline) {
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
