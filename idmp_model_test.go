package xstream

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A model-based test of the idempotence window: random idempotent adds
// (IDMP and IDMPAUTO) of a few producers, plain adds, deletes, trims,
// clock moves and setting changes, on a stream and on a model that keeps
// each producer's remembered IDs as a plain list. After every step the
// stream's answer and its IdempotenceInfo must be the model's. The
// durable variant closes and reopens the DB at random steps.

type idmpModel struct {
	durMs       int64
	maxSize     int
	producers   map[string][]idmpModelRef // oldest first
	added, dups int64
	swept       int64 // when an add last swept every producer
}

type idmpModelRef struct {
	key string
	id  ID
}

func newIdmpModel() *idmpModel {
	return &idmpModel{durMs: 100_000, maxSize: 100, producers: map[string][]idmpModelRef{}}
}

// lookup returns the ID a repeat of key gets at now, or ok false when the
// add adds (the caller then calls remember with the new entry's ID).
func (m *idmpModel) lookup(producer, key string, now int64) (ID, bool) {
	for _, r := range m.producers[producer] {
		if r.key == key && now-int64(r.id.Ms) < m.durMs {
			return r.id, true
		}
	}
	return ID{}, false
}

func (m *idmpModel) remember(producer, key string, id ID, now int64) {
	aged := func(r idmpModelRef) bool { return now-int64(r.id.Ms) >= m.durMs }
	if now >= m.swept+1000 { // at most once a second, every producer
		m.swept = now
		for p, refs := range m.producers {
			if refs = slices.DeleteFunc(refs, aged); len(refs) == 0 {
				delete(m.producers, p)
			} else {
				m.producers[p] = refs
			}
		}
	}
	refs := slices.DeleteFunc(m.producers[producer], aged)
	for len(refs) >= m.maxSize {
		refs = refs[1:]
	}
	m.producers[producer] = append(refs, idmpModelRef{key, id})
	m.added++
}

func (m *idmpModel) info() IdempotenceInfo {
	info := IdempotenceInfo{
		IdempotenceConfig: IdempotenceConfig{time.Duration(m.durMs) * time.Millisecond, m.maxSize},
		Producers:         len(m.producers),
		Added:             m.added,
		Duplicates:        m.dups,
	}
	for _, refs := range m.producers {
		info.Tracked += len(refs)
	}
	return info
}

// canonical is the model's IDMPAUTO key: the pairs in sorted order.
func canonical(fs []Field) string {
	ps := make([]string, len(fs))
	for i, f := range fs {
		ps[i] = fmt.Sprintf("%q=%q", f.Name, f.Value)
	}
	slices.Sort(ps)
	return "auto:" + strings.Join(ps, ",")
}

type idmpRun struct {
	t   *testing.T
	r   *rand.Rand
	m   *idmpModel
	s   *Stream
	clk *testClock
	now int64
}

// step makes one random change to the stream and the model, checks the
// stream's answer, and says what it did.
func (run *idmpRun) step() string {
	t, r, m := run.t, run.r, run.m
	switch k := r.IntN(100); {
	case k < 60: // an idempotent add
		producer := fmt.Sprint("p", r.IntN(3))
		var args AddArgs
		var key string
		var fields []Field
		if r.IntN(3) == 0 {
			fields = Fields("a", fmt.Sprint(r.IntN(3)), "b", fmt.Sprint(r.IntN(2)))
			if r.IntN(2) == 0 {
				slices.Reverse(fields)
			}
			args, key = idemAuto(producer), canonical(fields)
		} else {
			key = fmt.Sprint("i", r.IntN(7))
			args, fields = idem(producer, key), Fields("f", key)
		}
		want, dup := m.lookup(producer, key, run.now)
		n := run.s.Len()
		got, err := run.s.Add(args, fields...)
		require.NoError(t, err)
		if dup {
			m.dups++
			require.Equal(t, want, got, "a repeat of %s %s", producer, key)
			require.Equal(t, n, run.s.Len())
			return fmt.Sprintf("repeat %s %s", producer, key)
		}
		require.Equal(t, n+1, run.s.Len(), "an add of %s %s", producer, key)
		m.remember(producer, key, got, run.now)
		return fmt.Sprintf("add %s %s = %s", producer, key, got)
	case k < 67:
		mustAdd(t, run.s, "")
		return "plain add"
	case k < 72:
		es, err := run.s.Range("-", "+", 0)
		require.NoError(t, err)
		if len(es) == 0 {
			return "nothing to delete"
		}
		id := es[r.IntN(len(es))].ID
		_, err = run.s.Delete(id.String())
		require.NoError(t, err)
		return "delete " + id.String()
	case k < 75:
		_, err := run.s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: int64(r.IntN(4))})
		require.NoError(t, err)
		return "trim"
	case k < 93:
		d := time.Duration(r.IntN(2500)) * time.Millisecond
		if r.IntN(20) == 0 {
			d = -d // the clock steps back
		}
		run.clk.advance(d)
		run.now += d.Milliseconds()
		return fmt.Sprint("clock ", d)
	default:
		c := IdempotenceConfig{}
		if r.IntN(3) != 0 {
			c.Duration = time.Duration(1+r.IntN(5)) * time.Second
		}
		if c.Duration == 0 || r.IntN(2) == 0 {
			c.MaxSize = 1 + r.IntN(5)
		}
		require.NoError(t, run.s.SetIdempotence(c))
		dur, size := m.durMs, m.maxSize
		if c.Duration != 0 {
			dur = c.Duration.Milliseconds()
		}
		if c.MaxSize != 0 {
			size = c.MaxSize
		}
		if dur != m.durMs || size != m.maxSize {
			m.durMs, m.maxSize, m.producers = dur, size, map[string][]idmpModelRef{}
		}
		return fmt.Sprintf("set %+v", c)
	}
}

func (run *idmpRun) check(step int, op string) {
	run.t.Helper()
	require.Equal(run.t, run.m.info(), run.s.IdempotenceInfo(), "step %d: %s", step, op)
	require.NoError(run.t, checkNow(run.s), "step %d: %s", step, op)
}

func TestIdempotenceAgainstModel(t *testing.T) {
	steps := 3000
	if testing.Short() {
		steps = 500
	}
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			clk := newTestClock(1_000_000)
			run := &idmpRun{t: t, r: rand.New(rand.NewPCG(seed, 0x1d3)), m: newIdmpModel(), s: NewStream(WithClock(clk.now)), clk: clk, now: 1_000_000}
			repeats := 0
			for step := range steps {
				op := run.step()
				if strings.HasPrefix(op, "repeat") {
					repeats++
				}
				run.check(step, op)
			}
			require.Greater(t, repeats, steps/40, "the test made too few repeats to mean much")
		})
	}
}

func TestIdempotenceAgainstModelDurable(t *testing.T) {
	steps := 800
	if testing.Short() {
		steps = 300
	}
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			clk := newTestClock(1_000_000)
			d := newReopener(t, clk, seed)
			run := &idmpRun{t: t, r: rand.New(rand.NewPCG(seed, 0x1d4)), m: newIdmpModel(), s: d.db.Stream("m"), clk: clk, now: 1_000_000}
			d.run(t, steps, run.step, run.check, func(db *DB) { run.s = db.Stream("m") })
		})
	}
}
