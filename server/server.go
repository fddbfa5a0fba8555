package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/redcon"
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
	// Redis. 0 means 10,000, Redis's maxclients. As Redis does, Start
	// lowers it to what the process's limit on open files (RLIMIT_NOFILE)
	// leaves once the server listens and has its DBs open, minus a
	// reserve of 32, and logs that.
	MaxClients int
	// MaxClientsMemory bounds the memory of the buffers of all clients
	// together: their input buffers (each holds the request being read,
	// up to MaxRequestBytes) and the large replies held until their
	// length is known. A client whose request or reply would pass it gets
	// an error and is disconnected, and the others go on, as Redis closes
	// clients past maxmemory-clients. 0 means 2 GiB.
	MaxClientsMemory int
	// MaxMemory, when above 0, is Redis's maxmemory with the noeviction
	// policy, in bytes: past it, commands that add data get Redis's OOM
	// error, and it is the Go runtime's memory limit while the server
	// runs (see maxmemory.go). 0 means no limit.
	MaxMemory int64
	// Logger receives the server's log records: a limit lowered at start,
	// the end of a log cut off at start (logcut.go), accept errors. nil
	// means slog.Default().
	Logger *slog.Logger
	// Clock, when not nil, is the clock of the streams (auto IDs, idle
	// times, retention); by default the wall clock. Server.SetTime and
	// Server.FastForward move the time without one.
	Clock func() time.Time
	// Dir, when not "", keeps the databases on disk: database i (SELECT
	// i) is the durable xstream DB of the subdirectory Dir/i (after a
	// SWAPDB, the one the file Dir/dbmap names), which Start
	// opens (creating it when needed) and Close and Shutdown close. A
	// server started again on the same Dir has every change that reached
	// the log. "" keeps everything in memory.
	Dir string
	// AppendFsync is when the log reaches the disk, as Redis's
	// appendfsync: xstream.SyncEverySecond (the zero value, "everysec"),
	// xstream.SyncAlways ("always") or xstream.SyncNo ("no"). Whatever
	// the policy, the server writes the log of a batch of commands to the
	// OS before it sends their replies, so a crash of the server process
	// loses nothing it acknowledged; under everysec a crash of the OS
	// loses about the last second, under always nothing. Without Dir it
	// is ignored.
	AppendFsync xstream.SyncPolicy
	// EventLoops, when above 0, serves the TCP clients with that many
	// event loops (Linux only; elsewhere it is ignored), each a goroutine
	// that waits in epoll for all its clients at once and runs their
	// commands in turn, as Redis's event loop does (loop.go): on a
	// machine with few CPUs shared with the clients, unpipelined requests
	// then cost fewer thread wake-ups. With Dir, a loop writes the log of
	// all the clients it served in a pass once, before their replies, and
	// under xstream.SyncAlways syncs it once (an fdatasync per DB and
	// pass, as Redis's appendfsync always), where each client of its own
	// goroutine writes (and syncs) its own. A command that blocks, or a
	// client that does not read its replies as fast as they come, moves
	// that client to a goroutine of its own, for good. A slow command
	// (SAVE, KEYS over many keys, ...) holds up the other clients of its
	// loop, as in Redis; so does the sync of a pass. A loop's goroutine
	// polls for up to 20 µs before it sleeps when its last wait was
	// shorter than that (loop_spin_linux.go), and it sleeps in
	// epoll_wait outside the Go scheduler: where the clients are
	// goroutines of the same process, or the process is busy with other
	// goroutines, it waits for a processor after each wait and serves
	// slower than goroutines (BenchmarkLoop). 0 or less gives each client
	// its goroutine.
	EventLoops int
}

const numDBs = 16

