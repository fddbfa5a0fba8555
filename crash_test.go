package xstream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Crash tests. The test binary runs itself as a child process
// (TestCrashChild) that works on a durable DB from several goroutines and
// prints a line for each call it makes and each call that returned. The
// parent (TestCrashAlways, TestCrashEverySecond) kills it with SIGKILL
// after a random number of lines, opens the DB and checks it against
// what the child reported; then the next round runs a new child on the
// same directory. See crashCheckStream for the rules checked.
//
// The protocol: every line starts with "XS ", and the child counts them.
//
//	OPEN                     before Open
//	READY                    after the streams and groups exist and are synced
//	TRY <worker> <call...>   printed just before a call
//	OK <worker> <result...>  printed as soon as it returned
//	FLUSHED <n>              DB.Flush, called after the n-th line, returned
//	SNAP | SNAPFAIL <error>  a snapshot was taken, or failed
//	ERR <message>            the child found something wrong and exits
//
// with the calls
//
//	TRY pN ADD <stream> <seq>             OK pN ADD <stream> <seq> <id>
//	TRY cN READ <stream>...               OK cN READ [<stream>=<id>,<id>...]...
//	TRY cN HIST <stream>                  OK cN HIST <stream> [<id>...]
//	TRY k CLAIM <stream>                  OK k CLAIM <stream> [<id>...]
//	TRY <worker> ACK <stream> <id>...     OK <worker> ACK <stream> <n>
//
// A worker makes one call at a time: a TRY without its OK at the kill is
// the call the worker was in, which may or may not have taken effect.

const (
	crashDirEnv   = "XSTREAM_CRASH_DIR"   // the child's DB (set only in the child)
	crashSyncEnv  = "XSTREAM_CRASH_SYNC"  // "always" or "everysec"
	crashRoundEnv = "XSTREAM_CRASH_ROUND" // the round, part of every entry's origin
	crashSeedEnv  = "XSTREAM_CRASH_SEED"  // the seed (also read by the parent, to replay a run)
	crashSnapEnv  = "XSTREAM_CRASH_SNAP"  // non-empty: snapshots while writing
	crashKeepEnv  = "XSTREAM_CRASH_KEEP"  // non-empty: the parent keeps its directory
)

const (
	crashGroup     = "g"
	crashClaimer   = "k"
	crashProducers = 4
	crashMinIdle   = 10 * time.Millisecond
)

var (
	crashStreams   = []string{"s0", "s1", "s2"}
	crashConsumers = []string{"c0", "c1"}
)

// crashFields returns the fields of the seq-th entry that producer adds
// in round: a function of those and the seed, so that the parent knows
// them. Field "o" holds the origin, "round/producer/seq". The shapes
// cover the open block's names (the common one), repeated names, empty
// and binary names and values, many fields and big values.
func crashFields(seed uint64, round, producer, seq int) []Field {
	r := rand.New(rand.NewPCG(seed, uint64(round)<<48|uint64(producer)<<40|uint64(seq)))
	o := Field{"o", fmt.Sprintf("%d/%d/%d", round, producer, seq)}
	bin := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return string(b)
	}
	switch k := r.IntN(100); {
	case k < 40:
		return []Field{o, {"sensor-id", strconv.Itoa(1000 + r.IntN(8))}, {"temperature", fmt.Sprintf("%d.%d", r.IntN(40), r.IntN(10))}}
	case k < 55:
		return []Field{{"x", bin(r.IntN(4))}, o, {"x", "1"}, {"x", bin(3)}}
	case k < 70:
		return []Field{o, {"blob", bin(r.IntN(300))}}
	case k < 78:
		return []Field{{"", ""}, o, {"empty", ""}}
	case k < 90:
		fs := []Field{o}
		for i := range 8 + r.IntN(24) {
			fs = append(fs, Field{"f" + strconv.Itoa(i), bin(r.IntN(12))})
		}
		return fs
	case k < 99:
		return []Field{{"\x00" + bin(1+r.IntN(8)), bin(r.IntN(20))}, o, {"\xff\n", "\r\n"}}
	default: // larger than a write of the log's buffer often is
		return []Field{o, {"big", bin(2<<10 + r.IntN(14<<10))}}
	}
}

// crashOrigin decodes the origin of an entry that crashFields made.
func crashOrigin(fs []Field) (round, producer, seq int, ok bool) {
	for _, f := range fs {
		if f.Name != "o" {
			continue
		}
		parts := strings.Split(f.Value, "/")
		if len(parts) != 3 {
			return 0, 0, 0, false
		}
		var err [3]error
		round, err[0] = strconv.Atoi(parts[0])
		producer, err[1] = strconv.Atoi(parts[1])
		seq, err[2] = strconv.Atoi(parts[2])
		return round, producer, seq, err[0] == nil && err[1] == nil && err[2] == nil
	}
	return 0, 0, 0, false
}

