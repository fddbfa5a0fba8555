package xredis_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream"
)

// TestClusterMigration moves the hash slot of a test's streams to another
// node while the engine uses them: during the migration a new stream of
// the slot is created through an ASK redirection, and afterwards every
// call on the slot's streams follows the MOVED redirection, blocking
// reads and group reads included.
func TestClusterMigration(t *testing.T) {
	e := newEngine(t, "cluster")
	ctx := bg()
	k := tagged(t)
	s, s2 := k("m", "s"), k("m", "s2")
	add(t, e, s, "1-1", "a", "1")
	require.NoError(t, e.CreateGroup(ctx, s, "g", "0", xstream.GroupOptions{}))
	slot := keySlot(t, e, s)

	// The slot's node, and another.
	nodes := e.Client().Nodes()
	var src, dst rueidis.Client
	var srcAddr, dstAddr string
	for addr, c := range nodes {
		n, err := c.Do(ctx, c.B().Arbitrary("CLUSTER", "COUNTKEYSINSLOT").Args(strconv.FormatInt(slot, 10)).Build()).AsInt64()
		require.NoError(t, err)
		if n > 0 && src == nil {
			src, srcAddr = c, addr
		}
	}
	require.NotNil(t, src)
	for addr, c := range nodes {
		if addr != srcAddr {
			dst, dstAddr = c, addr
			break
		}
	}
	myID := func(c rueidis.Client) string {
		id, err := c.Do(ctx, c.B().Arbitrary("CLUSTER", "MYID").Build()).ToString()
		require.NoError(t, err)
		return id
	}
	srcID, dstID := myID(src), myID(dst)
	do := func(c rueidis.Client, args ...string) {
		t.Helper()
		require.NoError(t, c.Do(ctx, c.B().Arbitrary(args[0]).Args(args[1:]...).Build()).Error(), "%v", args)
	}
	do(dst, "CLUSTER", "SETSLOT", strconv.FormatInt(slot, 10), "IMPORTING", srcID)
	do(src, "CLUSTER", "SETSLOT", strconv.FormatInt(slot, 10), "MIGRATING", dstID)

	// A stream the source does not have goes to the destination (ASK).
	add(t, e, s2, "2-2", "b", "2")
	n, err := dst.Do(ctx, dst.B().Arbitrary("CLUSTER", "COUNTKEYSINSLOT").Args(strconv.FormatInt(slot, 10)).Build()).AsInt64()
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "the new stream is on the destination")

	host, port := splitAddr(t, dstAddr)
	do(src, "MIGRATE", host, port, "", "0", "5000", "KEYS", s)
	for _, c := range nodes {
		do(c, "CLUSTER", "SETSLOT", strconv.FormatInt(slot, 10), "NODE", dstID)
	}

	// Every call now finds the streams on their new node.
	es, err := e.Range(ctx, s, "-", "+", 0)
	require.NoError(t, err)
	require.Len(t, es, 1)
	out, err := e.Read(ctx, xstream.ReadArgs{}, s, "0", s2, "0")
	require.NoError(t, err)
	require.Len(t, out, 2)
	got, err := e.ReadGroup(ctx, "g", "c", xstream.ReadGroupArgs{}, s, ">")
	require.NoError(t, err)
	require.Len(t, got, 1)
	type result struct {
		out []xstream.StreamEntries
		err error
	}
	done := make(chan result)
	go func() {
		out, err := e.ReadGroup(ctx, "g", "c", xstream.ReadGroupArgs{Block: 5 * time.Second}, s, ">")
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("the read ended before an add: %v %v", r.out, r.err)
	default:
	}
	waitBlocked(t, "cluster", e, 1, s)
	add(t, e, s, "3-3", "c", "3")
	r := <-done
	require.NoError(t, r.err)
	require.Len(t, r.out, 1)
	require.Equal(t, xstream.ID{Ms: 3, Seq: 3}, r.out[0].Entries[0].ID)
}

func splitAddr(t *testing.T, addr string) (string, string) {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			return addr[:i], addr[i+1:]
		}
	}
	t.Fatalf("bad address %q", addr)
	return "", ""
}
