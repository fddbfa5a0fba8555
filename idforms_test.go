package xstream

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// idFormFixture returns a stream of entries 1-0 … 5-0 with groups "g"
// and "h" from 0; consumer "c" of g and "d" of h hold 1 … 3, delivered a
// second before the clock's time, and have acknowledged 4.
func idFormFixture(t *testing.T) *Stream {
	t.Helper()
	clk := newTestClock(1_700_000_000_000)
	s := gtStream(t, clk, 5)
	ctx := context.Background()
	for g, c := range map[string]string{"g": "c", "h": "d"} {
		require.NoError(t, s.CreateGroup(g, "0", GroupOptions{}))
		_, err := s.ReadGroup(ctx, g, c, ">", ReadGroupArgs{Count: 4})
		require.NoError(t, err)
		_, err = s.AckIDs(g, gtID(4))
		require.NoError(t, err)
	}
	clk.advance(time.Second)
	return s
}

// idFormCase calls one ID-list operation twice: with strings and with the
// same IDs parsed.
type idFormCase struct {
	name  string
	str   func(s *Stream) (any, error)
	typed func(s *Stream) (any, error)
}

func idFormCases() []idFormCase {
	strs := []string{"1", "3-0", "3", "4-0", "9"}
	ids := []ID{gtID(1), gtID(3), gtID(3), gtID(4), gtID(9)}
	unsorted := []string{"4", "1", "2-0"}
	unsortedIDs := []ID{gtID(4), gtID(1), gtID(2)}
	var cases []idFormCase
	add := func(name string, str, typed func(s *Stream) (any, error)) {
		cases = append(cases, idFormCase{name, str, typed})
	}
	add("Ack",
		func(s *Stream) (any, error) { return s.Ack("g", strs...) },
		func(s *Stream) (any, error) { return s.AckIDs("g", ids...) })
	add("Ack unsorted",
		func(s *Stream) (any, error) { return s.Ack("g", unsorted...) },
		func(s *Stream) (any, error) { return s.AckIDs("g", unsortedIDs...) })
	add("Ack none",
		func(s *Stream) (any, error) { return s.Ack("g") },
		func(s *Stream) (any, error) { return s.AckIDs("g") })
	add("Delete",
		func(s *Stream) (any, error) { return s.Delete(strs...) },
		func(s *Stream) (any, error) { return s.DeleteIDs(ids...) })
	add("Delete unsorted",
		func(s *Stream) (any, error) { return s.Delete(unsorted...) },
		func(s *Stream) (any, error) { return s.DeleteIDs(unsortedIDs...) })
	for _, p := range []DeletePolicy{KeepRef, DelRef, Acked} {
		add(fmt.Sprint("DeleteEx ", p),
			func(s *Stream) (any, error) { return s.DeleteEx(p, strs...) },
			func(s *Stream) (any, error) { return s.DeleteExIDs(p, ids...) })
		add(fmt.Sprint("AckDel ", p),
			func(s *Stream) (any, error) { return s.AckDel("g", p, strs...) },
			func(s *Stream) (any, error) { return s.AckDelIDs("g", p, ids...) })
	}
	claims := map[string]ClaimArgs{
		"plain":      {},
		"force":      {Force: true},
		"justid":     {JustID: true},
		"retrycount": {RetryCount: i64(7), Idle: 5 * time.Second},
		"lastid":     {LastID: "8-1"},
		"time":       {Time: time.UnixMilli(1_699_999_999_000)},
	}
	for name, args := range claims {
		add("Claim "+name,
			func(s *Stream) (any, error) { return s.Claim("g", "e", time.Second, strs, args) },
			func(s *Stream) (any, error) { return s.ClaimIDs("g", "e", time.Second, ids, args) })
	}
	add("Claim not idle enough",
		func(s *Stream) (any, error) { return s.Claim("g", "e", time.Minute, strs, ClaimArgs{}) },
		func(s *Stream) (any, error) { return s.ClaimIDs("g", "e", time.Minute, ids, ClaimArgs{}) })
	for _, m := range []NackMode{NackSilent, NackFail, NackFatal} {
		for _, args := range []NackArgs{{}, {Force: true}, {RetryCount: i64(4)}} {
			add(fmt.Sprint("Nack ", m, args.Force, args.RetryCount != nil),
				func(s *Stream) (any, error) { return s.Nack("g", m, strs, args) },
				func(s *Stream) (any, error) { return s.NackIDs("g", m, ids, args) })
		}
	}
	return cases
}

