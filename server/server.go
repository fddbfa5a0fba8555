package server

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xstreamgo/xstream"
)

// Options configure a Server. The zero value is usable.
type Options struct {
	// Addr is the address to listen on; "" means 127.0.0.1:0 (a free
	// loopback port).
	Addr string
	// Password, when not "", must be given with AUTH (or HELLO ... AUTH)
	// before any other command, as with Redis's requirepass.
	Password string
	// MaxRequestBytes bounds the size of one request (a command with all
	// its arguments); a client that sends a larger one gets an error and
	// is disconnected. 0 means 512 MiB, Redis's proto-max-bulk-len.
	MaxRequestBytes int
	// MaxArgs bounds the number of arguments of one command; 0 means
	// 1,048,576.
	MaxArgs int
	// MaxReplyBytes bounds the size of one reply; a command whose reply
	// would be larger gets an error instead. 0 means 256 MiB.
	MaxReplyBytes int
	// MaxMultiBytes bounds the memory of the commands queued in one
	// MULTI transaction (their arguments plus 24 bytes per argument and
	// 64 per command); a command that would pass it gets an error and is
	// not queued, and EXEC then answers EXECABORT. 0 means 64 MiB.
	MaxMultiBytes int
	// MaxClients bounds the number of connected clients; one more is
	// answered "ERR max number of clients reached" and closed, as by
	// Redis. 0 means 10,000, Redis's maxclients.
	MaxClients int
	// Clock, when not nil, is the clock of the streams (auto IDs, idle
	// times); by default the wall clock.
	Clock func() time.Time
}

const numDBs = 16

// Server is a Redis-protocol server of xstream databases.
type Server struct {
	opts    Options
	dbs     [numDBs]*xstream.DB
	ln      net.Listener
	started time.Time

	ctx    context.Context // cancelled on shutdown: ends blocked reads
	cancel context.CancelFunc

	mu      sync.Mutex
	conns   map[*conn]struct{}
	closing bool
	wg      sync.WaitGroup

	nextID   atomic.Int64
	commands atomic.Int64
}

// New returns a Server with the given options, not yet listening.
func New(opts Options) *Server {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = 512 << 20
	}
	if opts.MaxArgs <= 0 {
		opts.MaxArgs = 1 << 20
	}
	if opts.MaxReplyBytes <= 0 {
		opts.MaxReplyBytes = 256 << 20
	}
	if opts.MaxClients <= 0 {
		opts.MaxClients = 10000
	}
	if opts.MaxMultiBytes <= 0 {
		opts.MaxMultiBytes = 64 << 20
	}
	s := &Server{opts: opts, conns: map[*conn]struct{}{}}
	var dbOpts []xstream.Option
	if opts.Clock != nil {
		dbOpts = append(dbOpts, xstream.WithClock(opts.Clock))
	}
	for i := range s.dbs {
		s.dbs[i] = xstream.NewDB(dbOpts...)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// Start listens on the configured address and serves clients in the
// background until Close or Shutdown. It fails if the address cannot be
// listened on.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return err
	}
	s.ln = ln
	s.started = time.Now()
	s.wg.Add(1)
	go s.acceptLoop()
	return nil
}

// Addr returns the address the server listens on, as "host:port".
func (s *Server) Addr() string { return s.ln.Addr().String() }

// DB returns database i (0..15), for a test that wants to look at or
// prepare the streams directly.
func (s *Server) DB(i int) *xstream.DB { return s.dbs[i] }

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			nc.Close()
			return
		}
		if len(s.conns) >= s.opts.MaxClients {
			s.mu.Unlock()
			nc.Write([]byte("-ERR max number of clients reached\r\n"))
			nc.Close()
			continue
		}
		c := newConn(s, nc)
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			c.serve()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

// Shutdown stops the server gracefully: it stops accepting connections
// and reading new commands, ends blocked reads (they reply as if their
// timeout had passed), lets the commands already received finish and
// their replies be written, and closes every connection. If ctx ends
// first, it closes the connections at once and returns ctx.Err().
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil
	}
	s.closing = true
	if s.ln != nil {
		s.ln.Close()
	}
	for c := range s.conns {
		c.stopReading()
	}
	s.mu.Unlock()
	s.cancel()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		for c := range s.conns {
			c.nc.Close()
		}
		s.mu.Unlock()
		<-done
		return ctx.Err()
	}
}

// closeGrace is how long Close lets in-flight commands finish.
const closeGrace = 5 * time.Second

// Close shuts the server down as Shutdown does, giving in-flight commands
// up to five seconds; then it closes the connections still open, so a
// client that does not read its replies cannot hold it up.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil && err != context.DeadlineExceeded {
		return err
	}
	return nil
}

// now reads the streams' clock.
func (s *Server) now() time.Time {
	if s.opts.Clock != nil {
		return s.opts.Clock()
	}
	return time.Now()
}
