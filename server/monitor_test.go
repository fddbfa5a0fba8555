package server

import (
	"strings"
	"testing"
	"time"
)

func TestDiffMonitor(t *testing.T) {
	trackScript(t, "M W", `
M MONITOR
W PING
W SELECT 1
W XADD s 1-1 "a\x20b" "q\"x\x00\xff\n\r\t\a\b\\~"
W SELECT 0
W AUTH foo
W AUTH u p
W HELLO 2 AUTH default secret
W HELLO 2 SETNAME x
W CONFIG GET maxclients
W CLIENT KILL ID 999
W CLIENT ID
W NOSUCH x
W XADD s
W MULTI
W XLEN s
W XADD s 2-1 f v
W EXEC
W XREAD BLOCK 10 STREAMS nokey $
W XREAD STREAMS s 0
W ECHO ""
M PING
M XLEN s
M XADD s 3-1 f v
M! MONITOR
M CLIENT ID
M ECHO x
M MULTI
M RESET
M PING
W PING
W MULTI
W MONITOR
W EXEC
`)
}

// A MONITOR line has the time of the server's clock, to the microsecond.
func TestMonitorLineTime(t *testing.T) {
	srv := RunT(t)
	srv.SetTime(time.Unix(1700000000, 42000))
	m, w := dialWire(t, srv.Addr()), dialWire(t, srv.Addr())
	expectWire(t, m, "+OK\r\n", "MONITOR")
	addr := w.nc.LocalAddr().String()
	expectWire(t, w, "$2\r\nhi\r\n", "ECHO", "hi")
	if got, want := string(m.push(t)), "+1700000000.000042 [0 "+addr+`] "ECHO" "hi"`+"\r\n"; got != want {
		t.Fatalf("line %q, want %q", got, want)
	}
	// After the monitor leaves, nothing more is sent to it.
	expectWire(t, m, "+RESET\r\n", "RESET")
	expectWire(t, w, "+PONG\r\n", "PING")
	expectWire(t, m, "+PONG\r\n", "PING")
}

// A blocking command is shown when it blocks, not when it ends. (It reads
// from 0, not $: the line goes out just before the read resolves $ and
// waits, so an XADD sent on seeing it could come first.)
func TestMonitorShowsBlockedCommand(t *testing.T) {
	srv := RunT(t)
	m, w, a := dialWire(t, srv.Addr()), dialWire(t, srv.Addr()), dialWire(t, srv.Addr())
	expectWire(t, m, "+OK\r\n", "MONITOR")
	w.send(t, "XREAD", "BLOCK", "0", "STREAMS", "s", "0")
	line := string(m.push(t)) // while w waits
	if want := `"XREAD" "BLOCK" "0" "STREAMS" "s" "0"` + "\r\n"; !strings.HasSuffix(line, want) {
		t.Fatalf("line %q, want it to end with %q", line, want)
	}
	expectWire(t, a, "$3\r\n1-1\r\n", "XADD", "s", "1-1", "f", "v")
	if got := string(w.reply(t)); got != "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n" {
		t.Fatalf("XREAD: %q", got)
	}
	if line := string(m.push(t)); !strings.HasSuffix(line, `"XADD" "s" "1-1" "f" "v"`+"\r\n") {
		t.Fatalf("line %q", line)
	}
}
