package xstream

import (
	"math"
	"strconv"
	"strings"
)

// ID identifies an entry of a stream: a millisecond time and a sequence
// number within that millisecond, written "ms-seq". IDs order first by Ms,
// then by Seq. The zero ID, 0-0, is never the ID of an entry.
type ID struct {
	Ms  uint64
	Seq uint64
}

// MaxID returns the largest ID, 18446744073709551615-18446744073709551615,
// the "+" of a range. It is a function so that no caller can change it.
func MaxID() ID { return ID{math.MaxUint64, math.MaxUint64} }

// String returns the ID in the form "ms-seq".
func (id ID) String() string {
	return string(id.AppendText(make([]byte, 0, 41)))
}

// AppendText appends the "ms-seq" form of id to b.
func (id ID) AppendText(b []byte) []byte {
	b = strconv.AppendUint(b, id.Ms, 10)
	b = append(b, '-')
	return strconv.AppendUint(b, id.Seq, 10)
}

// MarshalText implements encoding.TextMarshaler with the "ms-seq" form.
func (id ID) MarshalText() ([]byte, error) { return id.AppendText(nil), nil }

// UnmarshalText implements encoding.TextUnmarshaler; it accepts what
// ParseID accepts.
func (id *ID) UnmarshalText(b []byte) error {
	v, err := ParseID(string(b))
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// IsZero reports whether id is 0-0.
func (id ID) IsZero() bool { return id == ID{} }

// Compare returns -1, 0 or +1 as id is smaller than, equal to or greater
// than o.
func (id ID) Compare(o ID) int {
	switch {
	case id.Ms < o.Ms:
		return -1
	case id.Ms > o.Ms:
		return 1
	case id.Seq < o.Seq:
		return -1
	case id.Seq > o.Seq:
		return 1
	}
	return 0
}

// Less reports whether id is smaller than o.
func (id ID) Less(o ID) bool {
	return id.Ms < o.Ms || (id.Ms == o.Ms && id.Seq < o.Seq)
}

// Next returns the smallest ID greater than id; ok is false when id is MaxID.
func (id ID) Next() (next ID, ok bool) {
	n, ok := sid(id).Next()
	return ID(n), ok
}

// Prev returns the greatest ID smaller than id; ok is false when id is 0-0.
func (id ID) Prev() (prev ID, ok bool) {
	switch {
	case id.Seq > 0:
		return ID{id.Ms, id.Seq - 1}, true
	case id.Ms > 0:
		return ID{id.Ms - 1, math.MaxUint64}, true
	}
	return id, false
}

// maxIDLen bounds the text of an ID, as Redis does (127 bytes).
const maxIDLen = 127

// ParseID parses an entry ID: "ms-seq", or a bare "ms", which means ms-0.
// It rejects the special forms ("-", "+", "$", ">", "*", "ms-*", "(ID"),
// which only some operations accept. The error wraps ErrInvalidID.
func ParseID(s string) (ID, error) {
	id, _, err := parseID(s, 0, false)
	return id, err
}

// parseID parses "ms-seq" or "ms" (seq = missingSeq). With allowStarSeq,
// "ms-*" is accepted and seqGiven is false for it.
func parseID(s string, missingSeq uint64, allowStarSeq bool) (id ID, seqGiven bool, err error) {
	if len(s) == 0 || len(s) > maxIDLen {
		return ID{}, false, invalidID(s)
	}
	msPart, seqPart, hasSeq := strings.Cut(s, "-")
	ms, ok := parseUint(msPart)
	if !ok {
		return ID{}, false, invalidID(s)
	}
	if !hasSeq {
		return ID{ms, missingSeq}, true, nil
	}
	if allowStarSeq && seqPart == "*" {
		return ID{ms, 0}, false, nil
	}
	seq, ok := parseUint(seqPart)
	if !ok {
		return ID{}, false, invalidID(s)
	}
	return ID{ms, seq}, true, nil
}

func invalidID(s string) error {
	return errorf(ErrInvalidID, "%q is not a stream ID (want ms-seq)", s)
}

// parseUint parses a plain decimal uint64: digits only, no sign, no space.
func parseUint(s string) (uint64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// parseRange parses the start and end bounds of Range and RevRange:
// an ID, a bare ms (ms-0 as a start, ms-max as an end), "-" and "+", and an
// exclusive "(ID". It returns inclusive bounds; empty is true when the
// interval holds no ID at all.
func parseRange(start, end string) (lo, hi ID, empty bool, err error) {
	lo, err = parseBound(start, false)
	if err != nil {
		return
	}
	hi, err = parseBound(end, true)
	if err != nil {
		return
	}
	return lo, hi, hi.Less(lo), nil
}

func parseBound(s string, isEnd bool) (ID, error) {
	switch s {
	case "-":
		return ID{}, nil
	case "+":
		return MaxID(), nil
	}
	excl := strings.HasPrefix(s, "(")
	if excl {
		s = s[1:]
	}
	var missing uint64
	if isEnd {
		missing = math.MaxUint64
	}
	id, _, err := parseID(s, missing, false)
	if err != nil {
		return ID{}, err
	}
	if !excl {
		return id, nil
	}
	var ok bool
	if isEnd {
		id, ok = id.Prev()
		if !ok {
			return ID{}, errorf(ErrInvalidID, "invalid end ID for the interval: %q", "("+s)
		}
	} else {
		id, ok = id.Next()
		if !ok {
			return ID{}, errorf(ErrInvalidID, "invalid start ID for the interval: %q", "("+s)
		}
	}
	return id, nil
}
