package kinesis

import (
	"context"
	"errors"

	"github.com/xstreamgo/xstream"
)

// Stream statuses and their delays.
//
// CreateStream makes the sharded stream at once (so that the name is
// taken) and writes the stream CREATING until now + Delays.Create; until
// then it lists no shards and takes no records. SplitShard, MergeShards
// and UpdateShardCount check their arguments at once and then, with an
// Update delay, write the stream UPDATING with the reshard waiting: the
// shards and the routing of records stay as they were until the delay
// ends, when the reshard is applied (as in Kinesis, where the new shards
// appear when the stream is ACTIVE again); without a delay the reshard is
// applied during the call. DeleteStream removes the records at once and
// writes the stream DELETING until now + Delays.Delete, when its name is
// free again. The transitions happen when the catalog is next read after
// their deadline (see catalog.go), so that no timer is needed and the
// handler's clock (WithClock) moves them.

// snapshot returns the catalog with the transitions due by now made.
func (h *Handler) snapshot(ctx context.Context, fresh bool) (*snapshot, *apiError) {
	s, err := h.cat.read(ctx, fresh)
	if err != nil {
		return nil, internal(err)
	}
	if s.next != 0 && h.nowMs() >= s.next {
		if s, err = h.settle(ctx); err != nil {
			return nil, internal(err)
		}
	}
	return s, nil
}

// settle makes every transition due by now, and applies the reshards
// that waited for theirs.
func (h *Handler) settle(ctx context.Context) (*snapshot, error) {
	var apply map[string]*reshardOp
	s, err := h.cat.update(ctx, func(c *catalog) error {
		now := h.nowMs()
		apply = map[string]*reshardOp{}
		changed := false
		for name, m := range c.Streams {
			if settleConsumers(m, now) {
				changed = true
			}
			if m.Until == 0 || now < m.Until {
				continue
			}
			changed = true
			switch m.Status {
			case statusDeleting:
				delete(c.Streams, name)
				continue
			case statusUpdating:
				if m.Pending != nil {
					apply[name] = m.Pending
				}
			}
			m.Status, m.Until, m.Pending = statusActive, 0, nil
		}
		if !changed {
			return errNoChange
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for name, op := range apply {
		if eng, e := h.engine(ctx, name, s.stream(name)); e == nil {
			h.applyReshard(ctx, eng, op) // checked when it was asked for
		}
	}
	return s, nil
}

// lookup returns the catalog and the stream name, failing with
// ResourceNotFoundException when there is none.
func (h *Handler) lookup(ctx context.Context, name string, fresh bool) (*snapshot, *streamMeta, *apiError) {
	s, e := h.snapshot(ctx, fresh)
	if e != nil {
		return nil, nil, e
	}
	m := s.stream(name)
	if m == nil {
		return nil, nil, h.streamNotFound(name)
	}
	return s, m, nil
}

// readable returns the engine of a stream that takes records and reads:
// ACTIVE or UPDATING. A stream CREATING or DELETING is not found, as in
// Kinesis.
func (h *Handler) readable(ctx context.Context, name string) (xstream.ShardedEngine, *streamMeta, *apiError) {
	s, m, e := h.lookup(ctx, name, false)
	if e != nil {
		return nil, nil, e
	}
	if m.Status != statusActive && m.Status != statusUpdating {
		return nil, nil, h.streamNotFound(name)
	}
	eng, e := h.engine(ctx, name, s.stream(name))
	return eng, m, e
}

// engineRef is a cached engine of a stream, for the stream created at
// created.
type engineRef struct {
	created int64
	eng     xstream.ShardedEngine
}

// engine returns the sharded engine of the stream name described by m.
func (h *Handler) engine(ctx context.Context, name string, m *streamMeta) (xstream.ShardedEngine, *apiError) {
	if m == nil {
		return nil, h.streamNotFound(name)
	}
	if v, ok := h.engines.Load(name); ok && v.(*engineRef).created == m.Created {
		return v.(*engineRef).eng, nil
	}
	eng, err := h.b.Open(ctx, name)
	if errors.Is(err, xstream.ErrNoStream) {
		return nil, h.streamNotFound(name)
	}
	if err != nil {
		return nil, internal(err)
	}
	h.engines.Store(name, &engineRef{created: m.Created, eng: eng})
	return eng, nil
}

// status is the status DescribeStream reports: the catalog's, or
// UPDATING while the engine runs a reshard (an UpdateShardCount in
// steps).
func (h *Handler) status(ctx context.Context, eng xstream.ShardedEngine, m *streamMeta) string {
	if m.Status == statusActive && eng != nil {
		if st, err := eng.Status(ctx); err == nil && st == xstream.StreamUpdating {
			return statusUpdating
		}
	}
	return m.Status
}

// lookupEngine is lookup (fresh) and engine together; a DELETING stream
// has no engine (nil).
func (h *Handler) lookupEngine(ctx context.Context, name string) (*snapshot, *streamMeta, xstream.ShardedEngine, *apiError) {
	s, m, e := h.lookup(ctx, name, true)
	if e != nil {
		return nil, nil, nil, e
	}
	if m.Status == statusDeleting {
		return s, m, nil, nil
	}
	eng, e := h.engine(ctx, name, m)
	if e != nil {
		return nil, nil, nil, e
	}
	return s, m, eng, nil
}

// settledIn returns the stream name of c, which must be neither CREATING
// nor DELETING.
func (h *Handler) settledIn(c *catalog, name string) (*streamMeta, error) {
	m := c.Streams[name]
	if m == nil {
		return nil, h.streamNotFound(name)
	}
	if m.Status == statusCreating || m.Status == statusDeleting {
		return nil, h.notActive(name, m.Status)
	}
	return m, nil
}
