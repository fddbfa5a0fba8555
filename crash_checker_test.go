package xstream

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCrashCheckerFindsDamage shows that the check of the crash tests is
// not one that cannot fail: it runs the child's calls in this process,
// writing the lines the child would, and checks the DB against those
// lines and against lines that report what did not happen.
func TestCrashCheckerFindsDamage(t *testing.T) {
	const seed = 42
	dir := t.TempDir()
	clk := newTestClock(1_700_000_000_000)
	db, err := Open(dir, WithClock(clk.now), WithSync(SyncAlways))
	require.NoError(t, err)
	ctx := context.Background()
	var lines []string
	say := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }

	say("OPEN")
	for _, s := range crashStreams {
		require.NoError(t, db.CreateGroup(s, crashGroup, "0", GroupOptions{MkStream: true}))
	}
	say("READY")
	ready := len(lines)
	var a []ID
	for seq := 1; seq <= 6; seq++ {
		say("TRY p0 ADD s0 %d", seq)
		id, err := db.Add("s0", AddArgs{}, crashFields(seed, 0, 0, seq)...)
		require.NoError(t, err)
		say("OK p0 ADD s0 %d %s", seq, id)
		a = append(a, id)
	}
	say("TRY c0 READ s0")
	res, err := db.ReadGroup(ctx, crashGroup, "c0", ReadGroupArgs{Count: 4}, "s0", ">")
	require.NoError(t, err)
	require.Equal(t, a[:4], idsOf(res[0].Entries))
	say("OK c0 READ s0=%s,%s,%s,%s", a[0], a[1], a[2], a[3])
	s0, _ := db.Lookup("s0")
	say("TRY c0 ACK s0 %s", a[0])
	_, err = s0.AckIDs(crashGroup, a[0])
	require.NoError(t, err)
	say("OK c0 ACK s0 1")
	clk.advance(time.Second)
	say("TRY k CLAIM s0")
	cl, err := s0.AutoClaim(crashGroup, crashClaimer, crashMinIdle, "-", AutoClaimArgs{Count: 1})
	require.NoError(t, err)
	require.Equal(t, a[1:2], idsOf(cl.Entries))
	say("OK k CLAIM s0 %s", a[1])
	say("TRY c0 HIST s0")
	es, err := s0.ReadGroup(ctx, crashGroup, "c0", "0", ReadGroupArgs{})
	require.NoError(t, err)
	require.Equal(t, a[2:4], idsOf(es))
	say("OK c0 HIST s0 %s %s", a[2], a[3])
	// In flight at the kill: an add and a read that took effect.
	say("TRY p1 ADD s1 1")
	b1, err := db.Add("s1", AddArgs{}, crashFields(seed, 0, 1, 1)...)
	require.NoError(t, err)
	say("TRY c1 READ s0")
	res, err = db.ReadGroup(ctx, crashGroup, "c1", ReadGroupArgs{Count: 1}, "s0", ">")
	require.NoError(t, err)
	require.Equal(t, a[4:5], idsOf(res[0].Entries))
	require.NoError(t, db.Close())
	crashUntrack(db)

	check := func(policy SyncPolicy, lines []string) []string {
		t.Helper()
		rd, err := parseCrashLines(lines, policy)
		if err != nil {
			return []string{err.Error()}
		}
		return crashVerify(t, dir, policy, newCrashModel(seed), rd, 0, false).probs
	}
	require.Empty(t, check(SyncAlways, lines), "the true report")
	require.Empty(t, check(SyncEverySecond, lines), "the true report")
	flushed := append(slices.Clone(lines), fmt.Sprintf("FLUSHED %d", len(lines)))
	require.Empty(t, check(SyncEverySecond, flushed), "the true report, flushed")

	with := func(extra ...string) []string { return append(slices.Clone(lines), extra...) }
	without := func(prefix string) []string {
		return slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return strings.HasPrefix(l, prefix) })
	}
	flush := func(ls []string) []string { return append(ls, fmt.Sprintf("FLUSHED %d", len(ls))) }
	damage := []struct {
		name   string
		policy SyncPolicy
		lines  []string
		want   string
	}{
		{"an acknowledged add that is not there", SyncAlways,
			with("TRY p2 ADD s2 1", "OK p2 ADD s2 1 1800000000000-0"), "acknowledged entry 1800000000000-0"},
		{"a flushed add that is not there", SyncEverySecond,
			flush(with("TRY p2 ADD s2 1", "OK p2 ADD s2 1 1800000000000-0")), "acknowledged entry 1800000000000-0"},
		{"a hole", SyncEverySecond,
			with("TRY p2 ADD s0 1", "OK p2 ADD s0 1 1-1"), "but the later"},
		{"an entry no call added", SyncAlways,
			without("TRY p1 ADD"), "no add of it was in flight"},
		{"an entry with other fields", SyncAlways,
			append(without("TRY p1 ADD"), "TRY p3 ADD s1 7", "OK p3 ADD s1 7 "+b1.String()), "p3 ADD (lines 23-24) gave"},
		{"an add acknowledged twice", SyncAlways,
			slices.Concat(lines[:ready], []string{"TRY p3 ADD s0 1", "OK p3 ADD s0 1 " + a[0].String()}, lines[ready:]), "a second add"},
		{"an acknowledgement that does not hold", SyncAlways,
			with(fmt.Sprintf("TRY c0 ACK s0 %s", a[2]), "OK c0 ACK s0 1"), "entry " + a[2].String() + " is pending to c0"},
		{"a claim that does not hold", SyncAlways,
			with("TRY k CLAIM s0", fmt.Sprintf("OK k CLAIM s0 %s", a[3])), "entry " + a[3].String() + " is pending to c0"},
		{"a claim of an entry never delivered", SyncAlways,
			append(without("TRY c1 READ"), "TRY k CLAIM s0", fmt.Sprintf("OK k CLAIM s0 %s", a[5])), "do not fit together"},
		{"a delivery no call made", SyncAlways,
			without("TRY c1 READ"), "entry " + a[4].String() + " is pending to c1"},
		{"a delivery that did not hold", SyncAlways,
			with(fmt.Sprintf("OK c1 READ s0=%s,%s", a[4], a[5])), "entry " + a[5].String() + " is not delivered"},
		{"a flushed delivery that did not hold", SyncEverySecond,
			flush(with(fmt.Sprintf("OK c1 READ s0=%s,%s", a[4], a[5]))), "entry " + a[5].String() + " is not delivered"},
		{"a delivery made twice", SyncAlways,
			with("TRY c0 READ s0", fmt.Sprintf("OK c0 READ s0=%s", a[2])), "delivered by 2 reads"},
		{"a lost add before adds that survived", SyncEverySecond,
			slices.Concat(lines[:ready], []string{"TRY p2 ADD s2 1", "OK p2 ADD s2 1 1800000000000-0"}, lines[ready:]),
			"was lost, though it returned before"},
	}
	for _, d := range damage {
		probs := check(d.policy, d.lines)
		if !slices.ContainsFunc(probs, func(p string) bool { return strings.Contains(p, d.want) }) {
			t.Errorf("%s (%s): want a problem with %q, got %q", d.name, d.policy, d.want, probs)
		} else {
			t.Logf("%s (%s): %s", d.name, d.policy, probs[0])
		}
	}
}

func idsOf(es []Entry) []ID {
	out := make([]ID, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}
