package server

import (
	"bufio"
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// A reply as read from the wire, with its exact type, so that the
// differential tests compare shapes (simple string or bulk, null bulk or
// null array, RESP3 map or array) and not only values. A RESP3 map holds
// its keys and values in kids, alternating; a double, big number or
// boolean holds its text in s.
type reply struct {
	kind byte // a RESP2 or RESP3 type byte; 't' an approximate time; 'w' anything
	null bool
	s    string
	n    int64
	kids []*reply
}

// parseReplies reads the replies recorded on a connection.
func parseReplies(b []byte) ([]*reply, error) {
	rd := bufio.NewReader(bytes.NewReader(b))
	var out []*reply
	for {
		if _, err := rd.Peek(1); err != nil {
			return out, nil
		}
		r, err := readReply(rd)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
}

func readReply(rd *bufio.Reader) (*reply, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return nil, fmt.Errorf("empty reply line")
	}
	r := &reply{kind: line[0]}
	body := line[1:]
	switch r.kind {
	case '+', '-', ',', '(', '#':
		r.s = body
	case '_':
		r.null = true
	case ':':
		r.n, err = strconv.ParseInt(body, 10, 64)
	case '$', '=', '!':
		n, err := strconv.Atoi(body)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			r.null = true
			break
		}
		buf := make([]byte, n+2)
		if _, err := ioReadFull(rd, buf); err != nil {
			return nil, err
		}
		r.s = string(buf[:n])
	case '*', '%', '~', '>', '|':
		n, err := strconv.Atoi(body)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			r.null = true
			break
		}
		if r.kind == '%' || r.kind == '|' {
			n *= 2
		}
		for range n {
			k, err := readReply(rd)
			if err != nil {
				return nil, err
			}
			r.kids = append(r.kids, k)
		}
	default:
		return nil, fmt.Errorf("unknown reply type %q", line)
	}
	return r, err
}

func ioReadFull(rd *bufio.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		k, err := rd.Read(buf[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func (r *reply) String() string {
	var b strings.Builder
	r.format(&b)
	return b.String()
}

func (r *reply) format(b *strings.Builder) {
	switch {
	case r.kind == 'w':
		b.WriteString("<any>")
	case r.kind == 't':
		fmt.Fprintf(b, "~%d", r.n)
	case r.null:
		fmt.Fprintf(b, "%cnil", r.kind)
	case r.kind == ':':
		fmt.Fprintf(b, ":%d", r.n)
	case isAggregate(r.kind):
		if r.kind != '*' {
			b.WriteByte(r.kind)
		}
		b.WriteString("[")
		for i, k := range r.kids {
			if i > 0 {
				b.WriteString(" ")
			}
			k.format(b)
		}
		b.WriteString("]")
	default:
		fmt.Fprintf(b, "%c%q", r.kind, r.s)
	}
}

// timeTolerance is how far apart two idle times (or timestamps) of the
// two servers may be: the same command reaches them a moment apart.
const timeTolerance = 2000

func equalReplies(a, b *reply) bool {
	if a.kind == 'w' || b.kind == 'w' {
		return true
	}
	if a.kind == 't' && b.kind == 't' {
		d := a.n - b.n
		return d <= timeTolerance && -d <= timeTolerance
	}
	if a.kind != b.kind || a.null != b.null || a.s != b.s || a.n != b.n || len(a.kids) != len(b.kids) {
		return false
	}
	for i := range a.kids {
		if !equalReplies(a.kids[i], b.kids[i]) {
			return false
		}
	}
	return true
}

// Normalization of the parts of replies that may differ.

// sortReplies orders key names: Redis lists keys in hash order, the
// xstream server in byte order.
func sortReplies(rs []*reply) {
	sort.Slice(rs, func(i, j int) bool { return rs[i].s < rs[j].s })
}

func markTime(r *reply) {
	if r != nil && r.kind == ':' {
		r.kind = 't'
	}
}

// isAggregate tells the types whose elements are in kids.
func isAggregate(kind byte) bool { return strings.IndexByte("*%~>|", kind) >= 0 }

// mapFields applies fn to the values of a map reply (a RESP3 map, or in
// RESP2 a flat array of name, value) and drops the names in drop.
func mapFields(r *reply, drop map[string]bool, fn func(name string, v *reply)) {
	if r == nil || (r.kind != '*' && r.kind != '%') || len(r.kids)%2 != 0 {
		return
	}
	kept := r.kids[:0]
	for i := 0; i+1 < len(r.kids); i += 2 {
		name := r.kids[i].s
		if drop[name] {
			continue
		}
		if fn != nil {
			fn(name, r.kids[i+1])
		}
		kept = append(kept, r.kids[i], r.kids[i+1])
	}
	r.kids = kept
}

// normalize rewrites a reply to cmd so that the two servers' replies
// compare equal where they may differ: idle times and timestamps become
// approximate, storage-layout fields (radix-tree-keys, radix-tree-nodes)
// match anything, and the fields added by Redis 7.2 (the consumers'
// "inactive" and "active-time") and Redis 8 (newerStreamFields) are
// dropped, since Redis 7.0 lacks them.
func normalize(args []string, r *reply) {
	if len(args) == 0 || r.kind == '-' {
		return
	}
	name := strings.ToUpper(args[0])
	sub := ""
	if len(args) > 1 {
		sub = strings.ToUpper(args[1])
	}
	switch {
	case name == "HELLO":
		mapFields(r, nil, func(n string, v *reply) {
			if n == "id" {
				v.kind = 'w' // each server numbers its own clients
			}
		})
	case name == "KEYS":
		sortReplies(r.kids)
	case name == "SCAN" && len(r.kids) == 2:
		sortReplies(r.kids[1].kids)
	case name == "XPENDING" && len(args) > 3:
		for _, row := range r.kids {
			if len(row.kids) == 4 {
				markTime(row.kids[2])
			}
		}
	case name == "XINFO" && sub == "CONSUMERS":
		for _, c := range r.kids {
			mapFields(c, map[string]bool{"inactive": true}, func(n string, v *reply) {
				if n == "idle" {
					markTime(v)
				}
			})
		}
	case name == "XINFO" && sub == "STREAM":
		mapFields(r, newerStreamFields, func(n string, v *reply) {
			switch n {
			case "radix-tree-keys", "radix-tree-nodes":
				v.kind = 'w'
			case "groups":
				for _, g := range v.kids {
					normalizeFullGroup(g)
				}
			}
		})
	}
}

// newerStreamFields are the fields of XINFO STREAM newer than Redis 7.0:
// Redis 8.6's IDMP fields and Redis 8.8's nacked-count of a group (FULL).
// They are dropped from both servers' replies; idmp_test.go pins them.
var newerStreamFields = map[string]bool{
	"idmp-duration": true, "idmp-maxsize": true, "pids-tracked": true,
	"iids-tracked": true, "iids-added": true, "iids-duplicates": true,
	"nacked-count": true,
}

func normalizeFullGroup(g *reply) {
	mapFields(g, newerStreamFields, func(n string, v *reply) {
		switch n {
		case "pending":
			for _, row := range v.kids {
				if len(row.kids) == 4 {
					markTime(row.kids[2])
				}
			}
		case "consumers":
			for _, c := range v.kids {
				mapFields(c, map[string]bool{"active-time": true}, func(n string, v *reply) {
					switch n {
					case "seen-time":
						markTime(v)
					case "pending":
						for _, row := range v.kids {
							if len(row.kids) == 3 {
								markTime(row.kids[1])
							}
						}
					}
				})
			}
		}
	})
}

func itoa(i int) string { return strconv.Itoa(i) }
