package xstream

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The model-based test applies random operations to a Stream and to
// refModel, a sorted slice with the rules written out plainly, and compares
// them after every step.

type refEntry struct {
	id     ID
	fields []Field
}

type refModel struct {
	entries    []refEntry // ascending IDs
	lastID     ID
	maxDeleted ID
	added      int64
}

func cmpID(a, b ID) int {
	if c := cmp.Compare(a.Ms, b.Ms); c != 0 {
		return c
	}
	return cmp.Compare(a.Seq, b.Seq)
}

// autoID is the ID an auto Add takes at clock time now.
func (m *refModel) autoID(now uint64) ID {
	switch {
	case now > m.lastID.Ms:
		return ID{now, 0}
	case m.lastID.Seq < maxU:
		return ID{m.lastID.Ms, m.lastID.Seq + 1}
	}
	return ID{m.lastID.Ms + 1, 0}
}

// starID is the ID "ms-*" resolves to.
func (m *refModel) starID(ms uint64) ID {
	if ms == m.lastID.Ms {
		return ID{ms, m.lastID.Seq + 1}
	}
	return ID{ms, 0}
}

func (m *refModel) add(id ID, fields []Field) {
	m.entries = append(m.entries, refEntry{id, slices.Clone(fields)})
	m.lastID = id
	m.added++
}

// trimExact applies an exact trim and returns how many entries it removed.
func (m *refModel) trimExact(t trimModel) int64 {
	n := 0
	if t.maxLen {
		n = max(0, len(m.entries)-int(t.keep))
	} else {
		for n < len(m.entries) && cmpID(m.entries[n].id, t.minID) < 0 {
			n++
		}
	}
	m.entries = m.entries[n:]
	return int64(n)
}

func (m *refModel) delete(ids []ID) int64 {
	var n int64
	for _, id := range ids {
		i, found := slices.BinarySearchFunc(m.entries, id, func(e refEntry, id ID) int { return cmpID(e.id, id) })
		if !found {
			continue
		}
		m.entries = slices.Delete(m.entries, i, i+1)
		n++
		if cmpID(id, m.maxDeleted) > 0 {
			m.maxDeleted = id
		}
	}
	return n
}

// inRange reports whether id lies between the bounds.
func inRange(id ID, start, end bound) bool {
	return start.admits(id, false) && end.admits(id, true)
}

// bound is a range bound with its meaning spelled out.
type bound struct {
	text string
	kind boundKind
	id   ID // the ID written, with seq 0 for a bare ms
}

type boundKind int

const (
	bMinus boundKind = iota
	bPlus
	bFull
	bBare
	bExclFull
	bExclBare
	bInvalid
)

func (b bound) admits(id ID, isEnd bool) bool {
	c := cmpID(id, b.id)
	switch b.kind {
	case bMinus: // the smallest ID
		return !isEnd || id == ID{}
	case bPlus: // the largest ID
		return isEnd || id == MaxID()
	case bFull:
		if isEnd {
			return c <= 0
		}
		return c >= 0
	case bBare:
		if isEnd {
			return id.Ms <= b.id.Ms
		}
		return c >= 0
	case bExclFull:
		if isEnd {
			return c < 0
		}
		return c > 0
	case bExclBare:
		if isEnd {
			return id.Ms < b.id.Ms || (id.Ms == b.id.Ms && id.Seq < maxU)
		}
		return c > 0
	}
	panic("bad bound")
}

// invalid reports whether the bound is an error in that position.
func (b bound) invalid(isEnd bool) bool {
	switch b.kind {
	case bInvalid:
		return true
	case bExclFull:
		return (!isEnd && b.id == MaxID()) || (isEnd && b.id == ID{})
	}
	return false
}

// trimModel is a random trim with its meaning.
type trimModel struct {
	args   TrimArgs
	maxLen bool
	keep   int64
	minID  ID
}

// gen draws random operands near the model's contents.
type gen struct {
	r *rand.Rand
	m *refModel
}

func (g gen) chance(p float64) bool { return g.r.Float64() < p }

