package xredis

import (
	"errors"
	"fmt"
	"time"

	"github.com/redis/rueidis"
	"github.com/xstreamgo/xstream"
)

// Replies are decoded from the raw arrays, not through the client's typed
// stream replies, which are maps: an entry keeps its fields in order,
// repeated names included. The strings are the client's own (one
// allocation per bulk string as it read them), shared, not copied.

// errReply reports a reply the engine did not expect: a server that is
// not Redis-compatible, or a bug.
var errReply = errors.New("xredis: unexpected reply")

func badReply(what string, m *rueidis.RedisMessage) error {
	return fmt.Errorf("%w to %s: %v", errReply, what, m)
}

// idOf decodes an entry ID.
func idOf(m *rueidis.RedisMessage) (xstream.ID, error) {
	s, err := m.ToString()
	if err != nil {
		return xstream.ID{}, err
	}
	return xstream.ParseID(s)
}

// entries decodes an array of entries, [[id, [name, value, ...]], ...].
// An entry whose fields are nil (a pending entry whose message was
// deleted) has nil Fields. No entries give nil. The fields of all the
// entries share one slice.
func entries(m *rueidis.RedisMessage) ([]xstream.Entry, error) {
	if m.IsNil() {
		return nil, nil
	}
	arr, err := m.ToArray()
	if err != nil {
		return nil, err
	}
	return entryList(arr)
}

func entryList(arr []rueidis.RedisMessage) ([]xstream.Entry, error) {
	if len(arr) == 0 {
		return nil, nil
	}
	total := 0
	for i := range arr {
		e := vals(&arr[i])
		if len(e) != 2 {
			return nil, badReply("an entry", &arr[i])
		}
		if fv := vals(&e[1]); len(fv)%2 == 0 {
			total += len(fv) / 2
		} else {
			return nil, badReply("an entry's fields", &arr[i])
		}
	}
	fields := make([]xstream.Field, total)
	out := make([]xstream.Entry, len(arr))
	for i := range arr {
		e := vals(&arr[i])
		id, err := idOf(&e[0])
		if err != nil {
			return nil, err
		}
		out[i].ID = id
		if e[1].IsNil() {
			continue
		}
		fv, err := e[1].ToArray()
		if err != nil {
			return nil, err
		}
		n := len(fv) / 2
		if n == 0 {
			continue
		}
		fs := fields[:n:n]
		fields = fields[n:]
		for j := range fs {
			if fs[j].Name, err = fv[2*j].ToString(); err != nil {
				return nil, err
			}
			if fs[j].Value, err = fv[2*j+1].ToString(); err != nil {
				return nil, err
			}
		}
		out[i].Fields = fs
	}
	return out, nil
}

// idEntries decodes an array of IDs (JUSTID) as entries without fields.
func idEntries(m *rueidis.RedisMessage) ([]xstream.Entry, error) {
	arr, err := m.ToArray()
	if err != nil || len(arr) == 0 {
		return nil, err
	}
	out := make([]xstream.Entry, len(arr))
	for i := range arr {
		if out[i].ID, err = idOf(&arr[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// streamReply is the part of an XREAD or XREADGROUP reply of one stream.
type streamReply struct {
	name    string
	entries *rueidis.RedisMessage
}

// streamReplies decodes the outer level of an XREAD or XREADGROUP reply:
// an array of [name, entries] in RESP2, a map from name to entries in
// RESP3, nil when nothing was read.
func streamReplies(m *rueidis.RedisMessage) ([]streamReply, error) {
	if m.IsNil() {
		return nil, nil
	}
	if m.IsMap() {
		mm, err := m.AsMap()
		if err != nil {
			return nil, err
		}
		out := make([]streamReply, 0, len(mm))
		for k, v := range mm {
			out = append(out, streamReply{k, &v})
		}
		return out, nil
	}
	arr, err := m.ToArray()
	if err != nil {
		return nil, err
	}
	out := make([]streamReply, len(arr))
	for i := range arr {
		p := vals(&arr[i])
		if len(p) != 2 {
			return nil, badReply("XREAD", m)
		}
		name, err := p[0].ToString()
		if err != nil {
			return nil, err
		}
		out[i] = streamReply{name, &p[1]}
	}
	return out, nil
}

// fieldMap decodes a reply of named fields (XINFO): a flat array in RESP2,
// a map in RESP3.
func fieldMap(m *rueidis.RedisMessage) (map[string]rueidis.RedisMessage, error) {
	return m.AsMap()
}

// info reads the named fields of one XINFO reply. A field the server
// does not give (an older version's reply) reads as zero: see each
// method.
type info struct {
	m   map[string]rueidis.RedisMessage
	err error
}

func (f *info) msg(k string) *rueidis.RedisMessage {
	v, ok := f.m[k]
	if !ok {
		return nil
	}
	return &v
}

func (f *info) int(k string) int64 {
	m := f.msg(k)
	if m == nil || m.IsNil() || f.err != nil {
		return 0
	}
	n, err := m.AsInt64()
	if err != nil {
		f.err = err
	}
	return n
}

// optInt returns the field and whether it is there and not nil.
func (f *info) optInt(k string) (int64, bool) {
	m := f.msg(k)
	if m == nil || m.IsNil() || f.err != nil {
		return 0, false
	}
	n, err := m.AsInt64()
	if err != nil {
		f.err = err
	}
	return n, true
}

func (f *info) str(k string) string {
	m := f.msg(k)
	if m == nil || m.IsNil() || f.err != nil {
		return ""
	}
	s, err := m.ToString()
	if err != nil {
		f.err = err
	}
	return s
}

func (f *info) id(k string) xstream.ID {
	m := f.msg(k)
	if m == nil || m.IsNil() || f.err != nil {
		return xstream.ID{}
	}
	id, err := idOf(m)
	if err != nil {
		f.err = err
	}
	return id
}

func (f *info) array(k string) []rueidis.RedisMessage {
	m := f.msg(k)
	if m == nil || m.IsNil() || f.err != nil {
		return nil
	}
	arr, err := m.ToArray()
	if err != nil {
		f.err = err
	}
	return arr
}

func newInfo(m *rueidis.RedisMessage) *info {
	mm, err := fieldMap(m)
	return &info{m: mm, err: err}
}

// ms converts milliseconds to a Duration; a negative count is 0.
func ms(n int64) time.Duration {
	if n < 0 {
		n = 0
	}
	return time.Duration(n) * time.Millisecond
}

// vals returns the elements of an array, none for anything else.
func vals(m *rueidis.RedisMessage) []rueidis.RedisMessage {
	a, _ := m.ToArray()
	return a
}
