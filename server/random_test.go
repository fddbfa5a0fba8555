package server

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/xstreamgo/xstream"
)

// TestDiffRandom sends thousands of random stream commands, valid and
// not, to both servers and compares every reply. IDs are explicit and idle
// thresholds are 0 or far from any real idle time, so no reply depends on
// the clock beyond the tolerance of idle fields. XSTREAM_DIFF_SEED
// replays a seed; XSTREAM_DIFF_OPS sets the number of commands.
func TestDiffRandom(t *testing.T) {
	seed := uint64(rand.Int64())
	if s := os.Getenv("XSTREAM_DIFF_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	ops := 4000
	if s := os.Getenv("XSTREAM_DIFF_OPS"); s != "" {
		ops, _ = strconv.Atoi(s)
	}
	t.Logf("seed %d (XSTREAM_DIFF_SEED=%d to replay)", seed, seed)
	checkKeys := os.Getenv("XSTREAM_DIFF_EXISTS") != ""
	// The same commands run over RESP2, then over RESP3.
	eachProtocol(t, func(t *testing.T, p *pair) {
		g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), lastMs: map[string]int{}}
		g.last = func(key string) xstream.ID {
			if s, ok := p.srv.DB(0).Lookup(key); ok {
				return s.LastID()
			}
			return xstream.ID{}
		}
		for range ops {
			args := g.next()
			p.do(args...)
			if checkKeys {
				p.do("EXISTS", "s1", "s2", "s3")
			}
		}
	})
}

type gen struct {
	r      *rand.Rand
	lastMs map[string]int
	last   func(key string) xstream.ID // the stream's last generated ID
}

func (g *gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }
func (g *gen) n(k int) string           { return strconv.Itoa(g.r.IntN(k)) }
func (g *gen) key() string              { return g.pick("s1", "s1", "s2", "s3") }
func (g *gen) group() string            { return g.pick("g1", "g1", "g2", "g3") }
func (g *gen) consumer() string         { return g.pick("c1", "c2", "c3") }

// id returns an ID near the stream's IDs, sometimes in a bare or odd form.
func (g *gen) id(key string) string {
	ms := g.r.IntN(g.lastMs[key] + 3)
	switch g.r.IntN(10) {
	case 0:
		return strconv.Itoa(ms)
	case 1:
		return g.pick("0", "0-0", "bad", "18446744073709551615-18446744073709551615")
	}
	return strconv.Itoa(ms) + "-" + g.n(3)
}

func (g *gen) bound(key string) string {
	switch g.r.IntN(6) {
	case 0:
		return "-"
	case 1:
		return "+"
	case 2:
		return "(" + g.id(key)
	}
	return g.id(key)
}

func (g *gen) ids(key string) []string {
	out := []string{g.id(key)}
	for g.r.IntN(3) == 0 {
		out = append(out, g.id(key))
	}
	return out
}

func (g *gen) trim(key string) []string {
	var out []string
	if g.r.IntN(2) == 0 {
		out = append(out, "MAXLEN")
	} else {
		out = append(out, "MINID")
	}
	approx := false
	switch g.r.IntN(3) {
	case 0:
		out = append(out, "~")
		approx = true
	case 1:
		out = append(out, "=")
	}
	if out[0] == "MAXLEN" {
		out = append(out, g.n(150))
	} else {
		out = append(out, g.id(key))
	}
	if approx && g.r.IntN(2) == 0 {
		out = append(out, "LIMIT", g.n(250))
	}
	return out
}