// Server is a Redis-protocol server of xstream databases.
type Server struct {
	opts    Options
	dbOpts  []xstream.Option
	dbs     [numDBs]atomic.Pointer[xstream.DB] // swapped by SWAPDB (swapdb.go)
	dirOf   [numDBs]int                        // of a durable server: DB i is kept in Dir/dirOf[i] (swapdb.go)
	durable bool                               // the DBs are kept in opts.Dir
	ln      net.Listener                       // guarded by mu
	addr    atomic.Pointer[string]             // the address listened on, from Start on
	started time.Time
	// life serializes Start, Shutdown and Restart; it is held across
	// Shutdown's wait for the connections, which never take it.
	life sync.Mutex

	// deferSync: durable under always, the DBs opened WithDeferredSync:
	// the commands' changes are on disk only once a log barrier synced
	// them (conn.logBarrier), which every reply waits for.
	deferSync bool

	persist persistence  // SAVE, BGSAVE, BGREWRITEAOF and their INFO fields
	changes atomic.Int64 // write commands run since the last save
	loaded  int64        // keys the durable DBs held when Start opened them
	// logErr returns the error of DB i's log (db.Err); tests replace it.
	logErr func(i int) error
	// barrierLog writes DB i's log for a log barrier (DB.Flush; DB.Sync
	// under always, see logBarrier); tests replace it.
	barrierLog func(i int) error
	// swaps counts the SWAPDBs: a log barrier that sees it move does
	// every DB (Server.logBarrier).
	swaps atomic.Uint64
	// usedMemory returns the memory in use that MaxMemory bounds; tests
	// replace it.
	usedMemory func() uint64
	// prevMemLimit is the runtime's memory limit before Start set it to
	// MaxMemory, restored by Shutdown; -1 when Start did not set it.
	prevMemLimit int64
	// closeErr is what closing the DBs returned, for Close.
	closeErr error
	// blockedHook, when set (by tests), runs as a read starts to count as
	// blocked, before it waits.
	blockedHook atomic.Pointer[func(c *conn)]
	// parseRequest, when set (by a test, before any client), parses the
	// RESP requests in place of parseArray, so that the test can count
	// the parses.
	parseRequest func(packet []byte, argsbuf [][]byte) (bool, [][]byte, redcon.Kind, []byte, error)

	ctx    context.Context // cancelled on shutdown: ends blocked reads
	cancel context.CancelFunc

	mu      sync.Mutex
	conns   map[*conn]struct{}
	closing bool
	wg      sync.WaitGroup
	// loops are the event loops (Options.EventLoops) from Start on;
	// nextLoop is where adopt puts the next client. Guarded by mu.
	loops    []*loop
	nextLoop int

	nextID   atomic.Int64
	commands atomic.Int64
	stats    stats // INFO commandstats, errorstats, blocked_clients

	// CONFIG SET stream-node-max-entries and -bytes, guarded by mu.
	nodeEntries, nodeBytes int64
	nodeSizeSet            bool

	track  tracker  // CLIENT TRACKING's table (tracking.go)
	mon    monitors // MONITOR's clients (monitor.go)
	slow   slowlog  // SLOWLOG (slowlog.go)
	clock  clock    // moved by SetTime and FastForward
	faults faults   // set by SetError, FailNext and FailCommand
	// expirePaused stops the active expiry cycle (tests of lazy expiry);
	// expireEffort is active-expire-effort (expire_cycle.go).
	expirePaused atomic.Bool
	expireEffort atomic.Int64

	lru       atomic.Int64 // Redis's LRU clock, from the server's clock (idle.go)
	accessAll accessTables // when each key was last accessed (idle.go)

	// client-output-buffer-limit (outlimit.go): the classes as CONFIG
	// SET left them (guarded by mu), a copy of them in force (read by
	// addPush without mu), and the clients it disconnected.
	bufLimits    [3]bufLimit
	outLimits    atomic.Pointer[[3]bufLimit]
	outputClosed atomic.Int64

	clientMem atomic.Int64 // bytes of the clients' buffers (memory.go)

	refused, refusedLogged atomic.Int64  // clients refused at MaxClients, and ms of the last log of them
	freed                  chan struct{} // a big buffer was dropped (memory.go)
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
	if opts.MaxClientsMemory <= 0 {
		opts.MaxClientsMemory = 2 << 30
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.EventLoops == 0 {
		opts.EventLoops = defaultEventLoops
	}
	s := &Server{opts: opts, conns: map[*conn]struct{}{}, durable: opts.Dir != "", nodeEntries: 100, nodeBytes: 4096, freed: make(chan struct{}, 1)}
	s.deferSync = s.durable && opts.AppendFsync == xstream.SyncAlways
	// The DBs read the server's clock, which SetTime and FastForward move.
	s.dbOpts = append(s.dbOpts, xstream.WithClock(s.now))
	if !s.durable {
		for i := range s.dbs {
			s.dbs[i].Store(xstream.NewDB(s.dbOpts...))
		}
	}
	s.logErr = func(i int) error { return s.db(i).Err() }
	s.barrierLog = func(i int) error {
		if s.deferSync {
			return s.db(i).Sync()
		}
		return s.db(i).Flush()
	}
	s.usedMemory = heapInUseBytes
	s.prevMemLimit = -1
	s.persist.init(s)
	s.slow.init()
	s.stats.init()
	s.tickLRU()
	s.expireEffort.Store(defaultExpireEffort)
	s.bufLimits = defaultBufLimits
	limits := s.bufLimits
	s.outLimits.Store(&limits)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// Start opens the databases of Options.Dir, if set, then listens on the
// configured address and serves clients in the background until Close or
// Shutdown. Opening a DB replays its log, so a durable server listens
// only once every DB holds what it held before. Start fails, leaving
// nothing open, if a DB cannot be opened (its error wraps the xstream
// sentinel: xstream.ErrLocked when another process or server has the
// directory open, xstream.ErrCorrupt for a damaged file, ...) or the
// address cannot be listened on.
func (s *Server) Start() error {
	s.life.Lock()
	defer s.life.Unlock()
	return s.startLocked(s.opts.Addr)
}

// startLocked is Start on addr; the caller holds s.life.
func (s *Server) startLocked(addr string) error {
	s.mu.Lock()
	busy := s.ln != nil || s.closing
	s.mu.Unlock()
	if busy {
		return errors.New("xstream server: Start of a server already started or closed")
	}
	s.started = time.Now()
	if s.durable {
		if err := s.openDBs(); err != nil {
			return err
		}
	}
	s.tickLRU()
	for i := range s.dbs {
		s.access(i) // the keys there now were last accessed now (idle.go)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		s.closeDBs()
		return err
	}
	a := ln.Addr().String()
	s.addr.Store(&a)
	s.mu.Lock()
	s.ln = ln
	if s.opts.MaxMemory > 0 {
		s.prevMemLimit = debug.SetMemoryLimit(s.opts.MaxMemory)
	}
	s.fitMaxClients()
	s.mu.Unlock()
	s.startLoops()
	s.wg.Add(3)
	go s.acceptLoop(ln)
	go s.memoryLoop()
	go s.expireLoop()
	if s.durable {
		s.wg.Add(1)
		go s.persist.cron()
	}
	attrs := []any{"addr", ln.Addr().String(), "dir", s.opts.Dir}
	if s.durable {
		attrs = append(attrs, "appendfsync", s.opts.AppendFsync.String())
	}
	s.opts.Logger.Info("xstream server: listening", append(attrs,
		"max_clients", s.opts.MaxClients, "max_memory", s.opts.MaxMemory, "redis_version", RedisVersion)...)
	return nil
}

// openDBs opens the durable DB of each database, or none.
func (s *Server) openDBs() error {
	// The server takes the automatic snapshots itself (see persistence).
	opts := append(append([]xstream.Option(nil), s.dbOpts...), xstream.WithSync(s.opts.AppendFsync), xstream.WithAutoSnapshot(-1))
	if s.deferSync {
		// The replies wait for the sync of a log barrier (conn.logBarrier),
		// one for all the clients an event loop served in a pass.
		opts = append(opts, xstream.WithDeferredSync())
	}
	if err := s.loadDBMap(); err != nil {
		return err
	}
	for i := range s.dbs {
		dir := filepath.Join(s.opts.Dir, strconv.Itoa(s.dirOf[i]))
		db, err := xstream.Open(dir, opts...)
		if err != nil {
			s.closeDBs()
			if errors.Is(err, xstream.ErrLocked) {
				return fmt.Errorf("xstream server: database %d: another server or process has it open: %w", i, err)
			}
			return fmt.Errorf("xstream server: database %d (%s): %w", i, dir, err)
		}
		s.logCuts(i, db)
		s.mu.Lock() // for DB
		s.dbs[i].Store(db)
		entries, bytes := s.nodeEntries, s.nodeBytes
		s.mu.Unlock()
		if s.nodeSizeSet {
			db.SetNodeSize(nodeSize(entries, bytes))
		}
		s.loaded += int64(db.Len())
	}
	return nil
}

// closeDBs closes the durable DBs that are open, which writes and syncs
// their logs, and returns their errors.
func (s *Server) closeDBs() error {
	if !s.durable {
		return nil
	}
	var errs []error
	for i := range s.dbs {
		db := s.db(i)
		if db == nil {
			continue
		}
		if err := db.Close(); err != nil {
			errs = append(errs, fmt.Errorf("xstream server: closing database %d: %w", i, err))
		}
		s.mu.Lock() // for DB
		s.dbs[i].Store(nil)
		s.mu.Unlock()
	}
	return errors.Join(errs...)
}

// Addr returns the address the server listens on, as "host:port": from
// Start on, and after Close still the address it listened on (the one
// Restart listens on again); "" before Start. O(1), safe for concurrent
// use.
func (s *Server) Addr() string {
	if a := s.addr.Load(); a != nil {
		return *a
	}
	return ""
}

// DB returns database i (0..15), for a test that wants to look at or
// prepare the streams directly. A durable server's DBs exist from Start
// to Close: DB returns nil before Start and after Close, and a new DB,
// reopened from disk, after Restart. Changes made through it reach the
// log as the DB's sync policy says (DB.Flush writes them to the OS at
// once). O(1), safe for concurrent use.
func (s *Server) DB(i int) *xstream.DB {
	return s.db(i)
}

// db returns database i. O(1), safe for concurrent use.
func (s *Server) db(i int) *xstream.DB { return s.dbs[i].Load() }

// acceptLoop accepts the clients until the listener is closed. A
// temporary error of Accept (too many open files, a connection aborted
// before it was accepted, ...) does not end it: it waits, 5 ms after the
// first error and twice as long after each that follows, up to 1 s, as
// net/http's Server.Serve does, and tries again; the clients that wait
// stay in the listen backlog.
func (s *Server) acceptLoop(ln net.Listener) {
	defer s.wg.Done()
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.isClosing() || errors.Is(err, net.ErrClosed) {
				return
			}
			if !temporaryAcceptError(err) {
				s.opts.Logger.Error("xstream server: accept failed, no longer accepting clients", "err", err)
				return
			}
			delay = acceptBackoff(delay)
			s.opts.Logger.Warn("xstream server: accept failed, retrying", "err", err, "retry_in", delay)
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-s.ctx.Done():
				t.Stop()
				return
			}
			continue
		}
		delay = 0
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
			s.logRefused()
			continue
		}
		l, nc := s.adopt(nc)
		c := newConn(s, nc)
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		if l != nil {
			l.add(c)
			s.mu.Unlock()
			continue
		}
		s.mu.Unlock()
		go func() {
			c.serve()
			s.connEnded(c)
		}()
	}
}

