package xstream

import "fmt"

// The changes of idempotent production (idmp.go), and how a durable DB
// keeps them: one effect kind, effIdempotence, in the log, and two
// snapshot records. As for every change (ops.go), each function here
// records its effect and applies it, and replay applies the effect
// through the same function.
//
// An effIdempotence effect is a sub-kind byte and its values:
//
//	idmpSet        duration (seconds), max size: the setting changed,
//	               every remembered ID forgotten
//	idmpTrack      producer, idempotent ID, entry ID, now (ms): an
//	               idempotent add remembered at now (after the entry's
//	               effAppend, in the same record)
//	idmpDuplicate  an idempotent add found its ID
//
// The snapshot records follow a stream's groups, for a stream with
// idempotence state only (so a DB that never used it keeps the format of
// before):
//
//	snapIdempotence  duration (seconds), max size, added, duplicates,
//	                 last sweep (ms), number of producers
//	snapIdmpProducer producer, n, n × (idempotent ID, entry ID), oldest
//	                 first
const (
	idmpSet       = 0
	idmpTrack     = 1
	idmpDuplicate = 2
)

// idmpLocked returns s's idempotence state, made when s has none.
func (s *Stream) idmpLocked() *idmpState {
	if s.idmp == nil {
		s.idmp = newIdmpState()
	}
	return s.idmp
}

// idmpConfigLocked sets the duration and max size and forgets every
// remembered ID.
func (s *Stream) idmpConfigLocked(durationSec uint64, maxSize int) {
	if s.log != nil {
		s.log.begin(effIdempotence)
		s.log.buf = append(s.log.buf, idmpSet)
		s.log.uvarint(durationSec)
		s.log.uvarint(uint64(maxSize))
	}
	st := s.idmpLocked()
	st.durationMs, st.maxSize = durationSec*1000, maxSize
	st.producers, st.tracked = nil, 0
}

// idmpTrackLocked remembers that the add of k made the entry id at
// nowMs: the producer's IDs aged past the duration at nowMs are dropped,
// then its oldest while it holds the max size, then k is remembered.
// k is not remembered (idmpDuplicateLocked said so). O(1) amortized, plus
// the IDs dropped.
func (s *Stream) idmpTrackLocked(k idmpKey, id ID, nowMs uint64) {
	if s.log != nil {
		s.log.begin(effIdempotence)
		s.log.buf = append(s.log.buf, idmpTrack)
		s.log.str(k.producer)
		s.log.str(k.iid)
		s.log.id(id)
		s.log.uvarint(nowMs)
	}
	st := s.idmpLocked()
	st.added++
	if nowMs >= st.sweptMs+idmpSweepEvery {
		st.sweep(nowMs)
	}
	p := st.producers[k.producer]
	if p == nil {
		if st.producers == nil {
			st.producers = map[string]*idmpProducer{}
		}
		p = &idmpProducer{ids: map[string]ID{}}
		st.producers[k.producer] = p
	}
	for p.n > 0 && (p.n >= st.maxSize || st.expired(p.oldest().ms, nowMs)) {
		p.pop()
		st.tracked--
	}
	p.push(k.iid, id, st.maxSize)
	st.tracked++
}

// sweep drops every producer's IDs aged past the duration at nowMs, and
// the producers left with none. O(P) plus the IDs dropped.
func (st *idmpState) sweep(nowMs uint64) {
	st.sweptMs = nowMs
	for name, p := range st.producers {
		for p.n > 0 && st.expired(p.oldest().ms, nowMs) {
			p.pop()
			st.tracked--
		}
		if p.n == 0 {
			delete(st.producers, name)
		}
	}
}

// idmpDupLocked counts an idempotent add that found its ID.
func (s *Stream) idmpDupLocked() {
	if s.log != nil {
		s.log.begin(effIdempotence)
		s.log.buf = append(s.log.buf, idmpDuplicate)
	}
	s.idmpLocked().dups++
}

// idmpEffect applies an effIdempotence effect to s.
func (r *replayer) idmpEffect(s *Stream, d *decoder) error {
	switch sub := d.byte(); sub {
	case idmpSet:
		dur, size := d.uvarint(), d.uvarint()
		if d.err == nil && !validIdmpConfig(dur, size) {
			return r.corrupt("stream %q: idempotence setting %ds, %d", s.Name(), dur, size)
		}
		s.idmpConfigLocked(dur, int(size))
	case idmpTrack:
		k := idmpKey{d.str(), d.str()}
		id, now := d.id(), d.uvarint()
		if d.err != nil {
			break
		}
		if k.producer == "" || k.iid == "" || ID(s.st.LastID()) != id {
			return r.corrupt("stream %q: idempotent add of %s (producer %q), the last ID is %s", s.Name(), id, k.producer, ID(s.st.LastID()))
		}
		if held, ok := s.idmpHeld(k); ok && !s.idmp.expired(held.Ms, now) {
			return r.corrupt("stream %q: idempotent ID of producer %q added while remembered (as %s)", s.Name(), k.producer, held)
		}
		s.idmpTrackLocked(k, id, now)
	case idmpDuplicate:
		s.idmpDupLocked()
	default:
		return r.corrupt("stream %q: unknown idempotence effect %d", s.Name(), sub)
	}
	return nil
}

// idmpHeld returns the entry ID s holds for k, aged or not.
func (s *Stream) idmpHeld(k idmpKey) (ID, bool) {
	if s.idmp == nil || s.idmp.producers[k.producer] == nil {
		return ID{}, false
	}
	id, ok := s.idmp.producers[k.producer].ids[k.iid]
	return id, ok
}