// crashWant returns the fields an entry with fields fs should have, from
// its origin.
func crashWant(seed uint64, fs []Field) ([]Field, bool) {
	round, p, seq, ok := crashOrigin(fs)
	if !ok {
		return nil, false
	}
	return crashFields(seed, round, p, seq), true
}

func crashRand(seed uint64, round, worker int) *rand.Rand {
	return rand.New(rand.NewPCG(seed^0x9e3779b97f4a7c15, uint64(round)<<16|uint64(worker)))
}

func crashIDList(es []Entry) string {
	var b strings.Builder
	for _, e := range es {
		b.WriteByte(' ')
		b.WriteString(e.ID.String())
	}
	return b.String()
}

// The child.

// crashOut prints the child's lines, each with one write, in the order
// they are counted.
type crashOut struct {
	mu sync.Mutex
	w  *bufio.Writer
	n  int
}

func (o *crashOut) printf(format string, args ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.w.WriteString("XS ")
	fmt.Fprintf(o.w, format, args...)
	o.w.WriteByte('\n')
	if o.w.Flush() != nil {
		os.Exit(4) // the parent is gone
	}
	o.n++
}

func (o *crashOut) lines() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n
}

func (o *crashOut) fail(format string, args ...any) {
	o.printf("ERR "+format, args...)
	os.Exit(3)
}

// TestCrashChild is the child of the crash tests; it runs only when
// XSTREAM_CRASH_DIR is set, and never returns: it works until killed.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("the child process of TestCrashAlways and TestCrashEverySecond")
	}
	crashChild(dir)
}

func crashChild(dir string) {
	policy := SyncEverySecond
	if os.Getenv(crashSyncEnv) == "always" {
		policy = SyncAlways
	}
	round, _ := strconv.Atoi(os.Getenv(crashRoundEnv))
	seed, _ := strconv.ParseUint(os.Getenv(crashSeedEnv), 10, 64)
	snaps := os.Getenv(crashSnapEnv) != ""
	out := &crashOut{w: bufio.NewWriter(os.Stdout)}
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0) // the parent closed stdin, or went away
	}()
	time.AfterFunc(time.Minute, func() { out.fail("still running after a minute") })

	out.printf("OPEN")
	auto := int64(-1)
	if snaps {
		auto = 256 << 10
	}
	db, err := Open(dir, WithSync(policy), WithAutoSnapshot(auto))
	if err != nil {
		out.fail("Open: %q", err)
	}
	for _, s := range crashStreams {
		err := db.CreateGroup(s, crashGroup, "0", GroupOptions{MkStream: true})
		if err != nil && !errors.Is(err, ErrGroupExists) {
			out.fail("CreateGroup %s: %q", s, err)
		}
	}
	if err := db.Sync(); err != nil {
		out.fail("Sync: %q", err)
	}
	out.printf("READY")

	for p := range crashProducers {
		go crashProducer(db, out, policy, seed, round, p)
	}
	for i := range crashConsumers {
		go crashConsumer(db, out, seed, round, i)
	}
	go crashClaim(db, out, seed, round)
	if policy == SyncEverySecond {
		go func() {
			r := crashRand(seed, round, 40)
			for {
				time.Sleep(time.Duration(500+r.IntN(3000)) * time.Microsecond)
				n := out.lines()
				if err := db.Flush(); err != nil {
					out.fail("Flush: %q", err)
				}
				out.printf("FLUSHED %d", n)
			}
		}()
	}
	if snaps {
		go func() {
			r := crashRand(seed, round, 41)
			for {
				if err := db.Snapshot(); err != nil {
					out.printf("SNAPFAIL %q", err)
				} else {
					out.printf("SNAP")
				}
				time.Sleep(time.Duration(r.IntN(4000)) * time.Microsecond)
			}
		}()
	}
	select {}
}

func crashProducer(db *DB, out *crashOut, policy SyncPolicy, seed uint64, round, p int) {
	r := crashRand(seed, round, 10+p)
	w := "p" + strconv.Itoa(p)
	pick := []int{0, 0, 0, 1, 1, 2}
	for seq := 1; ; seq++ {
		s := crashStreams[pick[r.IntN(len(pick))]]
		fs := crashFields(seed, round, p, seq)
		out.printf("TRY %s ADD %s %d", w, s, seq)
		id, err := db.Add(s, AddArgs{}, fs...)
		if err != nil {
			out.fail("%s: Add to %s: %q", w, s, err)
		}
		out.printf("OK %s ADD %s %d %s", w, s, seq, id)
		if policy != SyncAlways && r.IntN(2) == 0 {
			// Let the consumers keep up a little.
			time.Sleep(time.Duration(r.IntN(200)) * time.Microsecond)
		}
	}
}

// crashCheckEntries fails the child when an entry it was handed does not
// have the fields of its origin.
func crashCheckEntries(out *crashOut, seed uint64, w, s string, es []Entry) {
	for _, e := range es {
		if want, ok := crashWant(seed, e.Fields); !ok || !slices.Equal(want, e.Fields) {
			out.fail("%s: entry %s of %s has fields %q", w, e.ID, s, e.Fields)
		}
	}
}

