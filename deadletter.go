package xstream

import (
	"errors"
	"strconv"
)

// Dead letters. Redis leaves it to the application to set aside entries
// that keep failing; MoveDeadLetters does it when called: it copies each
// pending entry delivered more than a limit to a dead-letter stream and
// acknowledges it in its group. A group's DeadLetterPolicy
// (deadpolicy.go) does it by itself, atomically.

// The fields that MoveDeadLetters, and a group's DeadLetterPolicy, put
// before an entry's own fields in the dead-letter stream.
const (
	DeadLetterStreamField     = "dead-letter-stream"     // source stream name
	DeadLetterGroupField      = "dead-letter-group"      // group
	DeadLetterIDField         = "dead-letter-id"         // ID in the source stream
	DeadLetterConsumerField   = "dead-letter-consumer"   // owner when moved ("" if given back by Nack)
	DeadLetterDeliveriesField = "dead-letter-deliveries" // delivery count when moved
)

// DeadLetterArgs holds the arguments of MoveDeadLetters.
type DeadLetterArgs struct {
	// MaxDeliveries is the limit: pending entries delivered more times
	// than this are moved. It must be at least 1.
	MaxDeliveries int64
	// To is the dead-letter stream. It must not be the source stream.
	To *Stream
	// Count caps the entries moved in one call; 0 means no cap.
	Count int
}

// DeadLetter describes one entry moved by MoveDeadLetters or by a group's
// DeadLetterPolicy.
type DeadLetter struct {
	ID         ID // in the source stream
	DeadID     ID // in the dead-letter stream
	Consumer   string
	Deliveries int64
}

type deadCandidate struct {
	id     ID
	fields []Field
	letter DeadLetter
}

// MoveDeadLetters moves the pending entries of group whose delivery count
// is above args.MaxDeliveries to the stream args.To, in ID order, and
// acknowledges them in group. Each dead letter holds the fields
// DeadLetterStreamField, DeadLetterGroupField, DeadLetterIDField,
// DeadLetterConsumerField and DeadLetterDeliveriesField, then the entry's
// own fields (none when its message was deleted). It returns what it
// moved.
//
// The guarantee is at least once: an entry is added to the dead-letter
// stream before it is acknowledged, so it is never lost between the two
// streams, but it may be both processed and dead-lettered (a consumer acks
// it meanwhile) or dead-lettered twice (two calls at once). If an Add to
// args.To fails, MoveDeadLetters returns that error with what it moved so
// far; the rest stays pending. No lock is held on both streams at once.
//
// It fails, changing nothing, with ErrNoGroup or ErrInvalidArgument (a
// MaxDeliveries below 1, a negative Count, a nil or same To). It scans the
// whole PEL: O(P + moved × (log N + log P)).
func (s *Stream) MoveDeadLetters(group string, args DeadLetterArgs) ([]DeadLetter, error) {
	switch {
	case args.MaxDeliveries < 1:
		return nil, errorf(ErrInvalidArgument, "MaxDeliveries must be >= 1, got %d", args.MaxDeliveries)
	case args.Count < 0:
		return nil, errorf(ErrInvalidArgument, "count must be >= 0, got %d", args.Count)
	case args.To == nil:
		return nil, errorf(ErrInvalidArgument, "no dead-letter stream given")
	case args.To == s:
		return nil, errorf(ErrInvalidArgument, "the dead-letter stream %q is the source stream", s.Name())
	}
	if err := s.cfg.gate.write(); err != nil {
		return nil, err
	}

	var cands []deadCandidate
	s.mu.RLock()
	g, err := s.groupLocked(group)
	if err != nil {
		s.runlock()
		return nil, err
	}
	col := getCollector()
	g.pel.Ascend(sid(ID{}), sid(MaxID()), func(sk sID, rec *nack) bool {
		id := ID(sk)
		if rec.count <= args.MaxDeliveries {
			return true
		}
		d := deadCandidate{id: id, letter: DeadLetter{ID: id, Deliveries: rec.count}}
		if c := g.ownerLocked(rec); c != nil {
			d.letter.Consumer = c.name
		}
		if b, flags, body, ok := s.entryLocked(id); ok {
			col.add(b, id, flags, body)
		} else {
			col.addDeleted(id)
		}
		cands = append(cands, d)
		return args.Count == 0 || len(cands) < args.Count
	})
	for i, e := range col.entries() {
		cands[i].fields = e.Fields
	}
	putCollector(col)
	if err := s.runlock(); err != nil {
		return nil, err
	}

	var moved []DeadLetter
	for _, d := range cands {
		dead, err := args.To.Add(AddArgs{}, deadLetterFields(s.Name(), group, d.letter, d.fields)...)
		if err != nil {
			if aerr := s.ackMoved(group, moved); aerr != nil {
				err = errors.Join(err, aerr)
			}
			return moved, err
		}
		d.letter.DeadID = dead
		moved = append(moved, d.letter)
	}
	return moved, s.ackMoved(group, moved)
}

// deadLetterFields returns the fields of the dead letter d of the stream
// called stream, group group, whose message had the given fields.
func deadLetterFields(stream, group string, d DeadLetter, fields []Field) []Field {
	out := make([]Field, 0, 5+len(fields))
	out = append(out,
		Field{DeadLetterStreamField, stream},
		Field{DeadLetterGroupField, group},
		Field{DeadLetterIDField, d.ID.String()},
		Field{DeadLetterConsumerField, d.Consumer},
		Field{DeadLetterDeliveriesField, strconv.FormatInt(d.Deliveries, 10)},
	)
	return append(out, fields...)
}

// ackMoved acknowledges dead-lettered entries that are still pending.
func (s *Stream) ackMoved(group string, moved []DeadLetter) (err error) {
	if len(moved) == 0 {
		return nil
	}
	if err = s.cfg.gate.write(); err != nil {
		return
	}
	s.mu.Lock()
	defer s.unlockTo(&err)
	g, err := s.groupLocked(group)
	if err != nil {
		return nil // destroyed meanwhile: nothing left to acknowledge
	}
	for _, d := range moved {
		s.ackLocked(g, d.ID)
	}
	return nil
}
