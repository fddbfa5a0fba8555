package server

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// Requests sent as raw bytes over TCP, to the xstream server and, when
// there is one, to a real Redis: what each answers and whether it closes
// the connection.

// rawExchange writes in to addr and reads the replies. With open, it then
// sends ECHO end and reads up to its reply, so that the replies are known
// to be all there, and checks that the connection still works; without,
// it reads until the server closes the connection.
func rawExchange(t *testing.T, addr, in string, open bool) []string {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	nc.SetDeadline(time.Now().Add(time.Minute)) // a hung server fails the test
	if open {
		in += resp("ECHO", "end")
	}
	wrote := make(chan struct{})
	go func() { // a refused request is not read to its end
		defer close(wrote)
		nc.Write([]byte(in))
	}()
	defer func() { nc.Close(); <-wrote }()
	rd := bufio.NewReader(nc)
	var out []string
	for {
		r, err := readReply(rd)
		if errors.Is(err, io.EOF) && !open {
			return out
		}
		if err != nil {
			t.Fatalf("%.60q to %s: after %q: %v", in, addr, out, err)
		}
		if open && r.String() == `$"end"` {
			return out
		}
		out = append(out, r.String())
	}
}

func TestWireRequests(t *testing.T) {
	long := "ECHO " + strings.Repeat("a", maxInline-6) // a line of 64 KiB - 1
	for _, tc := range []struct {
		name string
		in   string
		want string // the replies, space-separated
		open bool   // the connection stays open
	}{
		{"empty requests", "*0\r\n*-1\r\nPING\r\n", `+"PONG"`, true},
		{"empty then multibulk", "*0\r\n" + resp("PING"), `+"PONG"`, true},
		{"negative counts", "*-5\r\n*-2147483648\r\n" + resp("ECHO", "x"), `$"x"`, true},
		{"empty lines", "\r\n\n  \r\nPING\r\n\r\n", `+"PONG"`, true},
		{"inline quotes", `ECHO "a b"` + "\r\n" + `ECHO 'c\'d'` + "\r\n" + `ECHO "e\n"` + "\r\n", `$"a b" $"c'd" $"e\n"`, true},
		{"long inline", long + "\r\n", `$"` + long[5:] + `"`, true},
		{"unbalanced quotes", "PING\r\nECHO \"a\r\nPING\r\n", `+"PONG" -"ERR Protocol error: unbalanced quotes in request"`, false},
		{"text after quotes", "ECHO 'a'b\r\n", `-"ERR Protocol error: unbalanced quotes in request"`, false},
		{"too big inline", "PING\r\n" + long + "aa", `+"PONG" -"ERR Protocol error: too big inline request"`, false},
		{"count with CR missing", "PING\r\n*0\nPING\r\n", `+"PONG" -"ERR Protocol error: invalid multibulk length"`, false},
		{"count -0", "*-0\r\n", `-"ERR Protocol error: invalid multibulk length"`, false},
		{"count +1", "*+1\r\n$4\r\nPING\r\n", `-"ERR Protocol error: invalid multibulk length"`, false},
		{"length 04", "*1\r\n$04\r\nPING\r\n", `-"ERR Protocol error: invalid bulk length"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addrs := []string{RunT(t).Addr()}
			if realAddr != "" {
				addrs = append(addrs, realAddr)
			}
			for _, addr := range addrs {
				if got := strings.Join(rawExchange(t, addr, tc.in, tc.open), " "); got != tc.want {
					t.Fatalf("%s:\n  got  %.200s\n  want %.200s", addr, got, tc.want)
				}
			}
		})
	}
}
