package store

import "math"

// ID is an entry ID: a millisecond time and a sequence number, ordered by
// Ms then Seq. Package xstream's ID has the same underlying type, so the
// two convert to each other at no cost.
type ID struct {
	Ms  uint64
	Seq uint64
}

// MaxID is the largest ID.
var MaxID = ID{math.MaxUint64, math.MaxUint64}

// IsZero reports whether id is 0-0.
func (id ID) IsZero() bool { return id == ID{} }

// Less reports whether id is smaller than o.
func (id ID) Less(o ID) bool {
	return id.Ms < o.Ms || (id.Ms == o.Ms && id.Seq < o.Seq)
}

// Compare returns -1, 0 or +1 as id is smaller than, equal to or greater
// than o.
func (id ID) Compare(o ID) int {
	switch {
	case id.Less(o):
		return -1
	case o.Less(id):
		return 1
	}
	return 0
}

// Next returns the smallest ID greater than id; ok is false when id is
// MaxID.
func (id ID) Next() (next ID, ok bool) {
	switch {
	case id.Seq < math.MaxUint64:
		return ID{id.Ms, id.Seq + 1}, true
	case id.Ms < math.MaxUint64:
		return ID{id.Ms + 1, 0}, true
	}
	return id, false
}

// Field is one field/value pair. Package xstream's Field has the same
// underlying type.
type Field struct {
	Name  string
	Value string
}
