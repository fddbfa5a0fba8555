package xstream

import (
	"context"
	"time"
)

// CreateGroup creates a consumer group on the stream called name, as
// Stream.CreateGroup does. A missing stream is an ErrNoStream error unless
// opts.MkStream is set: then an empty stream is created with the group
// (Redis MKSTREAM). A failed call creates nothing.
func (db *DB) CreateGroup(name, group, start string, opts GroupOptions) error {
	if err := db.gate.write(); err != nil {
		return err
	}
	if s, ok := db.Lookup(name); ok {
		return s.CreateGroup(group, start, opts)
	}
	if !opts.MkStream {
		return errorf(ErrNoStream, "%q: CreateGroup needs an existing stream, or MkStream to create it", name)
	}
	if _, _, err := (&Stream{}).parseGroupStart(start); err != nil {
		return err
	}
	if _, err := opts.entriesRead(); err != nil {
		return err
	}
	probe := &Stream{db: db}
	probe.name.Store(&name)
	if err := probe.checkDeadLetterPolicy(opts.DeadLetter); err != nil {
		return err
	}
	return db.Stream(name).CreateGroup(group, start, opts)
}

// ReadGroup reads several streams at once as consumer of group, which
// each stream must have (Redis XREADGROUP). streamsAndIDs alternates
// stream names and IDs, each ">" or an entry ID with the meaning it has in
// Stream.ReadGroup. It returns, in the order given, each stream with
// entries to deliver, and each stream read by history even when its
// history is empty. When there is nothing, every ID is ">" and args.Block
// is not 0, it waits as Stream.ReadGroup does, for any of the streams, and
// returns the entries of the first stream that gets some.
//
// A missing stream or group fails the call with an ErrNoGroup error (that
// also matches ErrNoStream when the stream is missing) before anything is
// read. A group destroyed while the call reads the streams before it is
// skipped: what was read is returned, and is pending in those streams.
//
// With args.Claim, each ">" stream is read as Stream.ReadGroupDeliveries
// does (args.Count applies to each stream, claimed and new entries
// together); ReadGroupDeliveries returns what it reports of each entry.
func (db *DB) ReadGroup(ctx context.Context, group, consumer string, args ReadGroupArgs, streamsAndIDs ...string) ([]StreamEntries, error) {
	out, _, err := db.readGroup(ctx, group, consumer, args, streamsAndIDs)
	return out, err
}

// ReadGroupDeliveries is ReadGroup that also returns, for each stream
// returned, the Delivery of each of its entries when it was read by ">"
// with args.Claim (see Stream.ReadGroupDeliveries), and nil otherwise.
func (db *DB) ReadGroupDeliveries(ctx context.Context, group, consumer string, args ReadGroupArgs, streamsAndIDs ...string) ([]StreamEntries, [][]Delivery, error) {
	return db.readGroup(ctx, group, consumer, args, streamsAndIDs)
}

// readGroup is ReadGroupDeliveries.
func (db *DB) readGroup(ctx context.Context, group, consumer string, args ReadGroupArgs, streamsAndIDs []string) ([]StreamEntries, [][]Delivery, error) {
	var deadline time.Time
	if args.Block > 0 {
		deadline = time.Now().Add(args.Block) // block timeouts are on the wall clock
	}
	for {
		out, dels, err := db.readGroupOnce(ctx, group, consumer, args, streamsAndIDs)
		if err != errRenamedOnto {
			return out, dels, err
		}
		// A Rename replaced a stream waited on: look at the names again
		// for what is left of the wait.
		if args.Block > 0 {
			if args.Block = time.Until(deadline); args.Block <= 0 {
				return nil, nil, nil
			}
		}
	}
}

