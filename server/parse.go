package server

import (
	"math"
	"strings"

	"github.com/xstreamgo/xstream"
)

// parseLL parses a signed 64-bit integer as Redis's string2ll does: no
// sign but '-', no leading zeros, no spaces.
func parseLL(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	neg := false
	p := b
	if p[0] == '-' {
		neg = true
		p = p[1:]
		if len(p) == 0 {
			return 0, false
		}
	}
	if p[0] == '0' {
		if len(p) == 1 && !neg {
			return 0, true
		}
		return 0, false
	}
	var v uint64
	for _, ch := range p {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		if v > (math.MaxUint64-9)/10 {
			return 0, false
		}
		v = v*10 + uint64(ch-'0')
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// parseULL parses an unsigned 64-bit integer as Redis's string2ull does:
// string2ll first, then strtoull (leading spaces and a sign allowed).
func parseULL(s string) (uint64, bool) {
	if v, ok := parseLL([]byte(s)); ok {
		if v < 0 {
			return 0, false
		}
		return uint64(v), true
	}
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	if t == "" {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(t); i++ {
		ch := t[i]
		if ch < '0' || ch > '9' {
			return 0, false
		}
		d := uint64(ch - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		v = -v
	}
	return v, true
}

// parsedID is a stream ID argument.
type parsedID struct {
	id       xstream.ID
	seqGiven bool // false for "ms-*"
}

// parseID parses a stream ID as Redis's streamGenericParseIDOrReply does.
// strict rejects "-" and "+"; star accepts "ms-*".
func parseID(s string, missingSeq uint64, strict, star bool) (parsedID, bool) {
	if len(s) > 127 {
		return parsedID{}, false
	}
	if s == "-" || s == "+" {
		if strict {
			return parsedID{}, false
		}
		if s == "-" {
			return parsedID{seqGiven: true}, true
		}
		return parsedID{id: xstream.MaxID(), seqGiven: true}, true
	}
	msPart, seqPart, dot := strings.Cut(s, "-")
	ms, ok := parseULL(msPart)
	if !ok {
		return parsedID{}, false
	}
	p := parsedID{id: xstream.ID{Ms: ms, Seq: missingSeq}, seqGiven: true}
	if dot {
		if star && seqPart == "*" {
			p.id.Seq, p.seqGiven = 0, false
		} else if p.id.Seq, ok = parseULL(seqPart); !ok {
			return parsedID{}, false
		}
	}
	return p, true
}

// parseStrictID parses an entry ID ("ms-seq" or "ms").
func parseStrictID(b []byte) (xstream.ID, bool) {
	p, ok := parseID(string(b), 0, true, false)
	return p.id, ok
}

// parseInterval parses a range bound: an ID, "-", "+", or "(ID".
func parseInterval(b []byte, missingSeq uint64) (id xstream.ID, exclusive, ok bool) {
	s := string(b)
	if len(s) > 1 && s[0] == '(' {
		p, ok := parseID(s[1:], missingSeq, true, false)
		return p.id, true, ok
	}
	p, ok := parseID(s, missingSeq, false, false)
	return p.id, false, ok
}

// rangeBounds parses the start and end of XRANGE, XPENDING and the like
// into inclusive IDs, or fails with Redis's error.
func rangeBounds(startArg, endArg []byte) (lo, hi xstream.ID, err error) {
	lo, ex, ok := parseInterval(startArg, 0)
	if !ok {
		return lo, hi, replyError(errInvalidID)
	}
	if ex {
		if lo, ok = lo.Next(); !ok {
			return lo, hi, replyError("ERR invalid start ID for the interval")
		}
	}
	hi, ex, ok = parseInterval(endArg, math.MaxUint64)
	if !ok {
		return lo, hi, replyError(errInvalidID)
	}
	if ex {
		if hi, ok = hi.Prev(); !ok {
			return lo, hi, replyError("ERR invalid end ID for the interval")
		}
	}
	return lo, hi, nil
}

// rangeBounds is rangeBounds writing the error reply.
func (c *conn) rangeBounds(startArg, endArg []byte) (lo, hi xstream.ID, ok bool) {
	lo, hi, err := rangeBounds(startArg, endArg)
	if err != nil {
		c.fail(err)
	}
	return lo, hi, err == nil
}

// intArg parses an integer argument or writes msg (Redis's default when
// "").
// intArg parses an integer argument as Redis's getLongLongFromObjectOrReply
// does; the error's text is msg ("ERR " added) or Redis's generic one.
func intArg(b []byte, msg string) (int64, error) {
	v, ok := parseLL(b)
	if ok {
		return v, nil
	}
	if msg == "" {
		return 0, replyError(errNotInt)
	}
	return 0, replyError("ERR " + msg)
}

// intArg is intArg writing the error reply; it reports whether b parsed.
func (c *conn) intArg(b []byte, msg string) (int64, bool) {
	v, err := intArg(b, msg)
	if err != nil {
		c.fail(err)
	}
	return v, err == nil
}

func is(b []byte, word string) bool { return strings.EqualFold(string(b), word) }
