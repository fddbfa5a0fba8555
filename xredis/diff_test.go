package xredis_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/xredis"
)

// TestDiffRandom runs the same random operation sequences, valid and not,
// through the Engine interface on the in-process DB (xstream.Local) and
// on each server, and compares every result: values after the
// normalization below, and errors by the sentinels they match. IDs are
// explicit and idle thresholds 0 or far from any real idle time, so that
// no result depends on the clock; idle times and timestamps are left out
// of the comparison. XREDIS_DIFF_SEED replays a seed; XREDIS_DIFF_OPS
// sets the number of operations.
func TestDiffRandom(t *testing.T) {
	seed := uint64(rand.Int64())
	if s := os.Getenv("XREDIS_DIFF_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	ops := 1500
	if testing.Short() {
		ops = 300
	}
	if s := os.Getenv("XREDIS_DIFF_OPS"); s != "" {
		ops, _ = strconv.Atoi(s)
	}
	t.Logf("seed %d (XREDIS_DIFF_SEED=%d to replay)", seed, seed)
	eachKind(t, func(t *testing.T, kind string, e xredis.Engine) {
		k := keys(t)
		d := &differ{
			t:      t,
			kind:   kind,
			local:  xstream.NewDB(),
			remote: e,
			keys:   []string{k("s1"), k("s2"), k("s3")},
			g:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
			lastMs: map[string]int{},
			past:   map[string]bool{},
		}
		d.le = xstream.Local(d.local)
		defer d.le.Close()
		_, d.delEx = e.(xstream.DeleteExEngine)
		_, d.nack = e.(xstream.NackEngine)
		for range ops {
			d.step()
		}
	})
}

type differ struct {
	t      *testing.T
	kind   string
	local  *xstream.DB
	le     xstream.Engine
	remote xredis.Engine
	keys   []string
	g      *rand.Rand
	lastMs map[string]int
	// past holds "stream group" for the groups whose entries-read and lag
	// follow Redis 7.2 in the core, where Redis 7.0 keeps counting: once
	// the stream's first entry passed the group's last delivered ID.
	past  map[string]bool
	delEx bool
	nack  bool
	log   []string
}

// sentinels are the errors compared by class.
var sentinels = []error{
	xstream.ErrInvalidID, xstream.ErrZeroID, xstream.ErrIDTooSmall, xstream.ErrStreamExhausted,
	xstream.ErrNoFields, xstream.ErrTrimConflict, xstream.ErrInvalidArgument, xstream.ErrNoStream,
	xstream.ErrNoGroup, xstream.ErrGroupExists, errors.ErrUnsupported,
}

func errClass(err error) string {
	if err == nil {
		return "ok"
	}
	var out []string
	for _, s := range sentinels {
		if errors.Is(err, s) {
			out = append(out, s.Error())
		}
	}
	if out == nil {
		return "other: " + err.Error()
	}
	return strings.Join(out, " + ")
}

func (d *differ) pick(xs ...string) string { return xs[d.g.IntN(len(xs))] }
func (d *differ) n(k int) int              { return d.g.IntN(k) }
func (d *differ) key() string              { return d.keys[[]int{0, 0, 1, 2}[d.n(4)]] }
func (d *differ) group() string            { return d.pick("g1", "g1", "g2", "g3") }
func (d *differ) consumer() string         { return d.pick("c1", "c2", "c3") }

// id returns an ID near the stream's IDs, sometimes in a bare or bad form.
func (d *differ) id(key string) string {
	ms := d.n(d.lastMs[key] + 3)
	switch d.n(12) {
	case 0:
		return strconv.Itoa(ms)
	case 1:
		return d.pick("0", "0-0", "bad", "18446744073709551615-18446744073709551615", "-1", " 5")
	}
	return strconv.Itoa(ms) + "-" + strconv.Itoa(d.n(3))
}

func (d *differ) ids(key string) []string {
	out := []string{d.id(key)}
	for d.n(3) == 0 {
		out = append(out, d.id(key))
	}
	return out
}

func (d *differ) bound(key string) string {
	switch d.n(6) {
	case 0:
		return "-"
	case 1:
		return "+"
	case 2:
		return "(" + d.id(key)
	}
	return d.id(key)
}

func (d *differ) count(n int) int {
	if d.n(8) == 0 {
		return -1
	}
	return d.n(n)
}

func (d *differ) trim(key string) xstream.TrimArgs {
	var a xstream.TrimArgs
	if d.n(2) == 0 {
		a.Strategy, a.MaxLen = xstream.TrimMaxLen, int64(d.n(120))
		if d.n(20) == 0 {
			a.MaxLen = -1
		}
	} else {
		a.Strategy, a.MinID = xstream.TrimMinID, d.id(key)
	}
	if d.n(3) == 0 {
		a.Approx = true
		if d.n(2) == 0 {
			a.Limit = int64(d.n(250))
		}
	} else if d.n(15) == 0 {
		a.Limit = 5 // without Approx: a conflict
	}
	if d.delEx && d.n(4) == 0 {
		a.Policy = xstream.DeletePolicy(d.n(3))
	}
	if d.n(25) == 0 {
		a = xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 3, MinID: "1"} // conflict
	}
	return a
}

