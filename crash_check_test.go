package xstream

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The parent's side of the crash tests: what a round's lines say, and the
// check of the reopened DB against them.

// crashOp is one call of the child.
type crashOp struct {
	worker  string
	kind    string   // ADD, READ, HIST, CLAIM or ACK
	stream  string   // all but READ
	streams []string // READ
	seq     int      // ADD: the entry's number for its producer
	ids     []ID     // ACK: the IDs given
	try, ok int      // indices of its TRY and OK lines; ok is -1 for a call in flight at the kill
}

// required reports whether the call's effect must have survived: it
// returned before line horizon.
func (op *crashOp) required(horizon int) bool { return op.ok >= 0 && op.ok < horizon }

func (op *crashOp) String() string {
	if op.ok < 0 {
		return fmt.Sprintf("%s %s (line %d, in flight)", op.worker, op.kind, op.try)
	}
	return fmt.Sprintf("%s %s (lines %d-%d)", op.worker, op.kind, op.try, op.ok)
}

// crashEvents are the calls reported about one entry of one stream.
type crashEvents struct {
	delivers   []*crashOp // READ: delivered to the op's worker
	redelivers []*crashOp // HIST: delivered again to its owner
	claims     []*crashOp // CLAIM: taken by the claimer, in its order
	acks       []*crashOp
}

func (e *crashEvents) String() string {
	if e == nil {
		return "none"
	}
	return fmt.Sprintf("delivered by %v, again by %v, claimed by %v, acknowledged by %v", e.delivers, e.redelivers, e.claims, e.acks)
}

// crashRound is what the child of one round printed.
type crashRound struct {
	lines    int
	ready    bool
	horizon  int // every call that returned before this line must have survived
	adds     map[string]map[ID]*crashOp
	events   map[string]map[ID]*crashEvents
	inflight map[string]*crashOp   // by worker
	onStream map[string][]*crashOp // the calls in flight by kind and stream ("READ s0")
	ops      int                   // calls that returned
	snaps    int
	flushes  int
	snapErrs []string
}

func (rd *crashRound) ev(s string, id ID) *crashEvents {
	m := rd.events[s]
	if m == nil {
		m = map[ID]*crashEvents{}
		rd.events[s] = m
	}
	e := m[id]
	if e == nil {
		e = &crashEvents{}
		m[id] = e
	}
	return e
}

