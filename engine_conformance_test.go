package xstream_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/xstreamtest"
)

// fakeClock is a clock for WithClock that moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.UnixMilli(1_700_000_000_000)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// allCaps are Local's capabilities: all of them.
var allCaps = xstreamtest.Caps{Nack: true, DeleteEx: true, DeadLetters: true, DeadLetterPolicy: true, ReadLast: true}

// TestConformance runs the conformance suite against the in-process
// adapter, in memory and durable, with a clock the suite moves.
func TestConformance(t *testing.T) {
	t.Run("Memory", func(t *testing.T) {
		xstreamtest.Run(t, func(t *testing.T) xstreamtest.Target {
			c := newFakeClock()
			e := xstream.Local(xstream.NewDB(xstream.WithClock(c.Now)))
			t.Cleanup(func() { require.NoError(t, e.Close()) })
			return xstreamtest.Target{Engine: e, Prefix: "{t}:", Advance: c.Advance}
		}, allCaps)
	})
	t.Run("Durable", func(t *testing.T) {
		xstreamtest.Run(t, func(t *testing.T) xstreamtest.Target {
			c := newFakeClock()
			db, err := xstream.Open(t.TempDir(), xstream.WithClock(c.Now))
			require.NoError(t, err)
			e := xstream.Local(db)
			t.Cleanup(func() { require.NoError(t, e.Close()) })
			return xstreamtest.Target{Engine: e, Prefix: "{t}:", Advance: c.Advance}
		}, allCaps)
	})
}

// bareEngine is an Engine with none of the optional capabilities.
type bareEngine struct{ xstream.Engine }

// CreateGroup refuses a dead-letter policy, as an engine that is no
// DeadLetterPolicyEngine must.
func (e bareEngine) CreateGroup(ctx context.Context, stream, group, start string, opts xstream.GroupOptions) error {
	if opts.DeadLetter != (xstream.DeadLetterPolicy{}) {
		return fmt.Errorf("bare engine: %w", errors.ErrUnsupported)
	}
	return e.Engine.CreateGroup(ctx, stream, group, start, opts)
}

// TestConformanceBare runs the suite against an engine without optional
// capabilities, on the wall clock, with streams of one test in several
// "slots" (as a Redis Cluster factory would name them): the
// capabilities' tests then check that the package functions report
// errors.ErrUnsupported, and the idle-time tests keep to bounds that hold
// for a real clock.
func TestConformanceBare(t *testing.T) {
	xstreamtest.Run(t, func(t *testing.T) xstreamtest.Target {
		e := bareEngine{xstream.Local(xstream.NewDB())}
		t.Cleanup(func() { require.NoError(t, e.Close()) })
		tag := t.Name()
		return xstreamtest.Target{
			Engine:     e,
			Prefix:     "{" + tag + "}:",
			SlotPrefix: func(i int) string { return "{" + tag + "." + strconv.Itoa(i) + "}:" },
		}
	}, xstreamtest.Caps{})
}