// crashAckSome acknowledges about pct percent of es, in their order or
// shuffled.
func crashAckSome(db *DB, out *crashOut, r *rand.Rand, w, s string, es []Entry, pct int) {
	var ids []ID
	for _, e := range es {
		if r.IntN(100) < pct {
			ids = append(ids, e.ID)
		}
	}
	if len(ids) == 0 {
		return
	}
	if r.IntN(3) == 0 {
		r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	}
	var b strings.Builder
	for _, id := range ids {
		b.WriteByte(' ')
		b.WriteString(id.String())
	}
	st, _ := db.Lookup(s)
	out.printf("TRY %s ACK %s%s", w, s, b.String())
	n, err := st.AckIDs(crashGroup, ids...)
	if err != nil {
		out.fail("%s: Ack on %s: %q", w, s, err)
	}
	out.printf("OK %s ACK %s %d", w, s, n)
}

// crashConsumer reads new entries with ReadGroup ">" (one or two streams
// at once, sometimes blocking), sometimes its history, and acknowledges
// three quarters of what it gets.
func crashConsumer(db *DB, out *crashOut, seed uint64, round, i int) {
	c := crashConsumers[i]
	r := crashRand(seed, round, 20+i)
	ctx := context.Background()
	for {
		if r.IntN(6) == 0 {
			s := crashStreams[r.IntN(len(crashStreams))]
			st, _ := db.Lookup(s)
			out.printf("TRY %s HIST %s", c, s)
			es, err := st.ReadGroup(ctx, crashGroup, c, "0", ReadGroupArgs{Count: 1 + r.IntN(4)})
			if err != nil {
				out.fail("%s: ReadGroup 0 on %s: %q", c, s, err)
			}
			crashCheckEntries(out, seed, c, s, es)
			out.printf("OK %s HIST %s%s", c, s, crashIDList(es))
			crashAckSome(db, out, r, c, s, es, 75)
			continue
		}
		perm := r.Perm(len(crashStreams))[:1+r.IntN(2)]
		var names, args []string
		for _, j := range perm {
			names = append(names, crashStreams[j])
			args = append(args, crashStreams[j], ">")
		}
		var block time.Duration
		if r.IntN(4) == 0 {
			block = 5 * time.Millisecond
		}
		out.printf("TRY %s READ %s", c, strings.Join(names, " "))
		res, err := db.ReadGroup(ctx, crashGroup, c, ReadGroupArgs{Count: 1 + r.IntN(8), Block: block}, args...)
		if err != nil {
			out.fail("%s: ReadGroup > on %v: %q", c, names, err)
		}
		var b strings.Builder
		for _, se := range res {
			crashCheckEntries(out, seed, c, se.Stream, se.Entries)
			fmt.Fprintf(&b, " %s=", se.Stream)
			for j, e := range se.Entries {
				if j > 0 {
					b.WriteByte(',')
				}
				b.WriteString(e.ID.String())
			}
		}
		out.printf("OK %s READ%s", c, b.String())
		for _, se := range res {
			crashAckSome(db, out, r, c, se.Stream, se.Entries, 75)
		}
	}
}

// crashClaim takes over entries idle for crashMinIdle, with AutoClaim or
// with PendingRange and Claim, and acknowledges most of them.
func crashClaim(db *DB, out *crashOut, seed uint64, round int) {
	r := crashRand(seed, round, 30)
	k := crashClaimer
	for {
		time.Sleep(time.Duration(r.IntN(1000)) * time.Microsecond)
		s := crashStreams[r.IntN(len(crashStreams))]
		st, _ := db.Lookup(s)
		out.printf("TRY %s CLAIM %s", k, s)
		var got []Entry
		if r.IntN(3) == 0 {
			rows, err := st.PendingRange(crashGroup, PendingArgs{Count: 4, MinIdle: crashMinIdle})
			if err != nil {
				out.fail("PendingRange on %s: %q", s, err)
			}
			if len(rows) > 0 {
				ids := make([]string, len(rows))
				for i, row := range rows {
					ids[i] = row.ID.String()
				}
				if got, err = st.Claim(crashGroup, k, crashMinIdle, ids, ClaimArgs{}); err != nil {
					out.fail("Claim on %s: %q", s, err)
				}
			}
		} else {
			res, err := st.AutoClaim(crashGroup, k, crashMinIdle, "-", AutoClaimArgs{Count: 4})
			if err != nil {
				out.fail("AutoClaim on %s: %q", s, err)
			}
			if len(res.Deleted) > 0 {
				out.fail("AutoClaim on %s: deleted %v, yet nothing is ever deleted", s, res.Deleted)
			}
			got = res.Entries
		}
		crashCheckEntries(out, seed, k, s, got)
		out.printf("OK %s CLAIM %s%s", k, s, crashIDList(got))
		crashAckSome(db, out, r, k, s, got, 80)
	}
}
