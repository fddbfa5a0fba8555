package xredis

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/xstreamgo/xstream"
)

// Client-side checks of arguments. Where xstream's API gives an argument
// a meaning of its own, or parses it more strictly than Redis does, the
// engine checks it here, as the core does, and sends Redis the argument in
// the form Redis reads the same way: a count of 0 (no limit) is no COUNT,
// range bounds go as inclusive IDs, and IDs are written back in full.

// errorf wraps sentinel with a message, as the core's errors do.
func errorf(sentinel error, format string, args ...any) error {
	return fmt.Errorf("xredis: %w: "+format, append([]any{sentinel}, args...)...)
}

func checkCount(count int) error {
	if count < 0 {
		return errorf(xstream.ErrInvalidArgument, "count must be >= 0, got %d", count)
	}
	return nil
}

// checkNoClaim refuses ReadGroupArgs.Claim, which the engine does not
// send (XREADGROUP CLAIM needs Redis 8.4, and its reply another shape).
func checkNoClaim(args xstream.ReadGroupArgs) error {
	if args.Claim || args.ClaimMinIdle != 0 {
		return errorf(xstream.ErrInvalidArgument, "ReadGroupArgs.Claim is not supported by the Redis engine")
	}
	return nil
}

// checkShardedGroupArgs checks the arguments of a sharded ReadGroup as
// the core does: Count and ClaimMinIdle not negative, ClaimMinIdle only
// with Claim.
func checkShardedGroupArgs(args xstream.ReadGroupArgs) error {
	if err := checkCount(args.Count); err != nil {
		return err
	}
	if err := checkDuration("ClaimMinIdle", args.ClaimMinIdle); err != nil {
		return err
	}
	if args.ClaimMinIdle != 0 && !args.Claim {
		return errorf(xstream.ErrInvalidArgument, "ClaimMinIdle (%s) given without Claim", args.ClaimMinIdle)
	}
	return nil
}

func checkDuration(name string, d time.Duration) error {
	if d < 0 {
		return errorf(xstream.ErrInvalidArgument, "%s must be >= 0, got %v", name, d)
	}
	return nil
}

// parseIDs checks entry IDs ("ms-seq" or "ms", decimal digits only, as
// the core parses them) and returns them to be sent as they are: Redis
// reads such an ID as the core does, a bare ms as ms-0.
// sendIDs is parseIDs for the commands that Redis answers on a missing
// key (or group) before it looks at the IDs, as the core does: XACK,
// XDEL, XDELEX, XACKDEL. IDs the core refuses go to Redis as an ID that
// Redis refuses too, so that the answer is Redis's: its answer for a
// missing key, or its "Invalid stream ID" error, for which the core's
// error (err) is returned. A nil err means the IDs go as they are.
func sendIDs(ids []string) (send []string, err error) {
	send, err = parseIDs(ids)
	if err == nil {
		return send, nil
	}
	send = make([]string, len(ids))
	for i, s := range ids {
		if _, perr := xstream.ParseID(s); perr != nil {
			s = "invalid"
		}
		send[i] = s
	}
	return send, err
}

// invalidIDs returns the core's error for the IDs of sendIDs when Redis
// refused them, else rerr.
func invalidIDs(perr, rerr error) error {
	if perr != nil && rerr != nil && isRedisErr(rerr) && strings.HasPrefix(redisText(rerr), "Invalid stream ID") {
		return perr
	}
	return mapErr(rerr)
}

