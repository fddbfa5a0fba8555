package kinesis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/xstreamgo/xstream"
)

// The catalog: the Kinesis state of every stream that the sharded
// engine does not keep (status and its deadline, a reshard waiting for
// its UPDATING delay, tags, consumers, the creation time, the count of
// OPEN shards for the account's limit). It is one JSON document, the
// last entry of the stream CatalogStream of the backend's named-stream
// engine, rewritten whole by each change.
//
// Changes are optimistic: a change reads the document at entry ID n and
// adds the new one with the explicit ID n+1 (trimming the stream to that
// one entry), so that of two processes changing it at once one gets the
// engine's ErrIDTooSmall and does its change again on the newer
// document. Statuses whose delay has run out are settled by whoever
// reads the catalog after the deadline: the read makes the change
// (CREATING and UPDATING become ACTIVE, a DELETING stream leaves the
// catalog), and the process whose change lands applies a waiting reshard.

type catalog struct {
	Streams map[string]*streamMeta `json:"streams"`
}

// Stream statuses, as Kinesis writes them.
const (
	statusCreating = "CREATING"
	statusActive   = "ACTIVE"
	statusUpdating = "UPDATING"
	statusDeleting = "DELETING"
)

type streamMeta struct {
	Created   int64             `json:"created"`           // ms
	Status    string            `json:"status"`            // as of the last change
	Until     int64             `json:"until,omitempty"`   // ms: when a transitional status ends
	Pending   *reshardOp        `json:"pending,omitempty"` // a reshard applied at Until
	Open      int               `json:"open"`              // OPEN shards, once Pending is applied
	Retention int64             `json:"retention"`         // hours
	Mode      string            `json:"mode,omitempty"`    // PROVISIONED or ON_DEMAND
	Tags      map[string]string `json:"tags,omitempty"`
	Enc       string            `json:"enc,omitempty"` // KMS, or "" for NONE
	KeyID     string            `json:"key,omitempty"`
	Metrics   []string          `json:"metrics,omitempty"`
	Consumers []*consumerMeta   `json:"consumers,omitempty"`
}

// reshardOp is a reshard that waits for the end of the UPDATING delay.
type reshardOp struct {
	Kind   string `json:"kind"` // split, merge or count
	Shard  string `json:"shard,omitempty"`
	Other  string `json:"other,omitempty"` // merge: the adjacent shard
	Key    string `json:"key,omitempty"`   // split: the new starting hash key
	Target int    `json:"target,omitempty"`
}

// openShards is the account's count of OPEN shards.
func (c *catalog) openShards() int {
	n := 0
	for _, m := range c.Streams {
		if m.Status != statusDeleting {
			n += m.Open
		}
	}
	return n
}

// snapshot is one version of the catalog.
type snapshot struct {
	cat  *catalog
	raw  string
	id   xstream.ID
	read int64 // ms, when it was read
	next int64 // ms, the earliest deadline in it (0: none)
}

func (s *snapshot) stream(name string) *streamMeta {
	if s == nil {
		return nil
	}
	return s.cat.Streams[name]
}

type catalogStore struct {
	b      Backend
	cfg    config
	mu     sync.Mutex // one change at a time in this process
	cached atomic.Pointer[snapshot]
}

func newCatalogStore(b Backend, cfg config) *catalogStore {
	return &catalogStore{b: b, cfg: cfg}
}

// catalogField is the field of a catalog entry.
const catalogField = "catalog"

// read returns the catalog: the cached one for a backend no one else
// changes, else the cached one when fresh is false and it is younger than
// the cache's TTL, else the engine's.
func (s *catalogStore) read(ctx context.Context, fresh bool) (*snapshot, error) {
	if c := s.cached.Load(); c != nil {
		if !s.b.Shared() || (!fresh && s.cfg.clock().UnixMilli()-c.read < s.cfg.cacheTTL.Milliseconds()) {
			return c, nil
		}
	}
	return s.fetch(ctx)
}

func (s *catalogStore) fetch(ctx context.Context) (*snapshot, error) {
	eng, key := s.b.Catalog()
	es, err := eng.RevRange(ctx, key, "+", "-", 1)
	if err != nil && !errors.Is(err, xstream.ErrNoStream) {
		return nil, err
	}
	snap := &snapshot{cat: &catalog{Streams: map[string]*streamMeta{}}, read: s.cfg.clock().UnixMilli()}
	if len(es) > 0 {
		snap.id = es[0].ID
		for _, f := range es[0].Fields {
			if f.Name == catalogField {
				snap.raw = f.Value
			}
		}
		if err := json.Unmarshal([]byte(snap.raw), snap.cat); err != nil {
			return nil, fmt.Errorf("kinesis: the catalog in %s at %s does not decode: %w", key, snap.id, err)
		}
		if snap.cat.Streams == nil {
			snap.cat.Streams = map[string]*streamMeta{}
		}
	}
	snap.next = deadline(snap.cat)
	s.cached.Store(snap)
	return snap, nil
}

// deadline returns the earliest end of a transitional status in c.
func deadline(c *catalog) int64 {
	var next int64
	for _, m := range c.Streams {
		for _, u := range append([]int64{m.Until}, consumerDeadlines(m)...) {
			if u != 0 && (next == 0 || u < next) {
				next = u
			}
		}
	}
	return next
}

// errNoChange, returned by an update's function, ends the update without
// writing anything.
var errNoChange = errors.New("no change")

// update changes the catalog with fn, which gets a copy of the current
// one to change, and returns the new version. An error of fn ends it
// with nothing written (errNoChange: without an error either). fn may be
// called several times, once per attempt.
func (s *catalogStore) update(ctx context.Context, fn func(c *catalog) error) (*snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for attempt := 0; ; attempt++ {
		cur := s.cached.Load()
		if cur == nil || s.b.Shared() {
			var err error
			if cur, err = s.fetch(ctx); err != nil {
				return nil, err
			}
		}
		c := &catalog{}
		if cur.raw != "" {
			if err := json.Unmarshal([]byte(cur.raw), c); err != nil {
				return nil, err
			}
		}
		if c.Streams == nil {
			c.Streams = map[string]*streamMeta{}
		}
		if err := fn(c); err != nil {
			if errors.Is(err, errNoChange) {
				return cur, nil
			}
			return nil, err
		}
		raw, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		next := xstream.ID{Seq: 1}
		if !cur.id.IsZero() {
			next, _ = cur.id.Next()
		}
		eng, key := s.b.Catalog()
		_, err = eng.Add(ctx, key, xstream.AddArgs{ID: next.String(),
			Trim: xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 1}},
			xstream.Field{Name: catalogField, Value: string(raw)})
		if errors.Is(err, xstream.ErrIDTooSmall) && attempt < 1000 {
			s.cached.Store(nil) // another process changed it: read it again
			continue
		}
		if err != nil {
			return nil, err
		}
		snap := &snapshot{cat: c, raw: string(raw), id: next, read: s.cfg.clock().UnixMilli(), next: deadline(c)}
		s.cached.Store(snap)
		return snap, nil
	}
}
