package xstream

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// The decoding checks of effIdempotence: a log whose idempotence effects
// do not fit the stream is refused with ErrCorrupt, naming what is wrong.
func TestReplayIdempotenceChecks(t *testing.T) {
	str := func(b []byte, s string) []byte { return appendStr(b, s) }
	uv := binary.AppendUvarint
	// The stream "s" with the entry 5-0, added by p's "i" at 5 ms.
	create := str(append(uv(nil, 1), effCreateStream), "s")
	create = append(create, effAppend, 5, 0, 1)
	create = str(str(create, "f"), "v")
	track := func(producer, iid string, ms, now uint64) []byte {
		b := append(uv(nil, 1), effIdempotence, idmpTrack)
		b = str(str(b, producer), iid)
		return uv(uv(uv(b, ms), 0), now)
	}
	set := func(dur, size uint64) []byte {
		return uv(uv(append(uv(nil, 1), effIdempotence, idmpSet), dur), size)
	}
	replay := func(records ...[]byte) error {
		r := newReplayer(newDB(newConfig(nil)))
		for i, p := range records {
			r.lsn = uint64(i + 1)
			if err := r.apply(p); err != nil {
				return err
			}
		}
		return nil
	}
	require.NoError(t, replay(create, track("p", "i", 5, 5), set(60, 3)), "a sound log")
	for _, c := range []struct {
		records [][]byte
		names   []string
	}{
		{[][]byte{create, track("p", "i", 6, 6)}, []string{"idempotent add of 6-0", "last ID is 5-0"}},
		{[][]byte{create, track("", "i", 5, 5)}, []string{`producer ""`}},
		{[][]byte{create, track("p", "", 5, 5)}, []string{`producer "p"`}},
		{[][]byte{create, track("p", "i", 5, 5), track("p", "i", 5, 6)}, []string{`producer "p"`, "while remembered", "5-0"}},
		{[][]byte{create, set(0, 3)}, []string{"setting 0s, 3"}},
		{[][]byte{create, set(60, 10001)}, []string{"setting 60s, 10001"}},
		{[][]byte{create, append(uv(nil, 1), effIdempotence, 9)}, []string{"unknown idempotence effect 9"}},
		{[][]byte{create, append(uv(nil, 1), effIdempotence, idmpTrack, 1)}, nil}, // cut short
	} {
		requireErr(t, replay(c.records...), ErrCorrupt, c.names...)
	}
}
