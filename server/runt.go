package server

import "testing"

// RunT starts a Server with default options on a free loopback port for
// the test t, and closes it when the test ends (t.Cleanup). It fails the
// test if the server cannot start.
//
//	srv := server.RunT(t)
//	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
func RunT(t testing.TB) *Server {
	t.Helper()
	return RunTWith(t, Options{})
}

// RunTWith is RunT with options, for example a password or a clock.
func RunTWith(t testing.TB, opts Options) *Server {
	t.Helper()
	s := New(opts)
	if err := s.Start(); err != nil {
		t.Fatalf("xstream server: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