func (g *gen) next() []string {
	key := g.key()
	switch g.r.IntN(30) {
	case 0, 1, 2, 3, 4, 5, 6, 7:
		args := []string{"XADD", key}
		if g.r.IntN(10) == 0 {
			args = append(args, "NOMKSTREAM")
		}
		if g.r.IntN(5) == 0 {
			args = append(args, g.trim(key)...)
		}
		ms := g.lastMs[key]
		switch g.r.IntN(10) {
		case 0:
			args = append(args, strconv.Itoa(ms)+"-*")
		case 1:
			args = append(args, g.id(key))
		default:
			ms += g.r.IntN(3)
			args = append(args, strconv.Itoa(ms)+"-"+g.n(3))
			g.lastMs[key] = ms
		}
		for range 1 + g.r.IntN(3) {
			args = append(args, g.pick("f", "temp", "id"), g.n(1000))
		}
		return args
	case 8, 9:
		cmd := g.pick("XRANGE", "XREVRANGE")
		args := []string{cmd, key, g.bound(key), g.bound(key)}
		if cmd == "XREVRANGE" {
			args[2], args[3] = g.pick("+", args[2]), g.pick("-", args[3])
		}
		if g.r.IntN(2) == 0 {
			args = append(args, "COUNT", strconv.Itoa(g.r.IntN(12)-1))
		}
		return args
	case 10:
		return []string{g.pick("XLEN", "EXISTS", "TYPE"), key}
	case 11:
		return append([]string{"XDEL", key}, g.ids(key)...)
	case 12:
		return append([]string{"XTRIM", key}, g.trim(key)...)
	case 13:
		args := []string{"XGROUP", "CREATE", key, g.group(), g.pick("$", "0", g.id(key))}
		if g.r.IntN(3) == 0 {
			args = append(args, "MKSTREAM")
		}
		if g.r.IntN(4) == 0 {
			args = append(args, "ENTRIESREAD", strconv.Itoa(g.r.IntN(20)-2))
		}
		return args
	case 14:
		switch g.r.IntN(4) {
		case 0:
			return []string{"XGROUP", "SETID", key, g.group(), g.pick("$", "0", g.id(key))}
		case 1:
			return []string{"XGROUP", "DESTROY", key, g.group()}
		case 2:
			return []string{"XGROUP", "CREATECONSUMER", key, g.group(), g.consumer()}
		}
		return []string{"XGROUP", "DELCONSUMER", key, g.group(), g.consumer()}
	case 15, 16, 17, 18:
		args := []string{"XREADGROUP", "GROUP", g.group(), g.consumer()}
		if g.r.IntN(2) == 0 {
			args = append(args, "COUNT", strconv.Itoa(g.r.IntN(6)))
		}
		if g.r.IntN(8) == 0 {
			args = append(args, "NOACK")
		}
		args = append(args, "STREAMS", key)
		if g.r.IntN(4) == 0 {
			return append(args, g.pick(">", "0", g.id(key)))
		}
		return append(args, ">")
	case 19:
		other := g.key()
		return []string{"XREAD", "COUNT", g.n(5), "STREAMS", key, other, g.id(key), g.pick("0", g.id(other))}
	case 20, 21:
		return append([]string{"XACK", key, g.group()}, g.ids(key)...)
	case 22:
		if g.r.IntN(3) == 0 {
			return []string{"XPENDING", key, g.group()}
		}
		args := []string{"XPENDING", key, g.group()}
		if g.r.IntN(3) == 0 {
			args = append(args, "IDLE", g.pick("0", "50000000", "1000000000000"))
		}
		args = append(args, g.bound(key), g.pick("+", g.bound(key)), g.n(12))
		if g.r.IntN(3) == 0 {
			args = append(args, g.consumer())
		}
		return args
	case 23, 24:
		args := append([]string{"XCLAIM", key, g.group(), g.consumer(), g.pick("0", "0", "1000000000000")}, g.ids(key)...)
		for range g.r.IntN(3) {
			switch g.r.IntN(5) {
			case 0:
				args = append(args, "IDLE", "100000000")
			case 1:
				args = append(args, "RETRYCOUNT", g.n(5))
			case 2:
				args = append(args, "FORCE")
			case 3:
				args = append(args, "JUSTID")
			case 4:
				args = append(args, "LASTID", g.id(key))
			}
		}
		return args
	case 25:
		args := []string{"XAUTOCLAIM", key, g.group(), g.consumer(), g.pick("0", "0", "1000000000000"), g.pick("0", "-", g.bound(key))}
		if g.r.IntN(2) == 0 {
			args = append(args, "COUNT", strconv.Itoa(1+g.r.IntN(5)))
		}
		if g.r.IntN(3) == 0 {
			args = append(args, "JUSTID")
		}
		return args
	case 26, 27:
		switch g.r.IntN(4) {
		case 0:
			return []string{"XINFO", "STREAM", key}
		case 1:
			return []string{"XINFO", "STREAM", key, "FULL", "COUNT", g.n(5)}
		case 2:
			return []string{"XINFO", "GROUPS", key}
		}
		return []string{"XINFO", "CONSUMERS", key, g.group()}
	case 28:
		// Not below the stream's last ID: the xstream server refuses an ID
		// below an entry deleted from the end, which Redis 7.0 allows.
		last := g.last(key)
		id := xstream.MaxID()
		if last.Ms < 1<<62 {
			id = xstream.ID{Ms: last.Ms + uint64(g.r.IntN(3)), Seq: uint64(g.r.IntN(3))}
			if id.Less(last) {
				id = last
			}
			g.lastMs[key] = max(g.lastMs[key], int(id.Ms))
		}
		args := []string{"XSETID", key, id.String()}
		if g.r.IntN(3) == 0 {
			args = append(args, "ENTRIESADDED", g.n(200))
		}
		if g.r.IntN(3) == 0 {
			args = append(args, "MAXDELETEDID", g.id(key))
		}
		return args
	}
	if g.r.IntN(10) == 0 {
		return []string{"DEL", key}
	}
	return []string{"DBSIZE"}
}

func init() {
	if s := os.Getenv("XSTREAM_DIFF_LOG"); s != "" {
		logTail, _ = strconv.Atoi(s)
	}
}