// inflightOn returns the calls of kind in flight at the kill on stream s.
func (rd *crashRound) inflightOn(kind, s string) []*crashOp {
	return rd.onStream[kind+" "+s]
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// parseCrashLines reads the lines of a child (without their "XS "). Under
// SyncAlways every call that returned must survive; under
// SyncEverySecond those that returned before the last FLUSHED marker's
// line.
func parseCrashLines(lines []string, policy SyncPolicy) (*crashRound, error) {
	rd := &crashRound{
		lines:    len(lines),
		adds:     map[string]map[ID]*crashOp{},
		events:   map[string]map[ID]*crashEvents{},
		inflight: map[string]*crashOp{},
	}
	if policy == SyncAlways {
		rd.horizon = len(lines)
	}
	parseIDList := func(toks []string) ([]ID, error) {
		out := make([]ID, 0, len(toks))
		for _, tok := range toks {
			id, err := ParseID(tok)
			if err != nil {
				return nil, err
			}
			out = append(out, id)
		}
		return out, nil
	}
	for i, line := range lines {
		f := strings.Fields(line)
		bad := func(format string, args ...any) error {
			return fmt.Errorf("line %d %q: %s", i, line, fmt.Sprintf(format, args...))
		}
		if len(f) == 0 {
			return nil, bad("empty")
		}
		switch f[0] {
		case "OPEN":
		case "READY":
			rd.ready = true
		case "SNAP":
			rd.snaps++
		case "SNAPFAIL":
			rd.snapErrs = append(rd.snapErrs, strings.TrimPrefix(line, "SNAPFAIL "))
		case "FLUSHED":
			if len(f) != 2 {
				return nil, bad("malformed")
			}
			n, err := strconv.Atoi(f[1])
			if err != nil || n > i {
				return nil, bad("bad line count")
			}
			rd.flushes++
			if policy != SyncAlways {
				rd.horizon = max(rd.horizon, n)
			}
		case "ERR":
			return nil, bad("the child reports an error")
		case "TRY":
			if len(f) < 4 {
				return nil, bad("malformed")
			}
			w := f[1]
			if rd.inflight[w] != nil {
				return nil, bad("%s is already in %s", w, rd.inflight[w])
			}
			op := &crashOp{worker: w, kind: f[2], try: i, ok: -1}
			switch op.kind {
			case "ADD":
				seq, err := strconv.Atoi(f[4])
				if len(f) != 5 || err != nil {
					return nil, bad("malformed")
				}
				op.stream, op.seq = f[3], seq
			case "READ":
				op.streams = f[3:]
			case "HIST", "CLAIM":
				op.stream = f[3]
			case "ACK":
				ids, err := parseIDList(f[4:])
				if err != nil || len(ids) == 0 {
					return nil, bad("malformed")
				}
				op.stream, op.ids = f[3], ids
			default:
				return nil, bad("unknown call")
			}
			rd.inflight[w] = op
		case "OK":
			if len(f) < 3 {
				return nil, bad("malformed")
			}
			w := f[1]
			op := rd.inflight[w]
			if op == nil || op.kind != f[2] {
				return nil, bad("no %s call of %s in flight", f[2], w)
			}
			op.ok = i
			delete(rd.inflight, w)
			rd.ops++
			switch op.kind {
			case "ADD":
				if len(f) != 6 || f[3] != op.stream || f[4] != strconv.Itoa(op.seq) {
					return nil, bad("does not answer %s", op)
				}
				id, err := ParseID(f[5])
				if err != nil {
					return nil, bad("%v", err)
				}
				m := rd.adds[op.stream]
				if m == nil {
					m = map[ID]*crashOp{}
					rd.adds[op.stream] = m
				}
				if prev := m[id]; prev != nil {
					return nil, bad("a second add of %s %s (the first: %s)", op.stream, id, prev)
				}
				m[id] = op
			case "READ":
				for _, tok := range f[3:] {
					s, list, ok := strings.Cut(tok, "=")
					if !ok || !slices.Contains(op.streams, s) {
						return nil, bad("stream %q was not read", s)
					}
					ids, err := parseIDList(strings.Split(list, ","))
					if err != nil {
						return nil, bad("%v", err)
					}
					for _, id := range ids {
						e := rd.ev(s, id)
						e.delivers = append(e.delivers, op)
					}
				}
			case "HIST", "CLAIM":
				if len(f) < 4 || f[3] != op.stream {
					return nil, bad("does not answer %s", op)
				}
				ids, err := parseIDList(f[4:])
				if err != nil {
					return nil, bad("%v", err)
				}
				for _, id := range ids {
					e := rd.ev(op.stream, id)
					if op.kind == "HIST" {
						e.redelivers = append(e.redelivers, op)
					} else {
						e.claims = append(e.claims, op)
					}
				}
			case "ACK":
				n, err := strconv.Atoi(f[len(f)-1])
				if len(f) != 5 || f[3] != op.stream || err != nil || n < 0 || n > len(op.ids) {
					return nil, bad("does not answer %s", op)
				}
				for _, id := range op.ids {
					e := rd.ev(op.stream, id)
					e.acks = append(e.acks, op)
				}
			}
		default:
			return nil, bad("unknown line")
		}
	}
	rd.onStream = map[string][]*crashOp{}
	for _, w := range slices.Sorted(mapKeys(rd.inflight)) {
		op := rd.inflight[w]
		for _, s := range append([]string{op.stream}, op.streams...) {
			if s != "" {
				rd.onStream[op.kind+" "+s] = append(rd.onStream[op.kind+" "+s], op)
			}
		}
	}
	return rd, nil
}

// crashState is the state of an entry in the group.
type crashState struct {
	kind  byte // 'u' not delivered, 'p' pending, 'a' acknowledged
	owner string
	count int64
}

func (s crashState) String() string {
	switch s.kind {
	case 'u':
		return "not delivered"
	case 'a':
		return "acknowledged"
	}
	return fmt.Sprintf("pending to %s (%d deliveries)", s.owner, s.count)
}

// crashStep is the effect of a call on one entry.
type crashStep struct {
	kind     byte // 'd' delivery, 'r' delivery again (history), 'c' claim, 'a' acknowledgement
	who      string
	required bool
}

func (st crashState) apply(s crashStep) (crashState, bool) {
	switch s.kind {
	case 'd':
		return crashState{'p', s.who, 1}, st.kind == 'u'
	case 'r':
		st.count++
		return st, st.kind == 'p' && st.owner == s.who
	case 'c':
		return crashState{'p', s.who, st.count + 1}, st.kind == 'p'
	}
	return crashState{kind: 'a'}, st.kind == 'p'
}

// crashAllowed returns the states an entry may be in after a round that
// started with it in init, given the calls reported about it (ev, nil for
// none) and the calls in flight at the kill.
//
// The effects of the calls on one entry reach the log in an order known
// from the workload: its delivery (a READ by a consumer), deliveries again
// to that consumer (its HIST reads, while it owns the entry), claims by
// the claimer (the only one who claims, in its order), and last an
// acknowledgement (after which nothing can claim it). A call in flight
// may have had its effect at its place in that order, or not. The log
// that survives holds a prefix of these effects, which includes every
// effect of a required call (one that returned before the horizon). So
// the allowed states are those after each such prefix of each such
// order.
func crashAllowed(init crashState, ev *crashEvents, rd *crashRound, s string, id ID) (map[crashState]bool, error) {
	if ev == nil {
		if len(rd.inflightOn("READ", s)) == 0 && len(rd.inflightOn("HIST", s)) == 0 &&
			len(rd.inflightOn("CLAIM", s)) == 0 && len(rd.inflightOn("ACK", s)) == 0 {
			return map[crashState]bool{init: true}, nil // nothing can have changed it
		}
		ev = &crashEvents{}
	}
	step := func(kind byte, op *crashOp) crashStep {
		return crashStep{kind, op.worker, op.required(rd.horizon)}
	}
	var delivers, again, inClaim, acks [][]crashStep
	switch len(ev.delivers) {
	case 0:
		delivers = [][]crashStep{nil}
		for _, op := range rd.inflightOn("READ", s) {
			delivers = append(delivers, []crashStep{{'d', op.worker, false}})
		}
	case 1:
		delivers = [][]crashStep{{step('d', ev.delivers[0])}}
	default:
		return nil, fmt.Errorf("delivered by %d reads: %v", len(ev.delivers), ev.delivers)
	}
	var known []crashStep
	for _, op := range ev.redelivers {
		known = append(known, step('r', op))
	}
	again = [][]crashStep{nil}
	for _, op := range rd.inflightOn("HIST", s) {
		again = append(again, []crashStep{{'r', op.worker, false}})
	}
	var claims []crashStep
	for _, op := range ev.claims {
		claims = append(claims, step('c', op))
	}
	inClaim = [][]crashStep{nil}
	for range rd.inflightOn("CLAIM", s) {
		inClaim = append(inClaim, []crashStep{{'c', crashClaimer, false}})
	}
	if len(ev.acks) > 0 {
		req := false
		for _, op := range ev.acks {
			req = req || op.required(rd.horizon)
		}
		acks = [][]crashStep{{{'a', "", req}}}
	} else {
		acks = [][]crashStep{nil}
		for _, op := range rd.inflightOn("ACK", s) {
			if slices.Contains(op.ids, id) {
				acks = append(acks, []crashStep{{'a', op.worker, false}})
				break
			}
		}
	}
	allowed := map[crashState]bool{}
	for _, d := range delivers {
		for _, r := range again {
			for _, c := range inClaim {
				for _, a := range acks {
					seq := slices.Concat(d, known, r, claims, c, a)
					trace := []crashState{init}
					st, lmin, ok := init, 0, true
					for i, s := range seq {
						if st, ok = st.apply(s); !ok {
							break
						}
						trace = append(trace, st)
						if s.required {
							lmin = i + 1
						}
					}
					if !ok {
						continue
					}
					for _, st := range trace[lmin:] {
						allowed[st] = true
					}
				}
			}
		}
	}
	if len(allowed) == 0 {
		return nil, fmt.Errorf("the calls reported do not fit together from %s: %s", init, ev)
	}
	return allowed, nil
}

// crashStreamModel is a stream as a round left it, checked.
type crashStreamModel struct {
	entries []Entry
	index   map[ID]int
	last    ID // the group's last delivered ID
	pending map[ID]crashState
}

func (m *crashStreamModel) state(id ID) crashState {
	if st, ok := m.pending[id]; ok {
		return st
	}
	if _, ok := m.index[id]; ok && !m.last.Less(id) {
		return crashState{kind: 'a'}
	}
	return crashState{kind: 'u'}
}

// crashModel is the DB as the rounds so far left it.
type crashModel struct {
	seed    uint64
	streams map[string]*crashStreamModel
}

func newCrashModel(seed uint64) *crashModel {
	m := &crashModel{seed: seed, streams: map[string]*crashStreamModel{}}
	for _, s := range crashStreams {
		m.streams[s] = &crashStreamModel{index: map[ID]int{}, pending: map[ID]crashState{}}
	}
	return m
}

// crashCausal collects, for the check that what survived is a prefix of
// the log, the calls whose survival is certain from the state: a call
// that returned before another began committed its record first.
type crashCausal struct {
	survived []*crashOp // calls whose effect is in the DB
	lost     []*crashOp // calls that returned and whose effect is not
	what     map[*crashOp]string
}

func (c *crashCausal) note(op *crashOp, survived bool, what string) {
	if c.what == nil {
		c.what = map[*crashOp]string{}
	}
	c.what[op] = what
	if survived {
		c.survived = append(c.survived, op)
	} else if op.ok >= 0 {
		c.lost = append(c.lost, op)
	}
}

// problems returns the lost calls that returned before a call that
// survived began.
func (c *crashCausal) problems() []string {
	var last *crashOp
	for _, op := range c.survived {
		if last == nil || op.try > last.try {
			last = op
		}
	}
	var out []string
	if last == nil {
		return nil
	}
	slices.SortFunc(c.lost, func(a, b *crashOp) int { return a.ok - b.ok })
	for _, op := range c.lost {
		if op.ok < last.try {
			out = append(out, fmt.Sprintf("%s of %s was lost, though it returned before %s of %s began, which survived",
				c.what[op], op, c.what[last], last))
		}
	}
	return out
}

// crashObserved is what the parent read of one stream.
type crashObserved struct {
	exists  bool
	entries []Entry
	info    StreamInfo
	groups  []GroupInfo
	pel     []PendingEntry
}

func observeCrashStream(db *DB, s string) (crashObserved, error) {
	st, ok := db.Lookup(s)
	if !ok {
		return crashObserved{}, nil
	}
	o := crashObserved{exists: true, info: must(st.Info()), groups: st.Groups()}
	var err error
	if o.entries, err = st.Range("-", "+", 0); err != nil {
		return o, err
	}
	if len(o.groups) > 0 {
		if o.pel, err = st.PendingRange(crashGroup, PendingArgs{}); err != nil {
			return o, err
		}
	}
	return o, nil
}

// crashCheckStream checks stream s of the reopened DB (o) against the
// model of the rounds before (m) and the report of this one (rd), and
// returns the model of s for the next round and the problems found. The
// rules, where "required" means that the call returned (SyncAlways) or
// returned before the last FLUSHED marker (SyncEverySecond):
//
//   - Entries. They are in ID order. Every entry of the earlier rounds is
//     there with the same fields. Every other one comes after them and is
//     either an acknowledged add of this round, with exactly the fields
//     its producer gave it (crashFields), or the add its producer was in
//     at the kill, at most one for each producer, with its fields. Every
//     required add is there, and there is no hole: an acknowledged add
//     is missing only after the last entry there (the log of a stream is
//     in ID order, and what survives is a prefix of it). The stream's
//     length, entries-added counter and last ID agree with its entries.
//   - The group. Its last delivered ID is that of an entry there and
//     never goes back; its entries-read counter is the number of entries
//     up to it, its lag the rest, its pending count the rows of its PEL,
//     which are entries of the stream up to the last delivered ID, owned
//     by the consumers or the claimer.
//   - Each entry's state in the group (not delivered, pending to whom
//     with how many deliveries, acknowledged) is one crashAllowed allows.
//     So every required acknowledgement holds (the entry is not pending),
//     every required delivery or claim holds unless a later call moved
//     it, and nothing was delivered, claimed or acknowledged that no call
//     could have done.
//
// The calls whose survival the state tells for certain (adds, deliveries
// and acknowledgements) go to causal.
func (m *crashModel) crashCheckStream(s string, o crashObserved, rd *crashRound, round int, causal *crashCausal) (*crashStreamModel, []string) {
	old := m.streams[s]
	var probs []string
	bad := func(format string, args ...any) {
		probs = append(probs, s+": "+fmt.Sprintf(format, args...))
	}
	if !o.exists {
		if rd.ready || len(old.entries) > 0 {
			bad("the stream is missing")
		}
		return old, probs
	}
	next := &crashStreamModel{entries: o.entries, index: map[ID]int{}, pending: map[ID]crashState{}}
	for i, e := range o.entries {
		if i > 0 && !o.entries[i-1].ID.Less(e.ID) {
			bad("entry %s after %s", e.ID, o.entries[i-1].ID)
		}
		next.index[e.ID] = i
	}

	// Entries.
	var oldLast, lastID ID
	if n := len(old.entries); n > 0 {
		oldLast = old.entries[n-1].ID
	}
	if n := len(o.entries); n > 0 {
		lastID = o.entries[n-1].ID
	}
	for _, e := range old.entries {
		i, ok := next.index[e.ID]
		if !ok {
			bad("entry %s of an earlier round is gone", e.ID)
		} else if !slices.Equal(o.entries[i].Fields, e.Fields) {
			bad("entry %s of an earlier round has fields %q, it had %q", e.ID, o.entries[i].Fields, e.Fields)
		}
	}
	fromAdd := map[*crashOp]ID{}
	for _, e := range o.entries {
		if _, ok := old.index[e.ID]; ok {
			continue
		}
		if !oldLast.Less(e.ID) {
			bad("new entry %s is not after the entries of earlier rounds (last %s)", e.ID, oldLast)
		}
		op := rd.adds[s][e.ID]
		if op == nil {
			r, p, seq, ok := crashOrigin(e.Fields)
			if in := rd.inflight["p"+strconv.Itoa(p)]; ok && r == round && in != nil && in.kind == "ADD" && in.stream == s && in.seq == seq {
				op = in
			} else {
				bad("entry %s %q was not acknowledged, and no add of it was in flight", e.ID, e.Fields)
				continue
			}
		}
		if prev, dup := fromAdd[op]; dup {
			bad("entries %s and %s both come from %s", prev, e.ID, op)
		}
		fromAdd[op] = e.ID
		if want := crashFields(m.seed, round, int(op.worker[1]-'0'), op.seq); !slices.Equal(want, e.Fields) {
			bad("entry %s has fields %q, %s gave %q", e.ID, e.Fields, op, want)
		}
		causal.note(op, true, "the add of "+e.ID.String())
	}
	for _, id := range slices.SortedFunc(mapKeys(rd.adds[s]), ID.Compare) {
		op := rd.adds[s][id]
		if _, ok := next.index[id]; ok {
			continue
		}
		switch {
		case op.required(rd.horizon):
			bad("acknowledged entry %s (%s) is missing", id, op)
		case id.Less(lastID):
			bad("acknowledged entry %s (%s) is missing, but the later %s is there", id, op, lastID)
		}
		causal.note(op, false, "the add of "+id.String())
	}
	n := int64(len(o.entries))
	if o.info.Length != n || o.info.EntriesAdded != n || o.info.LastGeneratedID != lastID || !o.info.MaxDeletedEntryID.IsZero() {
		bad("%d entries up to %s, but length %d, entries added %d, last ID %s, max deleted %s",
			n, lastID, o.info.Length, o.info.EntriesAdded, o.info.LastGeneratedID, o.info.MaxDeletedEntryID)
	}

	// The group.
	if len(o.groups) != 1 || o.groups[0].Name != crashGroup {
		bad("groups %+v, want %q alone", o.groups, crashGroup)
		return next, probs
	}
	g := o.groups[0]
	next.last = g.LastDeliveredID
	if _, ok := next.index[g.LastDeliveredID]; !ok && !g.LastDeliveredID.IsZero() {
		bad("last delivered ID %s is not an entry's", g.LastDeliveredID)
	}
	if g.LastDeliveredID.Less(old.last) {
		bad("last delivered ID %s went back from %s", g.LastDeliveredID, old.last)
	}
	read := int64(0)
	for _, e := range o.entries {
		if !g.LastDeliveredID.Less(e.ID) {
			read++
		}
	}
	// Nothing is ever deleted, so the counter is known once the group
	// delivered an entry (before, it is the creation's: unknown).
	known := g.EntriesReadKnown || g.LastDeliveredID.IsZero()
	if !known || g.EntriesReadKnown && g.EntriesRead != read || !g.LagKnown || g.Lag != n-read || g.Pending != int64(len(o.pel)) {
		bad("group %+v: want entries read %d, lag %d, pending %d", g, read, n-read, len(o.pel))
	}
	for _, row := range o.pel {
		if row.Consumer != crashClaimer && !slices.Contains(crashConsumers, row.Consumer) || row.Deliveries < 1 {
			bad("pending row %+v", row)
		}
		if _, ok := next.index[row.ID]; !ok {
			bad("pending entry %s is not in the stream", row.ID)
		}
		if g.LastDeliveredID.Less(row.ID) {
			bad("pending entry %s is after the last delivered ID %s", row.ID, g.LastDeliveredID)
		}
		next.pending[row.ID] = crashState{'p', row.Consumer, row.Deliveries}
	}

	// Each entry's state.
	all := map[ID]bool{}
	for _, set := range []map[ID]int{old.index, next.index} {
		for id := range set {
			all[id] = true
		}
	}
	for id := range rd.events[s] {
		all[id] = true
	}
	for id := range rd.adds[s] {
		all[id] = true
	}
	for _, id := range slices.SortedFunc(mapKeys(all), ID.Compare) {
		init := old.state(id)
		got := next.state(id)
		if _, ok := next.index[id]; !ok && !g.LastDeliveredID.Less(id) {
			got = crashState{kind: 'a'} // delivered, yet gone: an error below unless allowed
			bad("entry %s is missing, but the group delivered up to %s", id, g.LastDeliveredID)
		}
		ev := rd.events[s][id]
		allowed, err := crashAllowed(init, ev, rd, s, id)
		if err != nil {
			bad("entry %s: %v", id, err)
			continue
		}
		if !allowed[got] {
			var want []string
			for st := range allowed {
				want = append(want, st.String())
			}
			slices.Sort(want)
			var in []string
			for _, w := range slices.Sorted(mapKeys(rd.inflight)) {
				in = append(in, rd.inflight[w].String())
			}
			bad("entry %s is %s; before the round it was %s, and the calls reported allow only: %s (calls: %s; in flight at the kill: %v)",
				id, got, init, strings.Join(want, "; "), ev, in)
		}
		if ev != nil && init.kind == 'u' && len(ev.delivers) == 1 {
			causal.note(ev.delivers[0], got.kind != 'u', "the delivery of "+id.String())
		}
		if ev != nil && init.kind != 'a' && len(ev.acks) > 0 {
			// Which of several acknowledgements took effect is not
			// known: one that survived began no earlier than the
			// first to begin, and one returned as soon as the first
			// to return did.
			cmp := func(a, b *crashOp) int { return a.try - b.try }
			if got.kind != 'a' {
				cmp = func(a, b *crashOp) int { return a.ok - b.ok }
			}
			causal.note(slices.MinFunc(ev.acks, cmp), got.kind == 'a', "the acknowledgement of "+id.String())
		}
	}
	return next, probs
}
