package server

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// Before AUTH, a client of a server with a password may send requests of
// at most 10 arguments and bulks of at most 16 KiB, as in Redis 7: a
// larger *N or $N header gets "Protocol error: unauthenticated multibulk
// length" or "... bulk length" as it arrives, and the connection closes.
// Each request is framed with the limits in force once the requests before
// it have run, so that an AUTH in a pipeline lifts them for what follows
// it. Compared byte for byte with a redis-server started with the same
// requirepass; every input ends in an error that closes the connection, so
// that the whole exchange can be read to its end.
func TestUnauthenticatedLimitsLikeRedis(t *testing.T) {
	redisAddr := redisWithT(t, "--requirepass", "pw")
	srv := RunTWith(t, Options{Password: "pw"})

	const closeUnauth = "*11\r\n"         // refused before AUTH
	const closeAuthed = "*2147483648\r\n" // refused after it too
	echo := func(n int) string { return resp("ECHO", strings.Repeat("x", n)) }
	words := func(n int) []string { return append([]string{"ECHO"}, strings.Fields(strings.Repeat("w ", n-1))...) }
	for _, tc := range []struct{ name, in string }{
		{"11 arguments", closeUnauth},
		{"11 arguments, header alone", "*11\r\n$4\r\nECHO\r\n"},
		{"10 arguments", resp(words(10)...) + closeUnauth},
		{"bulk of 16 KiB + 1", "*2\r\n$4\r\nECHO\r\n$16385\r\n"},
		{"bulk of 16 KiB", echo(16<<10) + closeUnauth},
		{"a million arguments", "*1000000\r\n"},
		{"after a command refused with NOAUTH", resp("PING") + closeUnauth},
		{"inline request of 20 words", strings.Join(words(20), " ") + "\r\n" + closeUnauth},
		{"after a wrong password", resp("AUTH", "nope") + closeUnauth},
		{"after AUTH: 11 arguments", resp("AUTH", "pw") + resp(words(11)...) + closeAuthed},
		{"after AUTH in the same pipeline: a 20 KB bulk", resp("AUTH", "pw") + echo(20000) + closeAuthed},
		{"after AUTH default pw", resp("AUTH", "default", "pw") + resp(words(12)...) + closeAuthed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := exchangeToEOF(t, redisAddr, tc.in)
			got := exchangeToEOF(t, srv.Addr(), tc.in)
			if got != want {
				t.Fatalf("%.80q:\n got  %.300q\n want %.300q", tc.in, got, want)
			}
		})
	}
}

// exchangeToEOF sends in to addr and returns all that comes back until the
// server closes the connection.
func exchangeToEOF(t *testing.T, addr, in string) string {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	go nc.Write([]byte(in)) // the server may close before it has read all
	out, err := io.ReadAll(nc)
	if err != nil && !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("%.80q: %v after %.200q", in, err, out)
	}
	return string(out)
}
