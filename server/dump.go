package server

import (
	"encoding/binary"
	"strconv"

	"github.com/xstreamgo/xstream"
)

// DUMP key: the stream as Redis 7.0 serializes it, which RESTORE here and
// in Redis 7.0 reads back (rdb.go decodes it).
//
// The payload is the object (RDB type 19, STREAM_LISTPACKS_2: listpack
// nodes of up to dumpNodeEntries entries, each with its master entry,
// then the length, last, first and max deleted IDs, entries added, and
// the groups with their PEL and consumers) followed by the RDB version 10
// and Redis's CRC-64 of all before it. Strings are stored plain, without
// LZF. The stream is read at once (xstream.Stream.InfoFull), so the
// payload is one state of it. Entries given back by XNACK (pending to no
// consumer) are left out: Redis 7.0's format has no place for them.
// Delivery times are the server's clock less the entries' idle times.

func init() {
	commandSpecs["dump"] = &commandSpec{
		summary:    "Return a serialized version of the value stored at the specified key.",
		since:      "2.6.0",
		group:      "generic",
		complexity: "O(1) to access the key and additional O(N*M) to serialize it, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1).",
		flags:      "readonly",
		keys:       [3]int{1, 1, 1},
		acl:        "@keyspace @read @slow",
		tips:       "nondeterministic_output",
		specs:      []keySpec{{flags: "RO access", index: 1}},
	}
	commandDocsData["dump"] = docSpec{args: [][]docNode{{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}}}}
	register("dump", 2, func(c *conn, args [][]byte) {
		s, ok := c.lookupStream(args[1])
		if !ok {
			c.null()
			return
		}
		info, err := s.InfoFull(0)
		if err != nil {
			c.fail(err)
			return
		}
		c.bulk(string(dumpStream(&info, c.srv.now().UnixMilli())))
	})
}

// dumpNodeEntries is the number of entries of a listpack node of a dump
// (Redis's default stream-node-max-entries).
const dumpNodeEntries = 100

// rdbWriter writes the values of an RDB object.
type rdbWriter struct{ b []byte }

// length writes an RDB length.
func (w *rdbWriter) length(n uint64) {
	switch {
	case n < 1<<6:
		w.b = append(w.b, byte(n))
	case n < 1<<14:
		w.b = append(w.b, 0x40|byte(n>>8), byte(n))
	case n <= 1<<32-1:
		w.b = append(w.b, 0x80)
		w.b = binary.BigEndian.AppendUint32(w.b, uint32(n))
	default:
		w.b = append(w.b, 0x81)
		w.b = binary.BigEndian.AppendUint64(w.b, n)
	}
}

func (w *rdbWriter) str(s []byte) {
	w.length(uint64(len(s)))
	w.b = append(w.b, s...)
}

func (w *rdbWriter) id(id xstream.ID) {
	w.length(id.Ms)
	w.length(id.Seq)
}

func (w *rdbWriter) rawID(id xstream.ID) {
	w.b = binary.BigEndian.AppendUint64(w.b, id.Ms)
	w.b = binary.BigEndian.AppendUint64(w.b, id.Seq)
}

func (w *rdbWriter) ms(ms int64) { w.b = binary.LittleEndian.AppendUint64(w.b, uint64(ms)) }

// dumpStream encodes info (from InfoFull(0)) as a DUMP payload; now is
// the time (Unix ms) its PEL's idle times are from.
func dumpStream(info *xstream.StreamInfo, now int64) []byte {
	w := &rdbWriter{b: []byte{rdbTypeStreamListpacks2}}
	nodes := (len(info.Entries) + dumpNodeEntries - 1) / dumpNodeEntries
	w.length(uint64(nodes))
	for i := 0; i < len(info.Entries); i += dumpNodeEntries {
		node := info.Entries[i:min(i+dumpNodeEntries, len(info.Entries))]
		var key [16]byte
		binary.BigEndian.PutUint64(key[:], node[0].ID.Ms)
		binary.BigEndian.PutUint64(key[8:], node[0].ID.Seq)
		w.str(key[:])
		w.str(streamListpack(node))
	}
	w.length(uint64(len(info.Entries)))
	w.id(info.LastGeneratedID)
	w.id(info.RecordedFirstEntryID)
	w.id(info.MaxDeletedEntryID)
	w.length(uint64(info.EntriesAdded))
	w.length(uint64(len(info.GroupDetails)))
	for _, g := range info.GroupDetails {
		w.str([]byte(g.Name))
		w.id(g.LastDeliveredID)
		read := g.EntriesRead
		if !g.EntriesReadKnown {
			read = -1 // Redis's SCG_INVALID_ENTRIES_READ, as a length
		}
		w.length(uint64(read))
		var owned []xstream.PendingEntry
		for _, p := range g.PEL {
			if p.Consumer != "" {
				owned = append(owned, p)
			}
		}
		w.length(uint64(len(owned)))
		for _, p := range owned {
			w.rawID(p.ID)
			w.ms(now - p.Idle.Milliseconds())
			w.length(uint64(p.Deliveries))
		}
		w.length(uint64(len(g.Consumers)))
		for _, cd := range g.Consumers {
			w.str([]byte(cd.Name))
			w.ms(cd.SeenTime.UnixMilli())
			w.length(uint64(len(cd.PEL)))
			for _, p := range cd.PEL {
				w.rawID(p.ID)
			}
		}
	}
	w.b = binary.LittleEndian.AppendUint16(w.b, dumpRDBVersion)
	return binary.LittleEndian.AppendUint64(w.b, crc64Jones(w.b))
}