func (d *differ) streamPairs(ids func(string) string) []string {
	out := []string{}
	for range 1 + d.n(3) {
		k := d.key()
		out = append(out, k, ids(k))
	}
	return out
}

// step runs one random operation on both engines and compares.
func (d *differ) step() {
	key := d.key()
	var name string
	var run func(e xstream.Engine) (any, error)
	switch d.n(34) {
	case 0, 1, 2, 3, 4, 5, 6, 7:
		args := xstream.AddArgs{NoMkStream: d.n(10) == 0}
		if d.n(5) == 0 {
			args.Trim = d.trim(key)
		}
		ms := d.lastMs[key]
		switch d.n(10) {
		case 0:
			args.ID = strconv.Itoa(ms) + "-*"
		case 1:
			args.ID = d.id(key)
		default:
			ms += d.n(3)
			args.ID = strconv.Itoa(ms) + "-" + strconv.Itoa(d.n(3))
			d.lastMs[key] = ms
		}
		var fields []xstream.Field
		nf := 1 + d.n(3)
		if d.n(15) == 0 {
			nf = 0
		}
		for range nf {
			fields = append(fields, xstream.Field{Name: d.pick("f", "temp", "id", ""), Value: strconv.Itoa(d.n(1000))})
		}
		name = fmt.Sprintf("Add %s %+v %v", key, args, fields)
		run = func(e xstream.Engine) (any, error) { return e.Add(bg(), key, args, fields...) }
	case 8, 9:
		start, end, count := d.bound(key), d.bound(key), d.count(12)
		if d.n(2) == 0 {
			name = fmt.Sprintf("Range %s %s %s %d", key, start, end, count)
			run = func(e xstream.Engine) (any, error) { return e.Range(bg(), key, start, end, count) }
		} else {
			start, end = d.pick("-", start), d.pick("+", end)
			name = fmt.Sprintf("RevRange %s %s %s %d", key, end, start, count)
			run = func(e xstream.Engine) (any, error) { return e.RevRange(bg(), key, end, start, count) }
		}
	case 10:
		name = "Len " + key
		run = func(e xstream.Engine) (any, error) { return e.Len(bg(), key) }
	case 11:
		ids := d.ids(key)
		name = fmt.Sprintf("Delete %s %v", key, ids)
		run = func(e xstream.Engine) (any, error) { return e.Delete(bg(), key, ids...) }
	case 12:
		a := d.trim(key)
		name = fmt.Sprintf("Trim %s %+v", key, a)
		run = func(e xstream.Engine) (any, error) { return e.Trim(bg(), key, a) }
	case 13:
		group, start := d.group(), d.pick("$", "0", d.id(key))
		opts := xstream.GroupOptions{MkStream: d.n(3) == 0}
		if d.n(4) == 0 {
			v := int64(d.n(20) - 2)
			opts.EntriesRead = &v
		}
		name = fmt.Sprintf("CreateGroup %s %s %s %+v", key, group, start, opts)
		run = func(e xstream.Engine) (any, error) {
			err := e.CreateGroup(bg(), key, group, start, opts)
			if err == nil {
				// Every consumer exists from the start, so that no call
				// differs by the consumers it creates (Redis 7.0's
				// XCLAIM creates fewer than 7.2's).
				for _, c := range []string{"c1", "c2", "c3"} {
					e.CreateConsumer(bg(), key, group, c)
				}
			}
			return nil, err
		}
	case 14:
		group := d.group()
		switch d.n(4) {
		case 0:
			id := d.pick("$", "0", d.id(key))
			name = fmt.Sprintf("SetGroupID %s %s %s", key, group, id)
			run = func(e xstream.Engine) (any, error) {
				return nil, e.SetGroupID(bg(), key, group, id, xstream.GroupOptions{})
			}
		case 1:
			name = fmt.Sprintf("DestroyGroup %s %s", key, group)
			run = func(e xstream.Engine) (any, error) { return e.DestroyGroup(bg(), key, group) }
		case 2:
			c := d.consumer()
			name = fmt.Sprintf("CreateConsumer %s %s %s", key, group, c)
			run = func(e xstream.Engine) (any, error) { return e.CreateConsumer(bg(), key, group, c) }
		default:
			c := d.consumer()
			name = fmt.Sprintf("DeleteConsumer %s %s %s", key, group, c)
			run = func(e xstream.Engine) (any, error) {
				n, err := e.DeleteConsumer(bg(), key, group, c)
				if err == nil {
					e.CreateConsumer(bg(), key, group, c)
				}
				return n, err
			}
		}
	case 15, 16, 17, 18:
		group, c := d.group(), d.consumer()
		args := xstream.ReadGroupArgs{Count: d.count(6), NoAck: d.n(8) == 0}
		pairs := d.streamPairs(func(k string) string {
			if d.n(4) == 0 {
				return d.pick(">", "0", d.id(k), "$")
			}
			return ">"
		})
		name = fmt.Sprintf("ReadGroup %s %s %+v %v", group, c, args, pairs)
		run = func(e xstream.Engine) (any, error) { return e.ReadGroup(bg(), group, c, args, pairs...) }
	case 19:
		args := xstream.ReadArgs{Count: d.count(5)}
		pairs := d.streamPairs(func(k string) string { return d.pick(d.id(k), "0", "$", "+") })
		if d.n(20) == 0 {
			pairs = pairs[:1]
		}
		name = fmt.Sprintf("Read %+v %v", args, pairs)
		run = func(e xstream.Engine) (any, error) { return e.Read(bg(), args, pairs...) }
	case 20, 21:
		group, ids := d.group(), d.ids(key)
		name = fmt.Sprintf("Ack %s %s %v", key, group, ids)
		run = func(e xstream.Engine) (any, error) { return e.Ack(bg(), key, group, ids...) }
	case 22:
		group := d.group()
		if d.n(3) == 0 {
			name = fmt.Sprintf("Pending %s %s", key, group)
			run = func(e xstream.Engine) (any, error) { return e.Pending(bg(), key, group) }
			break
		}
		a := xstream.PendingArgs{Start: d.pick("", d.bound(key)), End: d.pick("", "+", d.bound(key)), Count: d.count(12)}
		if d.n(3) == 0 {
			a.MinIdle = []time.Duration{0, 50000 * time.Second, 1000 * time.Hour}[d.n(3)]
		}
		if d.n(3) == 0 {
			a.Consumer = d.consumer()
		}
		name = fmt.Sprintf("PendingRange %s %s %+v", key, group, a)
		run = func(e xstream.Engine) (any, error) { return e.PendingRange(bg(), key, group, a) }
	case 23, 24:
		group, c, ids := d.group(), d.consumer(), d.ids(key)
		minIdle := []time.Duration{0, 0, 1000 * time.Hour}[d.n(3)]
		var a xstream.ClaimArgs
		for range d.n(3) {
			switch d.n(5) {
			case 0:
				a.Idle = 100000 * time.Second
			case 1:
				v := int64(d.n(5))
				a.RetryCount = &v
			case 2:
				a.Force = true
			case 3:
				a.JustID = true
			case 4:
				a.LastID = d.id(key)
			}
		}
		name = fmt.Sprintf("Claim %s %s %s %v %v %+v", key, group, c, minIdle, ids, a)
		run = func(e xstream.Engine) (any, error) { return e.Claim(bg(), key, group, c, minIdle, ids, a) }
	case 25:
		group, c := d.group(), d.consumer()
		minIdle := []time.Duration{0, 0, 1000 * time.Hour}[d.n(3)]
		start := d.pick("0", "-", d.bound(key))
		a := xstream.AutoClaimArgs{JustID: d.n(3) == 0}
		if d.n(2) == 0 {
			a.Count = d.count(6)
		}
		name = fmt.Sprintf("AutoClaim %s %s %s %v %s %+v", key, group, c, minIdle, start, a)
		run = func(e xstream.Engine) (any, error) { return e.AutoClaim(bg(), key, group, c, minIdle, start, a) }
	case 26, 27:
		switch d.n(4) {
		case 0:
			name = "Info " + key
			run = func(e xstream.Engine) (any, error) { return e.Info(bg(), key) }
		case 1:
			count := d.count(5)
			name = fmt.Sprintf("InfoFull %s %d", key, count)
			run = func(e xstream.Engine) (any, error) { return e.InfoFull(bg(), key, count) }
		case 2:
			name = "Groups " + key
			run = func(e xstream.Engine) (any, error) { return e.Groups(bg(), key) }
		default:
			group := d.group()
			name = fmt.Sprintf("Consumers %s %s", key, group)
			run = func(e xstream.Engine) (any, error) { return e.Consumers(bg(), key, group) }
		}
	case 28:
		// Not below the stream's last ID: the core refuses an ID below an
		// entry deleted from the end, which Redis 7.0 allows.
		last := xstream.ID{}
		if s, ok := d.local.Lookup(key); ok {
			last = s.LastID()
		}
		id := xstream.MaxID()
		if last.Ms < 1<<62 {
			id = xstream.ID{Ms: last.Ms + uint64(d.n(3)), Seq: uint64(d.n(3))}
			if id.Less(last) {
				id = last
			}
			d.lastMs[key] = max(d.lastMs[key], int(id.Ms))
		}
		a := xstream.SetIDArgs{LastID: id.String(), EntriesAdded: -1}
		if d.n(3) == 0 {
			a.EntriesAdded = int64(d.n(200))
		}
		if d.n(3) == 0 {
			a.MaxDeletedID = d.id(key)
		}
		name = fmt.Sprintf("SetID %s %+v", key, a)
		run = func(e xstream.Engine) (any, error) { return nil, e.SetID(bg(), key, a) }
	case 29:
		if d.n(4) == 0 {
			name = "Remove " + key
			run = func(e xstream.Engine) (any, error) { return e.Remove(bg(), key) }
		} else {
			name = "Len " + key
			run = func(e xstream.Engine) (any, error) { return e.Len(bg(), key) }
		}
	case 30, 31:
		if !d.delEx {
			return
		}
		policy, ids := xstream.DeletePolicy(d.n(3)), d.ids(key)
		if d.n(2) == 0 {
			name = fmt.Sprintf("DeleteEx %s %v %v", key, policy, ids)
			run = func(e xstream.Engine) (any, error) { return xstream.DeleteEx(bg(), e, key, policy, ids...) }
		} else {
			group := d.group()
			name = fmt.Sprintf("AckDel %s %s %v %v", key, group, policy, ids)
			run = func(e xstream.Engine) (any, error) { return xstream.AckDel(bg(), e, key, group, policy, ids...) }
		}
	default:
		if !d.nack {
			return
		}
		group, mode, ids := d.group(), xstream.NackMode(d.n(4)), d.ids(key)
		var a xstream.NackArgs
		if d.n(3) == 0 {
			v := int64(d.n(4))
			a.RetryCount = &v
		}
		a.Force = d.n(3) == 0
		name = fmt.Sprintf("Nack %s %s %v %v %+v", key, group, mode, ids, a)
		run = func(e xstream.Engine) (any, error) { return xstream.Nack(bg(), e, key, group, mode, ids, a) }
	}
	d.log = append(d.log, name)
	want, werr := run(d.le)

	got, gerr := run(d.remote)
	d.trackPast()
	want, got = d.normalize(key, want), d.normalize(key, got)
	if wc, gc := errClass(werr), errClass(gerr); wc != gc || !reflect.DeepEqual(want, got) {
		for _, l := range d.log[max(0, len(d.log)-40):] {
			d.t.Logf("  %s", l)
		}
		d.t.Fatalf("%s:\n  local:  %s %#v\n  remote: %s %#v\n  (errors: %v / %v)", name, wc, want, gc, got, werr, gerr)
	}
}

