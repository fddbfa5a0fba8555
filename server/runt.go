package server

import (
	"bytes"
	"io"
	"log/slog"
)

// Tester is what RunT and RunTWith need of a test. *testing.T,
// *testing.B and *testing.F have it (any testing.TB), and so can the
// type of another test framework, as with miniredis's RunT; this package
// does not import testing, so programs that embed the server do not link
// it.
type Tester interface {
	Helper()
	Cleanup(func())
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// RunT starts a Server with default options on a free loopback port for
// the test t, and closes it when the test ends (t.Cleanup). It fails the
// test if the server cannot start.
//
//	srv := server.RunT(t)
//	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
func RunT(t Tester) *Server {
	t.Helper()
	return RunTWith(t, Options{})
}

// RunTWith is RunT with options, for example a password, a clock, or a
// directory to keep the databases in (Options.Dir). The cleanup fails the
// test if closing a durable server's DBs fails.
//
// To test recovery, restart the server (Server.Restart: same address,
// the DBs closed and opened again from disk), or close it and start
// another on the same directory; it holds every change the first one
// acknowledged:
//
//	srv := server.RunTWith(t, server.Options{Dir: dir})
//	// ... write through a client, then
//	srv.Restart()
//	// ... the code under test reconnects and reads what was kept
//
// Close here is a clean shutdown. What a crash of the server process
// would leave is the same for every change a client got a reply to (the
// server writes the log before it replies), but to see it for real the
// server has to run in another process, killed with SIGKILL: see
// TestKillRecovery in this package for such a test.
//
// If the server cannot start, it calls t.Fatalf, and returns nil where
// t's Fatalf returns.
func RunTWith(t Tester, opts Options) *Server {
	t.Helper()
	if opts.Logger == nil {
		// The server's log goes with the test's output (shown when it
		// fails or with -v), not to the process's stderr.
		opts.Logger = slog.New(slog.NewTextHandler(testOutput(t), nil))
	}
	s := New(opts)
	if err := s.Start(); err != nil {
		t.Fatalf("xstream server: %v", err)
		return nil
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("xstream server: %v", err)
		}
	})
	return s
}

// RunTDir is RunTWith(t, Options{Dir: dir}): a server whose databases are
// kept in dir (t.TempDir() for a new one), with the default sync policy
// (everysec). Close it and call RunTDir again on dir to restart it.
func RunTDir(t Tester, dir string) *Server {
	t.Helper()
	return RunTWith(t, Options{Dir: dir})
}

// testOutput is where the server's log goes in a test: t.Output() when t
// has it (testing.TB does), else t.Logf, a call for each record.
func testOutput(t Tester) io.Writer {
	if o, ok := t.(interface{ Output() io.Writer }); ok {
		return o.Output()
	}
	return logfWriter{t}
}

// logfWriter writes what it is given to t.Logf, without the last newline:
// a slog handler writes a record in one call.
type logfWriter struct{ t Tester }

func (w logfWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s", bytes.TrimSuffix(p, []byte("\n")))
	return len(p), nil
}