// connEnded forgets c, whose connection ended.
func (s *Server) connEnded(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.wg.Done()
}

// Shutdown stops the server gracefully: it stops accepting connections
// and reading new commands, ends blocked reads (they reply as if their
// timeout had passed), lets the commands already received finish and
// their replies be written, and closes every connection. If ctx ends
// first, it closes the connections at once. A durable server then lets a
// background save finish the database it is at (it skips the others) and
// closes every DB, which writes and syncs its log. Shutdown returns
// ctx.Err() if ctx ended first, else the errors of closing the DBs. A call
// made while another Shutdown, Close or Restart runs waits for it; on a
// server already shut down it returns nil at once.
func (s *Server) Shutdown(ctx context.Context) error {
	s.life.Lock()
	defer s.life.Unlock()
	return s.shutdownLocked(ctx)
}

// shutdownLocked is Shutdown; the caller holds s.life.
func (s *Server) shutdownLocked(ctx context.Context) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil
	}
	s.opts.Logger.Info("xstream server: shutting down", "addr", s.Addr(), "clients", len(s.conns))
	s.closing = true
	if s.ln != nil {
		s.ln.Close()
	}
	for c := range s.conns {
		c.stopReading()
	}
	s.stopLoops()
	s.mu.Unlock()
	s.cancel()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		s.mu.Lock()
		for c := range s.conns {
			c.nc.Close()
		}
		s.mu.Unlock()
		<-done
		err = ctx.Err()
	}
	s.closeErr = s.closeDBs()
	if s.prevMemLimit >= 0 {
		debug.SetMemoryLimit(s.prevMemLimit)
	}
	if err != nil {
		return err
	}
	return s.closeErr
}

// closeGrace is how long Close lets in-flight commands finish.
const closeGrace = 5 * time.Second

// Close shuts the server down as Shutdown does, giving in-flight commands
// up to five seconds; then it closes the connections still open, so a
// client that does not read its replies cannot hold it up. It returns the
// errors of closing the durable DBs.
func (s *Server) Close() error {
	s.life.Lock()
	defer s.life.Unlock()
	return s.closeLocked()
}

// closeLocked is Close; the caller holds s.life.
func (s *Server) closeLocked() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
	defer cancel()
	if err := s.shutdownLocked(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return s.closeErr
}
