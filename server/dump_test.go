package server

import (
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xstreamgo/xstream"
)

// DUMP: xstream's payloads restore in Redis 7.0 to the same stream, and
// Redis's in xstream.

// dumpScript builds, on both servers, a stream with many nodes' worth of
// entries (integers of every listpack width, strings of every length
// encoding, entries with the first entry's fields and others), deletions,
// groups, consumers and pending entries (some deleted since).
func dumpScript(p *pair) {
	long := strings.Repeat("abcdefghij", 500) // past 4095 bytes
	mid := strings.Repeat("xyz", 30)          // 64-4095 bytes
	vals := []string{"0", "127", "128", "-1", "-4096", "4095", "4096", "-32768", "32767", "40000", "-8388608",
		"8388607", "9000000", "-2147483648", "2147483647", "3000000000", "-9223372036854775808", "9223372036854775807",
		"9223372036854775808", "007", "-0", "+1", "1.5", "", mid, long}
	for i, v := range vals {
		p.do("XADD", "src", strconv.Itoa(i+1)+"-"+strconv.Itoa(i), "f", v, "g", "x")
	}
	for i := range 230 {
		if i%7 == 0 {
			p.do("XADD", "src", strconv.Itoa(1000+i)+"-0", "other", strconv.Itoa(i))
			continue
		}
		p.do("XADD", "src", strconv.Itoa(1000+i)+"-0", "f", strconv.Itoa(i*i), "g", "y")
	}
	p.do("XDEL", "src", "2-1", "1005-0", "1100-0")
	p.do("XGROUP", "CREATE", "src", "g1", "0")
	p.do("XGROUP", "CREATE", "src", "g2", "$")
	p.do("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "3", "STREAMS", "src", ">")
	p.do("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "2", "STREAMS", "src", ">")
	p.do("XCLAIM", "src", "g1", "bob", "0", "1-0")
	p.do("XGROUP", "CREATECONSUMER", "src", "g1", "carol")
	p.do("XDEL", "src", "3-2")
	p.do("XADD", "empty", "MAXLEN", "0", "7-7", "f", "v")
	p.do("XGROUP", "CREATE", "empty", "g", "$")
}

func TestDiffDump(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		dumpScript(p)
		for _, key := range []string{"src", "empty"} {
			fromXS := p.xs.do(t, "DUMP", key)
			fromRedis := p.real.do(t, "DUMP", key)
			if fromXS.kind != '$' || fromXS.null || fromRedis.kind != '$' {
				t.Fatalf("DUMP %s: %v, %v", key, fromXS, fromRedis)
			}
			for _, payload := range []string{fromXS.s, fromRedis.s} {
				p.do("DEL", "r")
				p.do("RESTORE", "r", "0", payload)
				p.do("XINFO", "STREAM", "r", "FULL")
				p.do("XRANGE", "r", "-", "+")
				p.do("XREVRANGE", "r", "+", "-")
				p.do("XINFO", "GROUPS", "r")
				p.do("XPENDING", "r", "g1", "-", "+", "10")
				// The restored stream goes on as the original.
				p.do("XADD", "r", "5000-0", "f", "v", "g", "z")
				p.do("XREVRANGE", "r", "+", "-", "COUNT", "3")
			}
		}
		p.do("DUMP", "nosuch")
		p.do("DUMP")
		p.do("DUMP", "a", "b")
	})
}

// DUMP then RESTORE inside xstream gives the stream back, whatever it
// holds.
func TestDumpRestoreRandom(t *testing.T) {
	srv := RunT(t)
	srv.SetTime(time.UnixMilli(1_700_000_000_000))
	c := newClient(t, srv.Addr())
	rng := rand.New(rand.NewPCG(11, 12))
	word := func() string {
		switch rng.IntN(4) {
		case 0:
			return strconv.FormatInt(rng.Int64()>>rng.IntN(64)*int64(1-2*rng.IntN(2)), 10)
		case 1:
			return strings.Repeat("q", rng.IntN(5000))
		default:
			return "w" + strconv.Itoa(rng.IntN(5))
		}
	}
	db := srv.DB(0)
	for round := range 40 {
		name := "s" + strconv.Itoa(round)
		s := db.Stream(name)
		for range rng.IntN(400) {
			var fields []string
			for range 1 + rng.IntN(4) {
				fields = append(fields, word(), word())
			}
			if _, err := s.Add(xstream.AddArgs{}, xstream.Fields(fields...)...); err != nil {
				t.Fatal(err)
			}
			srv.FastForward(time.Duration(rng.IntN(3)) * time.Millisecond)
		}
		for g := range rng.IntN(3) {
			gn := "g" + strconv.Itoa(g)
			c.do(t, "XGROUP", "CREATE", name, gn, "0")
			for k := range rng.IntN(4) {
				c.do(t, "XREADGROUP", "GROUP", gn, "c"+strconv.Itoa(k), "COUNT", strconv.Itoa(rng.IntN(30)), "STREAMS", name, ">")
				srv.FastForward(time.Duration(rng.IntN(1000)) * time.Millisecond)
			}
		}
		if info, _ := s.Info(); info.Length > 0 && rng.IntN(2) == 0 {
			c.do(t, "XDEL", name, info.FirstEntry.ID.String(), info.LastEntry.ID.String())
		}
		payload := c.do(t, "DUMP", name)
		if r := c.do(t, "RESTORE", "copy", "0", payload.s, "REPLACE"); r.s != "OK" {
			t.Fatalf("round %d: RESTORE: %v", round, r)
		}
		back, _ := db.Lookup("copy")
		want, _ := s.InfoFull(0)
		got, _ := back.InfoFull(0)
		want.RadixTreeKeys, got.RadixTreeKeys = 0, 0
		if !reflect.DeepEqual(want.Entries, got.Entries) {
			t.Fatalf("round %d: restored entries differ", round)
		}
		want.Entries, got.Entries = nil, nil
		// Redis 7.0's format keeps no active time (7.2's type 21 does).
		for _, info := range []*xstream.StreamInfo{&want, &got} {
			for i := range info.GroupDetails {
				for k := range info.GroupDetails[i].Consumers {
					cd := &info.GroupDetails[i].Consumers[k]
					cd.ActiveTime, cd.Inactive, cd.InactiveKnown = time.Time{}, 0, false
				}
			}
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("round %d: restored:\n%+v\nwant\n%+v", round, got, want)
		}
	}
}
