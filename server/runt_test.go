package server

import (
	"fmt"
	"net"
	"strings"
	"testing"
)

// fakeTester is a Tester that is not a testing.TB (it has no Output): it
// records what it is told, and its Fatalf returns.
type fakeTester struct {
	logs, errs, fatals []string
	cleanups           []func()
}

func (f *fakeTester) Helper()           {}
func (f *fakeTester) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTester) Logf(format string, a ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, a...))
}
func (f *fakeTester) Errorf(format string, a ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, a...))
}
func (f *fakeTester) Fatalf(format string, a ...any) {
	f.fatals = append(f.fatals, fmt.Sprintf(format, a...))
}

// end runs the cleanups, last first, as testing does.
func (f *fakeTester) end() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

// RunT takes any Tester: the server's log goes to its Logf, a line for
// each record, and its cleanup closes the server.
func TestRunTTester(t *testing.T) {
	ft := &fakeTester{}
	srv := RunT(ft)
	if srv == nil {
		t.Fatalf("RunT returned nil: %q", ft.fatals)
	}
	expect(t, newClient(t, srv.Addr()), `+"PONG"`, "PING")
	if len(ft.logs) == 0 || !strings.Contains(ft.logs[0], "xstream server: listening") || strings.HasSuffix(ft.logs[0], "\n") {
		t.Errorf("logs %q: want the listening line first, without its newline", ft.logs)
	}
	ft.end()
	if _, err := net.Dial("tcp", srv.Addr()); err == nil {
		t.Errorf("the server still listens after the cleanup")
	}
	if len(ft.errs)+len(ft.fatals) > 0 {
		t.Errorf("errors %q, fatals %q", ft.errs, ft.fatals)
	}
}

// A server that cannot start fails the test with Fatalf, and RunTWith
// returns nil to a Tester whose Fatalf returns.
func TestRunTTesterFatal(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ft := &fakeTester{}
	if srv := RunTWith(ft, Options{Addr: ln.Addr().String()}); srv != nil {
		t.Errorf("RunTWith on an address in use returned a server")
	}
	if len(ft.fatals) != 1 || !strings.HasPrefix(ft.fatals[0], "xstream server: ") {
		t.Errorf("fatals %q, want one", ft.fatals)
	}
}