// validIdmpConfig reports whether a duration in seconds and a max size
// are in their ranges.
func validIdmpConfig(durationSec, maxSize uint64) bool {
	return durationSec >= 1 && durationSec <= uint64(MaxIdempotenceDuration.Seconds()) &&
		maxSize >= 1 && maxSize <= MaxIdempotenceMaxSize
}

// idmpCopy is a stream's idempotence state as a snapshot copied it.
type idmpCopy struct {
	durationSec uint64
	maxSize     int
	added, dups int64
	sweptMs     uint64
	producers   []idmpProducerCopy
}

type idmpProducerCopy struct {
	name string
	iids []string
	ids  []ID
}

// copyIdmpLocked copies s's idempotence state; nil when s has none.
func (s *Stream) copyIdmpLocked() *idmpCopy {
	st := s.idmp
	if st == nil {
		return nil
	}
	c := &idmpCopy{durationSec: st.durationMs / 1000, maxSize: st.maxSize, added: st.added, dups: st.dups, sweptMs: st.sweptMs}
	for name, p := range st.producers {
		pc := idmpProducerCopy{name: name, iids: make([]string, p.n), ids: make([]ID, p.n)}
		for i := range p.n {
			ref := p.ring[(p.head+i)%len(p.ring)]
			pc.iids[i], pc.ids[i] = ref.iid, p.ids[ref.iid]
		}
		c.producers = append(c.producers, pc)
	}
	return c
}

func (w *snapWriter) writeIdmp(c *idmpCopy) error {
	if c == nil {
		return nil
	}
	w.begin(snapIdempotence)
	w.uvarint(c.durationSec)
	w.uvarint(uint64(c.maxSize))
	w.varint(c.added)
	w.varint(c.dups)
	w.uvarint(c.sweptMs)
	w.uvarint(uint64(len(c.producers)))
	if err := w.end(); err != nil {
		return err
	}
	for _, p := range c.producers {
		w.begin(snapIdmpProducer)
		w.str(p.name)
		w.uvarint(uint64(len(p.iids)))
		for i, iid := range p.iids {
			w.str(iid)
			w.id(p.ids[i])
		}
		if err := w.end(); err != nil {
			return err
		}
	}
	return nil
}

// loadIdmp reads a snapIdempotence or snapIdmpProducer record of c.
func (r *replayer) loadIdmp(c *loading, kind byte, d *decoder) error {
	s := c.o.s
	if kind == snapIdempotence {
		dur, size, added, dups, swept, n := d.uvarint(), d.uvarint(), d.varint(), d.varint(), d.uvarint(), d.uvarint()
		if d.err != nil || s.idmp != nil || !validIdmpConfig(dur, size) || added < 0 || dups < 0 {
			return r.corrupt("stream %q: idempotence state %ds, %d, %d, %d, %d", s.Name(), dur, size, added, dups, n)
		}
		st := s.idmpLocked()
		st.durationMs, st.maxSize, st.added, st.dups, st.sweptMs = dur*1000, int(size), added, dups, swept
		c.idmpProducers = n
		return nil
	}
	st := s.idmp
	name, n := d.str(), d.uvarint()
	if st == nil || c.idmpProducers == 0 || d.err != nil || n == 0 || n > uint64(st.maxSize) || st.producers[name] != nil {
		return r.corrupt("stream %q: idempotent producer %q out of place", s.Name(), name)
	}
	c.idmpProducers--
	if st.producers == nil {
		st.producers = map[string]*idmpProducer{}
	}
	p := &idmpProducer{ids: make(map[string]ID, n)}
	st.producers[name] = p
	var last ID
	for range n {
		iid, id := d.str(), d.id()
		if _, dup := p.ids[iid]; d.err != nil || dup || iid == "" || id.Less(last) {
			return r.corrupt("stream %q: idempotent producer %q: bad ID", s.Name(), name)
		}
		p.push(iid, id, st.maxSize)
		st.tracked++
		last = id
	}
	return nil
}

// check checks the invariants of st (nil passes): each producer's ring
// and map hold the same IDs, oldest first, at most the max size of them,
// and tracked counts them all.
func (st *idmpState) check() error {
	if st == nil {
		return nil
	}
	if !validIdmpConfig(st.durationMs/1000, uint64(st.maxSize)) || st.durationMs%1000 != 0 {
		return fmt.Errorf("idempotence setting %dms, %d", st.durationMs, st.maxSize)
	}
	total := 0
	for name, p := range st.producers {
		if p.n != len(p.ids) || p.n > st.maxSize || len(p.ring) > st.maxSize || p.n > len(p.ring) {
			return fmt.Errorf("idempotent producer %q: %d in the ring of %d, %d in the map, max %d", name, p.n, len(p.ring), len(p.ids), st.maxSize)
		}
		var last ID
		for i := range p.n {
			ref := p.ring[(p.head+i)%len(p.ring)]
			id, ok := p.ids[ref.iid]
			if !ok || id.Ms != ref.ms || id.Less(last) {
				return fmt.Errorf("idempotent producer %q: ring slot %d (%s) out of order or not in the map", name, i, id)
			}
			last = id
		}
		total += p.n
	}
	if total != st.tracked {
		return fmt.Errorf("%d idempotent IDs remembered, counted %d", total, st.tracked)
	}
	return nil
}
