package server

import (
	"bytes"
	"encoding/binary"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/xstreamgo/xstream"
)

// lastRecord returns the offsets where the last whole frame of a log
// segment's bytes starts and ends: frames are a 4-byte length, a 4-byte
// checksum and the payload, after a 24-byte header.
func lastRecord(b []byte) (start, end int) {
	start, end = -1, 24
	for end+8 <= len(b) {
		n := int(binary.LittleEndian.Uint32(b[end:]))
		if n > len(b)-end-8 {
			break
		}
		start, end = end, end+8+n
	}
	return start, end
}

// A durable server whose log ends in a write torn by a crash starts with
// the entries before it, logs one line for the cut, and INFO persistence
// counts its bytes (aof_last_load_truncated_bytes, 0 after a whole log).
// A byte flipped in the last record, acknowledged under always, makes
// Start fail with xstream.ErrCorrupt naming the file and the offset.
func TestLogCutAtStart(t *testing.T) {
	dir := t.TempDir()
	start := func(logs *syncBuffer) (*Server, error) {
		srv := New(Options{Dir: dir, AppendFsync: xstream.SyncAlways, Logger: slog.New(slog.NewTextHandler(logs, nil))})
		return srv, srv.Start()
	}
	truncated := func(srv *Server) string {
		for _, f := range infoFields(t, newClient(t, srv.Addr()).do(t, "INFO", "persistence"), "Persistence") {
			if f[0] == "aof_last_load_truncated_bytes" {
				return f[1]
			}
		}
		t.Fatal("no aof_last_load_truncated_bytes in INFO persistence")
		return ""
	}
	const cutLine = "xstream server: the end of a log was not whole records"

	var logs syncBuffer
	srv, err := start(&logs)
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, srv.Addr())
	for i := range 100 {
		c.do(t, "XADD", "s", "*", "n", strconv.Itoa(i))
	}
	if got := truncated(srv); got != "0" {
		t.Errorf("aof_last_load_truncated_bytes:%s after a whole log", got)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), cutLine) {
		t.Errorf("a cut logged for a whole log:\n%s", logs.String())
	}

	// Torn: the last record cut after 11 bytes, the file ending there.
	seg := filepath.Join(dir, "0", "00000000000000000001.log")
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	last, _ := lastRecord(b)
	torn := b[:last+11]
	if err := os.WriteFile(seg, torn, 0o600); err != nil {
		t.Fatal(err)
	}
	cut := len(bytes.TrimRight(torn[last:], "\x00"))
	logs = syncBuffer{}
	srv, err = start(&logs)
	if err != nil {
		t.Fatal(err)
	}
	if n := newClient(t, srv.Addr()).do(t, "XLEN", "s").String(); n != ":99" {
		t.Errorf("XLEN s after the cut: %s, want 99", n)
	}
	if got := truncated(srv); got != strconv.Itoa(cut) {
		t.Errorf("aof_last_load_truncated_bytes:%s, want %d", got, cut)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	text := logs.String()
	if strings.Count(text, cutLine) != 1 {
		t.Errorf("not one cut line in the log:\n%s", text)
	}
	for _, want := range []string{"level=WARN", "db=0", "file=" + seg, "offset=" + strconv.Itoa(last), "bytes=" + strconv.Itoa(cut), "reason="} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in the log:\n%s", want, text)
		}
	}

	// Damaged: a byte of the last record, which Close left synced and
	// marked so.
	if b, err = os.ReadFile(seg); err != nil {
		t.Fatal(err)
	}
	last, end := lastRecord(b)
	b[end-2] ^= 0x08
	if err := os.WriteFile(seg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	logs = syncBuffer{}
	srv, err = start(&logs)
	if err == nil {
		srv.Close()
		t.Fatal("Start succeeded on a log whose last, synced record is damaged")
	}
	if !errors.Is(err, xstream.ErrCorrupt) || !strings.Contains(err.Error(), seg) || !strings.Contains(err.Error(), "offset "+strconv.Itoa(last)) {
		t.Errorf("Start: %v; want ErrCorrupt naming %s at offset %d", err, seg, last)
	}
}