func parseIDs(ids []string) ([]string, error) {
	for _, s := range ids {
		if _, err := xstream.ParseID(s); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// parseBound parses a range bound as the core does: "-", "+", an ID, a
// bare ms (ms-0 as a start, the last ID of ms as an end) or "(ID"
// (exclusive). It returns the inclusive bound.
func parseBound(s string, isEnd bool) (xstream.ID, error) {
	switch s {
	case "-":
		return xstream.ID{}, nil
	case "+":
		return xstream.MaxID(), nil
	}
	excl := strings.HasPrefix(s, "(")
	if excl {
		s = s[1:]
	}
	id, err := xstream.ParseID(s)
	if err != nil {
		return id, err
	}
	if isEnd && !strings.Contains(s, "-") {
		id.Seq = math.MaxUint64
	}
	if !excl {
		return id, nil
	}
	var ok bool
	if isEnd {
		if id, ok = id.Prev(); !ok {
			return id, errorf(xstream.ErrInvalidID, "invalid end ID for the interval: %q", "("+s)
		}
	} else if id, ok = id.Next(); !ok {
		return id, errorf(xstream.ErrInvalidID, "invalid start ID for the interval: %q", "("+s)
	}
	return id, nil
}

// rangeArgs parses start and end as the core does and returns them as
// Redis reads them the same way: "-", "+" and IDs (a bare ms is ms-0 as a
// start and the last ID of ms as an end for Redis too) as they are, an
// exclusive bound as the inclusive ID next to it. empty is true when no ID
// lies between them.
func rangeArgs(start, end string) (from, to string, empty bool, err error) {
	lo, hi, empty, err := parseRange(start, end)
	if err != nil || empty {
		return "", "", empty, err
	}
	from, to = start, end
	if strings.HasPrefix(start, "(") {
		from = lo.String()
	}
	if strings.HasPrefix(end, "(") {
		to = hi.String()
	}
	return from, to, false, nil
}

// parseRange parses start and end into inclusive bounds; empty is true
// when no ID lies between them.
func parseRange(start, end string) (lo, hi xstream.ID, empty bool, err error) {
	if lo, err = parseBound(start, false); err != nil {
		return
	}
	if hi, err = parseBound(end, true); err != nil {
		return
	}
	return lo, hi, hi.Less(lo), nil
}

// addID checks the ID of an Add and returns the argument of XADD.
func addID(s string) (string, error) {
	switch s {
	case "", "*":
		return "*", nil
	}
	if ms, ok := strings.CutSuffix(s, "-*"); ok && len(s) <= 127 && isDigits(ms) {
		return s, nil
	}
	id, err := xstream.ParseID(s)
	if err != nil {
		return "", err
	}
	if id.IsZero() {
		return "", errorf(xstream.ErrZeroID, "got %q", s)
	}
	return s, nil
}

// isDigits reports whether s is a decimal uint64, as the core parses it.
func isDigits(s string) bool {
	if len(s) == 0 || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}

// trimArgs checks t as the core does and returns its XADD/XTRIM options;
// none for the zero TrimArgs.
func (b *base) trimArgs(t xstream.TrimArgs) ([]string, error) {
	if t.Policy > xstream.Acked {
		return nil, errorf(xstream.ErrInvalidArgument, "unknown DeletePolicy %d", t.Policy)
	}
	var out []string
	switch t.Strategy {
	case xstream.TrimNone:
		if t.MaxLen != 0 || t.MinID != "" || t.Approx || t.Limit != 0 || t.Policy != xstream.KeepRef {
			return nil, errorf(xstream.ErrTrimConflict, "trim options given without a strategy: %+v", t)
		}
		return nil, nil
	case xstream.TrimMaxLen:
		if t.MinID != "" {
			return nil, errorf(xstream.ErrTrimConflict, "MaxLen and MinID given together (MinID %q)", t.MinID)
		}
		if t.MaxLen < 0 {
			return nil, errorf(xstream.ErrInvalidArgument, "MaxLen must be >= 0, got %d", t.MaxLen)
		}
		out = append(out, "MAXLEN")
		if t.Approx {
			out = append(out, "~")
		}
		out = append(out, strconv.FormatInt(t.MaxLen, 10))
	case xstream.TrimMinID:
		if t.MaxLen != 0 {
			return nil, errorf(xstream.ErrTrimConflict, "MaxLen and MinID given together (MaxLen %d)", t.MaxLen)
		}
		if _, err := xstream.ParseID(t.MinID); err != nil {
			return nil, err
		}
		out = append(out, "MINID")
		if t.Approx {
			out = append(out, "~")
		}
		out = append(out, t.MinID)
	default:
		return nil, errorf(xstream.ErrInvalidArgument, "unknown trim strategy %d", t.Strategy)
	}
	if t.Limit < 0 {
		return nil, errorf(xstream.ErrInvalidArgument, "Limit must be >= 0, got %d", t.Limit)
	}
	if t.Limit != 0 && !t.Approx {
		return nil, errorf(xstream.ErrTrimConflict, "Limit %d given without Approx", t.Limit)
	}
	if t.Approx {
		// LIMIT 0 is no cap, as Limit 0 is in xstream; without LIMIT,
		// Redis caps an approximate trim at 100 nodes' worth of entries.
		out = append(out, "LIMIT", strconv.FormatInt(t.Limit, 10))
	}
	switch t.Policy {
	case xstream.DelRef:
		out = append(out, "DELREF")
	case xstream.Acked:
		out = append(out, "ACKED")
	}
	if t.Policy != xstream.KeepRef && !b.info.DeleteEx {
		return nil, b.unsupported("the trim policy " + policyWord(t.Policy))
	}
	return out, nil
}

func policyWord(p xstream.DeletePolicy) string {
	switch p {
	case xstream.DelRef:
		return "DELREF"
	case xstream.Acked:
		return "ACKED"
	}
	return "KEEPREF"
}

func (b *base) unsupported(what string) error {
	return fmt.Errorf("xredis: %s is not supported by %s %s: %w", what, b.info.Name, b.info.Version, errUnsupported)
}

// groupStart checks the ID of CreateGroup and SetGroupID: "$" or an entry
// ID.
func groupStart(s string) (string, error) {
	if s == "$" {
		return s, nil
	}
	if _, err := xstream.ParseID(s); err != nil {
		return "", err
	}
	return s, nil
}

func entriesRead(o xstream.GroupOptions) ([]string, error) {
	if o.EntriesRead == nil {
		return nil, nil
	}
	if v := *o.EntriesRead; v < -1 {
		return nil, errorf(xstream.ErrInvalidArgument, "EntriesRead must be >= -1, got %d", v)
	}
	return []string{"ENTRIESREAD", strconv.FormatInt(*o.EntriesRead, 10)}, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