// readGroupOnce is readGroup until a Rename replaces a stream it waits on
// (errRenamedOnto).
func (db *DB) readGroupOnce(ctx context.Context, group, consumer string, args ReadGroupArgs, streamsAndIDs []string) (out []StreamEntries, dels [][]Delivery, err error) {
	if err := args.check(); err != nil {
		return nil, nil, err
	}
	if err := db.gate.write(); err != nil {
		return nil, nil, err
	}
	if len(streamsAndIDs) == 0 || len(streamsAndIDs)%2 != 0 {
		return nil, nil, errorf(ErrInvalidArgument, "ReadGroup wants stream names and IDs in pairs, got %d strings", len(streamsAndIDs))
	}
	n := len(streamsAndIDs) / 2
	streams := make([]*Stream, n)
	pos := make([]groupPos, n)
	history := false
	for i := range n {
		p, err := parseGroupReadID(streamsAndIDs[2*i+1])
		if err != nil {
			return nil, nil, err
		}
		pos[i] = p
		history = history || p.history
	}
	for i := range n {
		name := streamsAndIDs[2*i]
		s, ok := db.Lookup(name)
		if !ok {
			return nil, nil, errorf(ErrNoGroup, "%w: no stream %q for group %q", ErrNoStream, name, group)
		}
		s.mu.RLock()
		_, err := s.groupLocked(group)
		s.mu.RUnlock()
		if err != nil {
			return nil, nil, err
		}
		streams[i] = s
	}

	// In a durable DB each stream's record is settled once, at the end:
	// when that fails, the call fails and returns nothing.
	var j *journal
	var last uint64
	settle := func(jj *journal, lsn uint64) {
		if jj != nil {
			j, last = jj, max(last, lsn)
		}
	}
	defer func() {
		if serr := j.settle(last); serr != nil && err == nil {
			out, dels, err = nil, nil, serr
		}
	}()
	for i, s := range streams {
		now := s.nowMs()
		l := s.lockRead(group, pos[i], args)
		g, err := s.groupLocked(group)
		if err != nil {
			// Destroyed since the check. Entries already read from
			// the streams before are in their PELs; return them.
			settle(l.unlockDeferred())
			if len(out) > 0 {
				continue
			}
			return nil, nil, err
		}
		es, ds := s.readGroupLocked(&l, g, consumer, pos[i], args, now)
		settle(l.unlockDeferred())
		if es != nil {
			out = append(out, StreamEntries{Stream: s.Name(), Entries: es})
			if args.Claim { // a read without Claim allocates nothing more
				dels = append(dels, ds)
			}
		}
	}
	if len(out) > 0 || history || args.Block == 0 {
		return out, dels, nil
	}

	// Wait. Register on each stream in turn; data that came meanwhile is
	// served at once, by this call.
	w := newGroupWaiter(ctx, db.gate, consumer, args)
	var regs []*Stream
	for i, s := range streams {
		s.mu.Lock()
		if w.state.Load() != waiting {
			s.unlock()
			break
		}
		g, err := s.groupLocked(group)
		if err == nil && s.removed {
			err = errorf(ErrNoStream, "stream %q was removed", s.Name())
		}
		if err != nil {
			if w.state.CompareAndSwap(waiting, served) {
				w.err, w.stream = err, i
				w.ch <- struct{}{}
			}
			s.unlock()
			break
		}
		if s.hasNewLocked(g) {
			if w.state.CompareAndSwap(waiting, served) {
				s.serveLocked(groupWait{w: w, g: g, idx: i}, s.nowMs())
			}
			s.unlock()
			break
		}
		s.gwaiters = append(s.gwaiters, groupWait{w: w, g: g, idx: i})
		regs = append(regs, s)
		s.unlock()
	}
	if err := w.await(ctx, args.Block, regs); err != nil {
		return nil, nil, err
	}
	if w.err != nil {
		return nil, nil, w.err
	}
	if err := streams[w.stream].settleServed(); err != nil {
		return nil, nil, err
	}
	if w.entries == nil {
		return nil, nil, nil
	}
	return []StreamEntries{{Stream: streams[w.stream].Name(), Entries: w.entries}}, [][]Delivery{newDeliveries(w.entries, args)}, nil
}
