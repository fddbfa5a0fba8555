package server

import (
	"bufio"
	"bytes"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The server logs its start, the clients it refuses at MaxClients (at
// most once a second, with their number) and its shutdown.
func TestLogs(t *testing.T) {
	var logs syncBuffer
	srv := New(Options{MaxClients: 1, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	a := newClient(t, srv.Addr())
	a.do(t, "PING")
	nc, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(nc).ReadString('\n')
	nc.Close()
	if line != "-ERR max number of clients reached\r\n" {
		t.Fatalf("the second client got %q", line)
	}
	srv.Close()
	text := logs.String()
	for _, want := range []string{"xstream server: listening", "addr=" + srv.Addr(), "max_clients=1",
		"xstream server: clients refused, MaxClients are connected", "refused=1", "xstream server: shutting down"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in the log:\n%s", want, text)
		}
	}
}