// nearID returns an ID near the stream's contents: an existing one, one
// between, or one just outside.
func (g gen) nearID() ID {
	es := g.m.entries
	if len(es) > 0 && g.chance(0.5) {
		return es[g.r.IntN(len(es))].id
	}
	base := g.m.lastID.Ms
	lo := uint64(0)
	if base > 8 {
		lo = base - 8
	}
	return ID{lo + g.r.Uint64N(base-lo+3), g.r.Uint64N(4)}
}

func (g gen) fields() []Field {
	names := []string{"sensor-id", "temperature", "a", "b", "", "\x00n"}
	fs := make([]Field, 1+g.r.IntN(4))
	same := g.chance(0.5)
	for i := range fs {
		if same {
			fs[i].Name = names[i]
		} else {
			fs[i].Name = names[g.r.IntN(len(names))]
		}
		n := g.r.IntN(12)
		if g.chance(0.02) {
			n = 500 + g.r.IntN(5000)
		}
		b := make([]byte, n)
		for j := range b {
			b[j] = byte(g.r.IntN(256))
		}
		fs[i].Value = string(b)
	}
	return fs
}

func (g gen) bound() bound {
	id := g.nearID()
	switch g.r.IntN(12) {
	case 0:
		return bound{text: "-", kind: bMinus}
	case 1:
		return bound{text: "+", kind: bPlus}
	case 2, 3, 4:
		return bound{text: id.String(), kind: bFull, id: id}
	case 5, 6:
		return bound{text: strconv.FormatUint(id.Ms, 10), kind: bBare, id: ID{id.Ms, 0}}
	case 7, 8:
		return bound{text: "(" + id.String(), kind: bExclFull, id: id}
	case 9:
		return bound{text: "(" + strconv.FormatUint(id.Ms, 10), kind: bExclBare, id: ID{id.Ms, 0}}
	case 10:
		edge := []ID{{}, MaxID()}[g.r.IntN(2)]
		return bound{text: "(" + edge.String(), kind: bExclFull, id: edge}
	}
	bad := []string{"*", "$", "x", "(-", "(+", "1-*", "", "((1", "1-2-3"}
	return bound{text: bad[g.r.IntN(len(bad))], kind: bInvalid}
}

func (g gen) trim() trimModel {
	var t trimModel
	if g.chance(0.5) {
		t.maxLen = true
		// Mostly a bound that lets the stream grow to several blocks.
		t.keep = int64(150 + g.r.IntN(500))
		if g.chance(0.03) {
			t.keep = int64(g.r.IntN(len(g.m.entries) + 40))
		}
		t.args = TrimArgs{Strategy: TrimMaxLen, MaxLen: t.keep}
	} else {
		t.minID = g.nearID()
		if es := g.m.entries; len(es) > 0 && g.chance(0.97) {
			t.minID = es[g.r.IntN(min(len(es), 8))].id // mostly near the head
		}
		text := t.minID.String()
		if g.chance(0.3) {
			t.minID.Seq = 0
			text = strconv.FormatUint(t.minID.Ms, 10)
		}
		t.args = TrimArgs{Strategy: TrimMinID, MinID: text}
	}
	if g.chance(0.5) {
		t.args.Approx = true
		if g.chance(0.4) {
			t.args.Limit = 1 + g.r.Int64N(300)
		}
	}
	return t
}

// modelRun drives one random sequence.
type modelRun struct {
	t   *testing.T
	g   gen
	m   *refModel
	s   *Stream
	clk *testClock
	now int64
}

func TestModel(t *testing.T) {
	steps := 1500
	if testing.Short() {
		steps = 500
	}
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run("seed="+strconv.FormatUint(seed, 10), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, 0x5eed))
			m := &refModel{}
			clk := newTestClock(1000)
			run := &modelRun{t: t, g: gen{r, m}, m: m, s: NewStream(WithClock(clk.now)), clk: clk, now: 1000}
			for step := range steps {
				op := run.step()
				run.check(step, op)
			}
		})
	}
}

// step does one random operation and returns its description.
func (x *modelRun) step() string {
	switch n := x.g.r.IntN(100); {
	case n < 55:
		return x.add()
	case n < 60:
		return x.addBatch()
	case n < 66:
		return x.del()
	case n < 72:
		return x.trim()
	case n < 94:
		return x.rangeOp()
	default:
		return x.read()
	}
}

