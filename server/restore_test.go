package server

import (
	"testing"

	"github.com/xstreamgo/xstream"
)

// RESTORE of the DUMP payloads a real Redis 7.0 gives: both servers
// restore them, and the streams must then answer alike.
func TestDiffRestore(t *testing.T) {
	p := newPair(t)
	// A stream with deletions, several nodes, groups, consumers and
	// pending entries (some of them deleted since), in the real Redis.
	p.real.do(t, "CONFIG", "SET", "stream-node-max-entries", "3")
	t.Cleanup(func() { p.real.do(t, "CONFIG", "SET", "stream-node-max-entries", "100") })
	for i := 1; i <= 10; i++ {
		p.real.do(t, "XADD", "src", itoa(i)+"-1", "f", itoa(i), "g", "x")
	}
	p.real.do(t, "XADD", "src", "11-1", "other", "fields", "n", "-70000")
	p.real.do(t, "XADD", "src", "12-1", "big", "123456789012", "neg", "-5")
	p.real.do(t, "XDEL", "src", "2-1", "5-1")
	p.real.do(t, "XGROUP", "CREATE", "src", "g1", "0")
	p.real.do(t, "XGROUP", "CREATE", "src", "g2", "$")
	p.real.do(t, "XREADGROUP", "GROUP", "g1", "alice", "COUNT", "3", "STREAMS", "src", ">")
	p.real.do(t, "XREADGROUP", "GROUP", "g1", "bob", "COUNT", "2", "STREAMS", "src", ">")
	p.real.do(t, "XGROUP", "CREATECONSUMER", "src", "g1", "carol")
	p.real.do(t, "XDEL", "src", "3-1")
	p.real.do(t, "XADD", "empty", "MAXLEN", "0", "7-7", "f", "v")
	p.real.do(t, "XGROUP", "CREATE", "empty", "g", "$")
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'a' + byte(i%26)
	}
	p.real.do(t, "XADD", "long", "1-1", "field", string(long)+string(long)) // LZF-compressed in the payload
	payloads := map[string]string{}
	for _, key := range []string{"src", "empty", "long"} {
		payloads[key] = p.real.do(t, "DUMP", key).s
	}
	p.real.do(t, "DEL", "src", "empty", "long") // the xstream server never had them
	for _, key := range []string{"src", "empty", "long"} {
		p.do("RESTORE", "r-"+key, "0", payloads[key])
		p.do("XINFO", "STREAM", "r-"+key, "FULL")
		p.do("XRANGE", "r-"+key, "-", "+")
		p.do("TTL", "r-"+key)
		// Restored streams work as any other.
		p.do("XADD", "r-"+key, "100-1", "f", "v")
		p.do("XINFO", "GROUPS", "r-"+key)
	}
	p.do("XPENDING", "r-src", "g1", "-", "+", "10")
	p.do("XINFO", "CONSUMERS", "r-src", "g1")

	payload := payloads["src"]
	p.do("RESTORE", "r-src", "0", payload) // exists: BUSYKEY
	p.do("RESTORE", "r-src", "0", payload, "REPLACE")
	p.do("XLEN", "r-src")
	p.do("RESTORE", "ttl", "100000000", payload)
	p.do("TTL", "ttl")
	p.do("RESTORE", "abs", "4100000000000", payload, "ABSTTL", "IDLETIME", "10")
	p.do("PEXPIRETIME", "abs")
	p.do("RESTORE", "past", "1", payload, "ABSTTL") // expired: OK, nothing made
	p.do("EXISTS", "past")
	p.do("RESTORE", "r-src", "1", payload, "ABSTTL", "REPLACE") // expired, REPLACE: the old key goes
	p.do("EXISTS", "r-src")
	p.do("RESTORE", "f", "0", payload, "FREQ", "10")
	p.keyspace()

	// Bad input: Redis's errors, and nothing changes.
	bad := []byte(payload)
	bad[3] ^= 1
	p.do("RESTORE", "x", "0", string(bad))
	p.do("RESTORE", "x", "0", payload[:len(payload)-1])
	p.do("RESTORE", "x", "0", "short")
	p.do("RESTORE", "x", "-1", payload)
	p.do("RESTORE", "x", "abc", payload)
	p.do("RESTORE", "x", "0", payload, "FOO")
	p.do("RESTORE", "x", "0", payload, "IDLETIME", "-1")
	p.do("RESTORE", "x", "0", payload, "IDLETIME", "x")
	p.do("RESTORE", "x", "0", payload, "FREQ", "256")
	p.do("RESTORE", "x", "0", payload, "FREQ", "1", "IDLETIME", "1")
	p.do("RESTORE", "x", "0", payload, "IDLETIME")
	p.do("RESTORE", "x", "0")
	p.do("RESTORE", "abs", "0", "short") // BUSYKEY comes first
	p.do("EXISTS", "x")
	p.keyspace()
}