// streamListpack encodes entries (at least one) as a stream node's
// listpack, as Redis's streamAppendItem builds it: the master entry (live
// count, deleted count 0, the first entry's field names, 0), then each
// entry (flags, ID less the master ID, its fields or, with the same field
// names as the master, only its values, and its element count).
func streamListpack(entries []xstream.Entry) []byte {
	lp := listpackWriter{b: make([]byte, 6, 64)}
	master := entries[0]
	lp.int(int64(len(entries)))
	lp.int(0)
	lp.int(int64(len(master.Fields)))
	for _, f := range master.Fields {
		lp.str(f.Name)
	}
	lp.int(0)
	for _, e := range entries {
		same := len(e.Fields) == len(master.Fields)
		for k := 0; same && k < len(e.Fields); k++ {
			same = e.Fields[k].Name == master.Fields[k].Name
		}
		flags, count := int64(0), int64(len(e.Fields))+3
		if same {
			flags = lpFlagSameFields
		} else {
			count += int64(len(e.Fields)) + 1
		}
		lp.int(flags)
		lp.int(int64(e.ID.Ms - master.ID.Ms))
		lp.int(int64(e.ID.Seq - master.ID.Seq))
		if same {
			for _, f := range e.Fields {
				lp.str(f.Value)
			}
		} else {
			lp.int(int64(len(e.Fields)))
			for _, f := range e.Fields {
				lp.str(f.Name)
				lp.str(f.Value)
			}
		}
		lp.int(count)
	}
	return lp.end()
}

// listpackWriter builds a listpack: a 6-byte header (total bytes, number
// of elements), the elements, each with its back length, and 0xff.
type listpackWriter struct {
	b []byte
	n int
}

// str appends s, as an integer when it is one in canonical form (as
// Redis's lpStringToInt64 takes it).
func (lp *listpackWriter) str(s string) {
	if len(s) > 0 && len(s) <= 20 {
		if v, err := strconv.ParseInt(s, 10, 64); err == nil && strconv.FormatInt(v, 10) == s {
			lp.int(v)
			return
		}
	}
	start := len(lp.b)
	switch l := len(s); {
	case l < 64:
		lp.b = append(lp.b, 0x80|byte(l))
	case l < 4096:
		lp.b = append(lp.b, 0xe0|byte(l>>8), byte(l))
	default:
		lp.b = append(lp.b, 0xf0)
		lp.b = binary.LittleEndian.AppendUint32(lp.b, uint32(l))
	}
	lp.b = append(lp.b, s...)
	lp.backlen(len(lp.b) - start)
}

// int appends v in the smallest of the listpack's integer encodings.
func (lp *listpackWriter) int(v int64) {
	start := len(lp.b)
	switch {
	case v >= 0 && v <= 127:
		lp.b = append(lp.b, byte(v))
	case v >= -4096 && v <= 4095:
		u := uint64(v) & (1<<13 - 1)
		lp.b = append(lp.b, 0xc0|byte(u>>8), byte(u))
	default:
		w, enc := 8, byte(0xf4)
		switch {
		case v >= -1<<15 && v < 1<<15:
			w, enc = 2, 0xf1
		case v >= -1<<23 && v < 1<<23:
			w, enc = 3, 0xf2
		case v >= -1<<31 && v < 1<<31:
			w, enc = 4, 0xf3
		}
		lp.b = append(lp.b, enc)
		for k := range w {
			lp.b = append(lp.b, byte(uint64(v)>>(8*k)))
		}
	}
	lp.backlen(len(lp.b) - start)
}

// backlen appends the back length of an element of l bytes and counts
// the element.
func (lp *listpackWriter) backlen(l int) {
	switch n := backlenSize(l); n {
	case 1:
		lp.b = append(lp.b, byte(l))
	default:
		lp.b = append(lp.b, byte(l>>(7*(n-1))))
		for k := n - 2; k >= 0; k-- {
			lp.b = append(lp.b, byte(l>>(7*k))&127|128)
		}
	}
	lp.n++
}

// end writes the header and the terminator and returns the listpack.
func (lp *listpackWriter) end() []byte {
	lp.b = append(lp.b, 0xff)
	binary.LittleEndian.PutUint32(lp.b, uint32(len(lp.b)))
	binary.LittleEndian.PutUint16(lp.b[4:], uint16(min(lp.n, 65535)))
	return lp.b
}