// trackPast notes the groups whose stream's first entry passed their
// last delivered ID, from the local DB, and forgets destroyed groups.
func (d *differ) trackPast() {
	for k := range d.past {
		key, group, _ := strings.Cut(k, " ")
		gs, err := d.le.Groups(bg(), key)
		found := false
		for _, g := range gs {
			found = found || g.Name == group
		}
		if err != nil || !found {
			delete(d.past, k)
		}
	}
	for _, key := range d.keys {
		info, err := d.le.Info(bg(), key)
		if err != nil || info.Length == 0 {
			continue
		}
		gs, _ := d.le.Groups(bg(), key)
		for _, g := range gs {
			if g.LastDeliveredID.Less(info.RecordedFirstEntryID) {
				d.past[key+" "+g.Name] = true
			}
		}
	}
}

// normalize makes results comparable: no empty slices (nil instead), no
// idle times or timestamps, and no entries-read or lag of the groups
// noted by trackPast.
func (d *differ) normalize(key string, v any) any {
	switch v := v.(type) {
	case []xstream.Entry:
		return normEntries(v)
	case []xstream.StreamEntries:
		if len(v) == 0 {
			return nil
		}
		for i := range v {
			v[i].Entries = normEntries(v[i].Entries)
		}
		return v
	case xstream.AutoClaimResult:
		v.Entries = normEntries(v.Entries)
		if len(v.Deleted) == 0 {
			v.Deleted = nil
		}
		return v
	case []xstream.PendingEntry:
		return normPEL(v)
	case xstream.PendingSummary:
		if len(v.Consumers) == 0 {
			v.Consumers = nil
		}
		return v
	case []xstream.ConsumerInfo:
		if len(v) == 0 {
			return nil
		}
		for i := range v {
			v[i] = xstream.ConsumerInfo{Name: v[i].Name, Pending: v[i].Pending}
		}
		return v
	case []xstream.GroupInfo:
		if len(v) == 0 {
			return nil
		}
		d.hideCounters(key, v)
		return v
	case []xstream.DeleteResult:
		if len(v) == 0 {
			return nil
		}
		return v
	case xstream.StreamInfo:
		if d.kind == "valkey" {
			// Valkey 8 keeps a listpack node that Redis 7.0 and the core
			// free: a detail of the storage layout.
			v.RadixTreeKeys = 0
		}
		v.Entries = normEntries(v.Entries)
		if len(v.GroupDetails) == 0 {
			v.GroupDetails = nil
		}
		for i := range v.GroupDetails {
			g := &v.GroupDetails[i]
			gs := []xstream.GroupInfo{g.GroupInfo}
			d.hideCounters(key, gs)
			g.GroupInfo = gs[0]
			g.PEL = normPEL(g.PEL)
			if len(g.Consumers) == 0 {
				g.Consumers = nil
			}
			for j := range g.Consumers {
				c := &g.Consumers[j]
				c.ConsumerInfo = xstream.ConsumerInfo{Name: c.Name, Pending: c.Pending}
				c.SeenTime, c.ActiveTime = time.Time{}, time.Time{}
				c.PEL = normPEL(c.PEL)
			}
		}
		return v
	}
	return v
}

func (d *differ) hideCounters(key string, gs []xstream.GroupInfo) {
	for i := range gs {
		if d.past[key+" "+gs[i].Name] {
			gs[i].EntriesRead, gs[i].EntriesReadKnown, gs[i].Lag, gs[i].LagKnown = 0, false, 0, false
		}
	}
}

func normEntries(es []xstream.Entry) []xstream.Entry {
	if len(es) == 0 {
		return nil
	}
	for i := range es {
		if len(es[i].Fields) == 0 {
			es[i].Fields = nil
		}
	}
	return es
}

func normPEL(ps []xstream.PendingEntry) []xstream.PendingEntry {
	if len(ps) == 0 {
		return nil
	}
	for i := range ps {
		if ps[i].Idle != xstream.NackIdle {
			ps[i].Idle = 0
		}
	}
	return ps
}
