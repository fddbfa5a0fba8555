package xstream

import (
	"context"
	"time"
)

// BlockForever as ReadArgs.Block makes a read wait until data arrives or
// its context is done.
const BlockForever time.Duration = -1

// ReadArgs holds the options of Read.
type ReadArgs struct {
	// Count caps the entries returned per stream; 0 means no cap.
	Count int
	// Block is how long to wait when no stream has an entry after its ID:
	// 0 returns at once, BlockForever (any negative value) waits until
	// the context is done.
	//
	// This is the reverse of go-redis, whose XReadArgs.Block of 0 (its
	// zero value) sends BLOCK 0 and waits forever, and of -1 does not
	// block. Not blocking is Block: 0 here and Block: -1 in go-redis;
	// waiting forever is Block: BlockForever here and Block: 0 in
	// go-redis.
	Block time.Duration
}

func (a ReadArgs) check() error {
	if a.Count < 0 {
		return errorf(ErrInvalidArgument, "count must be >= 0, got %d", a.Count)
	}
	return nil
}

// readPos is where a read continues in one stream.
type readPos struct {
	after  ID
	last   bool // "+": the last entry, whenever there is one
	dollar bool // "$": not yet resolved
}

// parseReadID parses the ID argument of Read: "$", "+" or an entry ID.
func parseReadID(s string) (readPos, error) {
	switch s {
	case "$":
		return readPos{dollar: true}, nil
	case "+":
		return readPos{last: true}, nil
	}
	id, err := ParseID(s)
	return readPos{after: id}, err
}

// readLocked returns the entries after p (at most count) and resolves "$"
// against the stream's current state. "+" is resolved at each look, as
// Redis does when it runs a blocked XREAD again: it is the last entry
// then, whatever count. The caller holds s.mu.
func (s *Stream) readLocked(p *readPos, count int) []Entry {
	if p.dollar {
		p.after, p.dollar = ID(s.st.LastID()), false
		return nil
	}
	if p.last && s.st.Len() == 0 {
		return nil
	}
	c := getCollector()
	defer putCollector(c)
	if p.last {
		s.collectRangeLocked(c, ID{}, MaxID(), 1, true)
		s.ctr.read.Add(1)
		return c.entries()
	}
	if lo, ok := p.after.Next(); ok {
		s.collectRangeLocked(c, lo, MaxID(), count, false)
	}
	es := c.entries()
	s.ctr.read.Add(int64(len(es)))
	return es
}

// Read returns the entries with an ID greater than after, at most
// args.Count. after is an entry ID, "$" (the stream's last ID at the time
// of the call: only entries added later) or "+" (the stream's last entry,
// alone whatever args.Count, as in Redis 7.4; when the stream is empty, a
// read that waits returns its last entry once there is one, even if
// several came meanwhile). When there is none and args.Block is not 0,
// Read waits for an Add, for args.Block to pass (then it returns no
// entries and no error) or for ctx to be done (then it returns
// ctx.Err()). Blocked readers hold no lock, and an Add wakes them in
// arrival order. Read leaves no goroutine behind.
func (s *Stream) Read(ctx context.Context, after string, args ReadArgs) ([]Entry, error) {
	if err := args.check(); err != nil {
		return nil, err
	}
	p, err := parseReadID(after)
	if err != nil {
		return nil, err
	}
	if err := s.cfg.gate.read(); err != nil {
		return nil, err
	}
	if args.Block == 0 {
		s.mu.RLock()
		es := s.readLocked(&p, args.Count)
		if err := s.runlock(); err != nil {
			return nil, err
		}
		return es, nil
	}
	timeout, stop := newTimeout(args.Block)
	defer stop()
	w := newWaiter(s.cfg.gate)
	for {
		s.mu.Lock()
		es := s.readLocked(&p, args.Count)
		if len(es) == 0 {
			s.waiters.add(w)
		}
		if err := s.unlock(); err != nil {
			if len(es) == 0 {
				s.mu.Lock()
				s.waiters.remove(w)
				s.mu.Unlock()
			}
			return nil, err
		}
		if len(es) > 0 {
			return es, nil
		}
		again, err := w.wait(ctx, timeout)
		if !again {
			s.mu.Lock()
			s.waiters.remove(w)
			s.mu.Unlock() // no record: nothing to wait for on disk
			return nil, err
		}
	}
}