// check compares everything observable with the model.
func (x *modelRun) check(step int, op string) {
	t, s, m := x.t, x.s, x.m
	t.Helper()
	msg := "step " + strconv.Itoa(step) + ": " + op
	got, err := s.Range("-", "+", 0)
	require.NoError(t, err, msg)
	requireSameEntries(t, m.entries, got, msg)
	require.EqualValues(t, len(m.entries), s.Len(), msg)
	require.Equal(t, m.lastID, s.LastID(), msg)
	info := must(s.Info())
	require.EqualValues(t, len(m.entries), info.Length, msg)
	require.Equal(t, m.lastID, info.LastGeneratedID, msg)
	require.Equal(t, m.maxDeleted, info.MaxDeletedEntryID, msg)
	require.Equal(t, m.added, info.EntriesAdded, msg)
	if len(m.entries) == 0 {
		require.Equal(t, ID{}, info.RecordedFirstEntryID, msg)
		require.Nil(t, info.FirstEntry, msg)
		require.Nil(t, info.LastEntry, msg)
		require.Zero(t, info.RadixTreeKeys, msg+": an empty stream holds no block")
		return
	}
	first, last := m.entries[0], m.entries[len(m.entries)-1]
	require.Equal(t, first.id, info.RecordedFirstEntryID, msg)
	require.Equal(t, &Entry{first.id, first.fields}, info.FirstEntry, msg)
	require.Equal(t, &Entry{last.id, last.fields}, info.LastEntry, msg)
	require.LessOrEqual(t, info.RadixTreeKeys, len(m.entries), msg+": no block without a live entry")
}

func requireSameEntries(t *testing.T, want []refEntry, got []Entry, msg string) {
	t.Helper()
	require.Len(t, got, len(want), msg)
	for i, e := range got {
		if e.ID != want[i].id || !slices.Equal(e.Fields, want[i].fields) {
			require.Equal(t, Entry{want[i].id, want[i].fields}, e, "%s: entry %d", msg, i)
		}
	}
}

// addBatch adds one to six entries with AddBatch, with auto IDs or an
// "ms-*" ID, and models them as that many Adds at one clock reading.
func (x *modelRun) addBatch() string {
	g, m := x.g, x.m
	x.now += g.r.Int64N(3)
	x.clk.set(x.now)
	var args AddArgs
	star := g.chance(0.5)
	ms := m.lastID.Ms + g.r.Uint64N(2)
	if star {
		args.ID = strconv.FormatUint(ms, 10) + "-*"
	}
	entries := make([][]Field, 1+g.r.IntN(6))
	for i := range entries {
		entries[i] = g.fields()
	}
	desc := "AddBatch " + strconv.Quote(args.ID) + " x" + strconv.Itoa(len(entries))
	if m.lastID.Seq > maxU-uint64(len(entries)) {
		return desc + " (skipped: near the end of a sequence)"
	}
	got, err := x.s.AddBatch(args, entries...)
	require.NoError(x.t, err, desc)
	require.Len(x.t, got, len(entries), desc)
	for i, fields := range entries {
		want := m.autoID(uint64(x.now))
		if star {
			want = m.starID(ms)
		}
		require.Equal(x.t, want, got[i], "%s: entry %d", desc, i)
		m.add(want, fields)
	}
	return desc
}