// TestIDFormsMatchStringForms: each ID-typed form returns what its string
// form returns and leaves the stream in the same state.
func TestIDFormsMatchStringForms(t *testing.T) {
	for _, tc := range idFormCases() {
		a, b := idFormFixture(t), idFormFixture(t)
		require.Equal(t, gtSnapshot(t, a), gtSnapshot(t, b))
		before := gtSnapshot(t, a)
		gotStr, errStr := tc.str(a)
		gotID, errID := tc.typed(b)
		require.NoError(t, errStr, tc.name)
		require.NoError(t, errID, tc.name)
		require.Equal(t, gotStr, gotID, tc.name)
		after := gtSnapshot(t, a)
		require.Equal(t, after, gtSnapshot(t, b), tc.name)
		if !strings.HasPrefix(tc.name, "Ack none") && !strings.HasPrefix(tc.name, "Claim not") {
			require.NotEqual(t, before, after, "%s: the case must change something", tc.name)
		}
	}
}

// TestIDFormsErrors: with a bad argument other than an ID, each ID-typed
// form fails as its string form does, with the same sentinel and message,
// and changes nothing.
func TestIDFormsErrors(t *testing.T) {
	ids := []ID{gtID(1), gtID(2)}
	strs := []string{"1", "2"}
	type pair struct {
		name     string
		sentinel error
		want     string
		str      func(s *Stream) error
		typed    func(s *Stream) error
	}
	cases := []pair{
		{"Ack no group", ErrNoGroup, `"nope"`,
			func(s *Stream) error { _, err := s.Ack("nope", strs...); return err },
			func(s *Stream) error { _, err := s.AckIDs("nope", ids...); return err }},
		{"DeleteEx policy", ErrInvalidArgument, "DeletePolicy",
			func(s *Stream) error { _, err := s.DeleteEx(DeletePolicy(9), strs...); return err },
			func(s *Stream) error { _, err := s.DeleteExIDs(DeletePolicy(9), ids...); return err }},
		{"AckDel no group", ErrNoGroup, `"nope"`,
			func(s *Stream) error { _, err := s.AckDel("nope", KeepRef, strs...); return err },
			func(s *Stream) error { _, err := s.AckDelIDs("nope", KeepRef, ids...); return err }},
		{"AckDel policy", ErrInvalidArgument, "DeletePolicy",
			func(s *Stream) error { _, err := s.AckDel("g", DeletePolicy(9), strs...); return err },
			func(s *Stream) error { _, err := s.AckDelIDs("g", DeletePolicy(9), ids...); return err }},
		{"Claim no group", ErrNoGroup, `"nope"`,
			func(s *Stream) error { _, err := s.Claim("nope", "e", 0, strs, ClaimArgs{}); return err },
			func(s *Stream) error { _, err := s.ClaimIDs("nope", "e", 0, ids, ClaimArgs{}); return err }},
		{"Claim no IDs", ErrInvalidArgument, "at least one ID",
			func(s *Stream) error { _, err := s.Claim("g", "e", 0, nil, ClaimArgs{}); return err },
			func(s *Stream) error { _, err := s.ClaimIDs("g", "e", 0, nil, ClaimArgs{}); return err }},
		{"Claim min idle", ErrInvalidArgument, "min idle",
			func(s *Stream) error { _, err := s.Claim("g", "e", -1, strs, ClaimArgs{}); return err },
			func(s *Stream) error { _, err := s.ClaimIDs("g", "e", -1, ids, ClaimArgs{}); return err }},
		{"Claim Idle", ErrInvalidArgument, "Idle",
			func(s *Stream) error { _, err := s.Claim("g", "e", 0, strs, ClaimArgs{Idle: -1}); return err },
			func(s *Stream) error { _, err := s.ClaimIDs("g", "e", 0, ids, ClaimArgs{Idle: -1}); return err }},
		{"Claim Idle and Time", ErrInvalidArgument, "given together",
			func(s *Stream) error {
				_, err := s.Claim("g", "e", 0, strs, ClaimArgs{Idle: 1, Time: time.UnixMilli(1)})
				return err
			},
			func(s *Stream) error {
				_, err := s.ClaimIDs("g", "e", 0, ids, ClaimArgs{Idle: 1, Time: time.UnixMilli(1)})
				return err
			}},
		{"Claim RetryCount", ErrInvalidArgument, "RetryCount",
			func(s *Stream) error {
				_, err := s.Claim("g", "e", 0, strs, ClaimArgs{RetryCount: i64(-1)})
				return err
			},
			func(s *Stream) error {
				_, err := s.ClaimIDs("g", "e", 0, ids, ClaimArgs{RetryCount: i64(-1)})
				return err
			}},
		{"Claim LastID", ErrInvalidID, `"x"`,
			func(s *Stream) error { _, err := s.Claim("g", "e", 0, strs, ClaimArgs{LastID: "x"}); return err },
			func(s *Stream) error { _, err := s.ClaimIDs("g", "e", 0, ids, ClaimArgs{LastID: "x"}); return err }},
		{"Nack no group", ErrNoGroup, `"nope"`,
			func(s *Stream) error { _, err := s.Nack("nope", NackFail, strs, NackArgs{}); return err },
			func(s *Stream) error { _, err := s.NackIDs("nope", NackFail, ids, NackArgs{}); return err }},
		{"Nack mode", ErrInvalidArgument, "NackMode",
			func(s *Stream) error { _, err := s.Nack("g", 0, strs, NackArgs{}); return err },
			func(s *Stream) error { _, err := s.NackIDs("g", 0, ids, NackArgs{}); return err }},
		{"Nack RetryCount", ErrInvalidArgument, "RetryCount",
			func(s *Stream) error {
				_, err := s.Nack("g", NackFail, strs, NackArgs{RetryCount: i64(math.MinInt64)})
				return err
			},
			func(s *Stream) error {
				_, err := s.NackIDs("g", NackFail, ids, NackArgs{RetryCount: i64(math.MinInt64)})
				return err
			}},
	}
	for _, tc := range cases {
		s := idFormFixture(t)
		var strErr, idErr error
		gtUnchanged(t, s, tc.sentinel, tc.want, func() error { strErr = tc.str(s); return strErr })
		gtUnchanged(t, s, tc.sentinel, tc.want, func() error { idErr = tc.typed(s); return idErr })
		require.Equal(t, strErr.Error(), idErr.Error(), tc.name)
	}
}

// TestStringFormsStillCheckIDs: the string forms, now wrappers of the ID
// forms, still refuse a bad ID before anything else changes, and a bad
// ID wins over a missing group as before.
func TestStringFormsStillCheckIDs(t *testing.T) {
	bad := []string{"1", "1-x"}
	for name, fn := range map[string]func(s *Stream) error{
		"Ack":      func(s *Stream) error { _, err := s.Ack("nope", bad...); return err },
		"Delete":   func(s *Stream) error { _, err := s.Delete(bad...); return err },
		"DeleteEx": func(s *Stream) error { _, err := s.DeleteEx(KeepRef, bad...); return err },
		"AckDel":   func(s *Stream) error { _, err := s.AckDel("nope", KeepRef, bad...); return err },
		"Claim":    func(s *Stream) error { _, err := s.Claim("nope", "e", 0, bad, ClaimArgs{}); return err },
		"Nack":     func(s *Stream) error { _, err := s.Nack("nope", NackFail, bad, NackArgs{}); return err },
	} {
		t.Run(name, func(t *testing.T) {
			s := idFormFixture(t)
			gtUnchanged(t, s, ErrInvalidID, `"1-x"`, func() error { return fn(s) })
		})
	}
}