// legacyDump encodes, as Redis 5 to 6.2 did (RDB type 15, no
// entries-added or entries-read counters), a stream of one node with
// entries ms-0 (field "f", value the ms) for ms in ids, deleted ones
// flagged, and one group g whose consumer c owns the pending entries
// pending, with last delivered ID lastDelivered-0.
func legacyDump(ids []int, deleted map[int]bool, lastDelivered int, pending []int) string {
	lpStr := func(b []byte, s string) []byte { // 6-bit string, short
		b = append(b, 0x80|byte(len(s)))
		b = append(b, s...)
		return append(b, byte(1+len(s)))
	}
	lpInt := func(b []byte, v int) []byte { // 7-bit unsigned
		return append(b, byte(v), 1)
	}
	var body []byte
	live := 0
	for _, ms := range ids {
		if !deleted[ms] {
			live++
		}
	}
	body = lpInt(body, live)
	body = lpInt(body, len(ids)-live)
	body = lpInt(body, 1)
	body = lpStr(body, "f")
	body = lpInt(body, 0)
	n := 5
	for _, ms := range ids {
		flags := lpFlagSameFields
		if deleted[ms] {
			flags |= lpFlagDeleted
		}
		body = lpInt(body, flags)
		body = lpInt(body, ms-ids[0])
		body = lpInt(body, 0)
		body = lpStr(body, itoa(ms))
		body = lpInt(body, 4)
		n += 5
	}
	lp := make([]byte, 6, 6+len(body)+1)
	lp = append(lp, body...)
	lp = append(lp, 0xff)
	lp[0], lp[1], lp[2], lp[3] = byte(len(lp)), byte(len(lp)>>8), 0, 0
	lp[4], lp[5] = byte(n), 0
	str := func(b []byte, s []byte) []byte { return append(append(b, byte(len(s))), s...) } // lengths < 64
	raw := func(b []byte, ms int) []byte {
		return append(b, 0, 0, 0, 0, 0, 0, 0, byte(ms), 0, 0, 0, 0, 0, 0, 0, 0)
	}
	b := []byte{rdbTypeStreamListpacks, 1}
	b = str(b, raw(nil, ids[0]))
	b = append(b, 0x40|byte(len(lp)>>8), byte(len(lp))) // a 14-bit length
	b = append(b, lp...)
	b = append(b, byte(live), byte(ids[len(ids)-1]), 0) // length, last ID
	b = append(b, 1)                                    // one group
	b = str(b, []byte("g"))
	b = append(b, byte(lastDelivered), 0)
	b = append(b, byte(len(pending)))
	for _, ms := range pending {
		b = raw(b, ms)
		b = append(b, 0x10, 0x27, 0, 0, 0, 0, 0, 0) // delivered at 10000 ms
		b = append(b, 1)
	}
	b = append(b, 1) // one consumer
	b = str(b, []byte("c"))
	b = append(b, 0x20, 0x4e, 0, 0, 0, 0, 0, 0) // seen at 20000 ms
	b = append(b, byte(len(pending)))
	for _, ms := range pending {
		b = raw(b, ms)
	}
	b = append(b, 9, 0) // RDB version 9 (Redis 6.2)
	crc := crc64Jones(b)
	for i := range 8 {
		b = append(b, byte(crc>>(8*i)))
	}
	return string(b)
}

// A payload of Redis 6.2 or older: the counters Redis 7.0 estimates on
// loading (entries-added, the groups' entries-read) come out as its do
// (Redis's stream-cgroups.tcl "Loading from legacy ... persistence").
func TestDiffRestoreLegacy(t *testing.T) {
	p := newPair(t)
	for i, tc := range []struct {
		ids           []int
		deleted       map[int]bool
		lastDelivered int
		pending       []int
	}{
		{[]int{5, 6}, nil, 5, []int{1, 2, 4, 5}},
		{[]int{5, 6}, nil, 0, nil},
		{[]int{5, 6, 7}, map[int]bool{6: true}, 6, []int{6}},
		{[]int{3, 4}, nil, 9, nil},
	} {
		key := "legacy" + itoa(i)
		p.do("RESTORE", key, "0", legacyDump(tc.ids, tc.deleted, tc.lastDelivered, tc.pending))
		p.do("XINFO", "STREAM", key, "FULL")
		p.do("XINFO", "GROUPS", key)
	}
}

// FuzzDecodeStreamDump: no payload makes the decoder panic, and what it
// accepts is either a consistent image or refused by DB.Restore.
func FuzzDecodeStreamDump(f *testing.F) {
	f.Add([]byte(legacyDump([]int{5, 6, 7}, map[int]bool{6: true}, 6, []int{6})))
	f.Add([]byte(legacyDump([]int{1}, nil, 0, nil)))
	f.Fuzz(func(t *testing.T, payload []byte) {
		obj := payload
		if len(obj) > 10 {
			obj = obj[:len(obj)-10]
		}
		img, err := decodeStreamDump(obj)
		if err != nil {
			return
		}
		db := xstream.NewDB()
		db.Restore("s", img, true) // an inconsistent image is an error, never a panic
	})
}