func (x *modelRun) add() string {
	g, m := x.g, x.m
	// The clock mostly goes on, sometimes stands still or goes back.
	switch k := g.r.IntN(10); {
	case k < 4:
	case k < 8:
		x.now += 1 + g.r.Int64N(3)
	default:
		x.now -= 1 + g.r.Int64N(5)
	}
	x.clk.set(x.now)

	fields := g.fields()
	var args AddArgs
	var want ID
	var fault error
	var names []string // what the error must name
	switch k := g.r.IntN(20); {
	case k < 6:
		args.ID = []string{"", "*"}[g.r.IntN(2)]
		want = m.autoID(uint64(x.now))
	case k < 10:
		want = ID{m.lastID.Ms + g.r.Uint64N(3), g.r.Uint64N(3)}
		args.ID = want.String()
		if g.chance(0.2) {
			want.Seq = 0
			args.ID = strconv.FormatUint(want.Ms, 10)
		}
		if cmpID(want, m.lastID) <= 0 {
			fault = ErrIDTooSmall
		}
		if want == (ID{}) {
			fault = ErrZeroID
		}
	case k < 14:
		ms := m.lastID.Ms + g.r.Uint64N(3)
		if ms > 0 && g.chance(0.15) {
			ms-- // possibly below the last ms
		}
		args.ID = strconv.FormatUint(ms, 10) + "-*"
		want = m.starID(ms)
		if cmpID(want, m.lastID) <= 0 {
			fault = ErrIDTooSmall
		}
	case k < 15:
		args.ID = []string{"0-0", "0"}[g.r.IntN(2)]
		fault = ErrZeroID
	case k < 16:
		args.ID = []string{"-", "+", "$", ">", "(5", "abc", "1-", "-1", "*-1", "1-*-1", "18446744073709551616"}[g.r.IntN(11)]
		fault = ErrInvalidID
	case k < 17:
		fields = nil
		args.ID = "*"
		fault = ErrNoFields
	default:
		args.ID = "*"
		want = m.autoID(uint64(x.now))
	}

	if fault != nil && fault != ErrNoFields {
		names = []string{strconv.Quote(args.ID)}
	}
	var tm trimModel
	if fault == nil && g.chance(0.15) {
		tm = g.trim()
		args.Trim = tm.args
	} else if fault == nil && g.chance(0.03) {
		bt := badTrims[g.r.IntN(len(badTrims))]
		args.Trim, fault, names = bt.args, bt.sentinel, bt.names
	}

	desc := "Add " + strconv.Quote(args.ID) + " " + trimDesc(args.Trim)

	before := len(m.entries)
	id, err := x.s.Add(args, fields...)
	if fault != nil {
		requireErr(x.t, err, fault, names...)
		return desc + " (rejected)"
	}
	require.NoError(x.t, err, desc)
	require.Equal(x.t, want, id, desc)
	m.add(want, fields)
	if args.Trim.Strategy != TrimNone {
		x.applyTrim(tm, before+1, nil, desc)
	}
	return desc
}

func trimDesc(a TrimArgs) string {
	if a == (TrimArgs{}) {
		return ""
	}
	return fmt.Sprintf("%+v", a)
}

// applyTrim brings the model in line with a trim the stream did. An exact
// trim is predicted. For an approximate one the model checks the rules —
// only a prefix goes, the threshold is kept, at most Limit entries go, and
// (when lives, the blocks' live counts before the trim, are given) only
// whole blocks go — then takes the stream's result.
func (x *modelRun) applyTrim(tm trimModel, lenBefore int, lives []int64, desc string) int64 {
	t, m := x.t, x.m
	if !tm.args.Approx {
		return m.trimExact(tm)
	}
	n := lenBefore - int(x.s.Len())
	require.GreaterOrEqual(t, n, 0, desc)
	require.LessOrEqual(t, n, len(m.entries), desc)
	if tm.maxLen {
		if n > 0 {
			require.GreaterOrEqual(t, x.s.Len(), tm.keep, desc+": below the threshold")
		}
	} else if n > 0 {
		require.Negative(t, cmpID(m.entries[n-1].id, tm.minID), desc+": removed an entry >= MinID")
	}
	if tm.args.Limit > 0 {
		require.LessOrEqual(t, int64(n), tm.args.Limit, desc+": over the limit")
	}
	if lives != nil {
		whole := n == 0
		var sum int64
		for _, l := range lives {
			sum += l
			whole = whole || sum == int64(n)
		}
		require.True(t, whole, "%s: removed %d, not whole blocks of %v", desc, n, lives)
	}
	got, err := x.s.Range("-", "+", 0)
	require.NoError(t, err)
	requireSameEntries(t, m.entries[n:], got, desc+": not a prefix")
	m.entries = m.entries[n:]
	return int64(n)
}

func (x *modelRun) del() string {
	g, m := x.g, x.m
	var texts []string
	var parsed []ID
	for range 1 + g.r.IntN(3) {
		id := g.nearID()
		text := id.String()
		if g.chance(0.1) {
			id.Seq = 0
			text = strconv.FormatUint(id.Ms, 10)
		}
		texts = append(texts, text)
		parsed = append(parsed, id)
	}
	desc := "Delete " + strings.Join(texts, " ")
	if g.chance(0.05) {
		bad := []string{"-", "+", "*", "x", "(1", ""}[g.r.IntN(6)]
		texts = append(texts[:1], append([]string{bad}, texts[1:]...)...)
		n, err := x.s.Delete(texts...)
		requireErr(x.t, err, ErrInvalidID, strconv.Quote(bad))
		require.Zero(x.t, n)
		return desc + " with " + strconv.Quote(bad) + " (rejected)"
	}
	n, err := x.s.Delete(texts...)
	require.NoError(x.t, err, desc)
	require.Equal(x.t, m.delete(parsed), n, desc)
	return desc
}

func (x *modelRun) trim() string {
	g := x.g
	if g.chance(0.05) {
		bt := badTrims[g.r.IntN(len(badTrims))]
		n, err := x.s.Trim(bt.args)
		require.ErrorIs(x.t, err, bt.sentinel)
		require.Zero(x.t, n)
		return "Trim " + trimDesc(bt.args) + " (rejected)"
	}
	tm := g.trim()
	desc := "Trim " + trimDesc(tm.args)
	lives := blockLives(x.s)
	before := len(x.m.entries)
	n, err := x.s.Trim(tm.args)
	require.NoError(x.t, err, desc)
	want := x.applyTrim(tm, before, lives, desc)
	require.Equal(x.t, want, n, desc)
	return desc
}

func (x *modelRun) rangeOp() string {
	g, m := x.g, x.m
	start, end := g.bound(), g.bound()
	count := g.r.IntN(8)
	if g.chance(0.4) {
		count = 0
	}
	if g.chance(0.02) {
		count = -1 - g.r.IntN(3)
	}
	rev := g.chance(0.5)
	var got []Entry
	var err error
	desc := "Range " + strconv.Quote(start.text) + " " + strconv.Quote(end.text) + " " + strconv.Itoa(count)
	if rev {
		desc = "Rev" + desc
		got, err = x.s.RevRange(end.text, start.text, count)
	} else {
		got, err = x.s.Range(start.text, end.text, count)
	}
	switch {
	case count < 0:
		requireErr(x.t, err, ErrInvalidArgument, strconv.Itoa(count))
		return desc
	case start.invalid(false) || end.invalid(true):
		require.ErrorIs(x.t, err, ErrInvalidID, desc)
		return desc
	}
	require.NoError(x.t, err, desc)
	var want []refEntry
	for _, e := range m.entries {
		if inRange(e.id, start, end) {
			want = append(want, e)
		}
	}
	if rev {
		slices.Reverse(want)
	}
	if count > 0 && len(want) > count {
		want = want[:count]
	}
	requireSameEntries(x.t, want, got, desc)
	return desc
}

func (x *modelRun) read() string {
	g, m := x.g, x.m
	count := g.r.IntN(5)
	var after string
	var want []refEntry
	switch k := g.r.IntN(6); {
	case k == 0:
		after = "$"
	case k == 1:
		after = "+"
		if len(m.entries) > 0 {
			want = m.entries[len(m.entries)-1:]
		}
	default:
		id := g.nearID()
		after = id.String()
		if k == 2 {
			id.Seq = 0
			after = strconv.FormatUint(id.Ms, 10)
		}
		for _, e := range m.entries {
			if cmpID(e.id, id) > 0 {
				want = append(want, e)
			}
		}
		if count > 0 && len(want) > count {
			want = want[:count]
		}
	}
	desc := "Read " + after + " " + strconv.Itoa(count)
	got, err := x.s.Read(context.Background(), after, ReadArgs{Count: count})
	require.NoError(x.t, err, desc)
	requireSameEntries(x.t, want, got, desc)
	return desc
}
