package server

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/xstreamgo/xstream"
)

// Persistence commands: SAVE, BGSAVE, BGREWRITEAOF and LASTSAVE.
//
// In xstream a snapshot (DB.Snapshot) is both of Redis's ways of saving:
// it writes the whole state of a DB and drops the log behind it, as an
// RDB save and an AOF rewrite do together. The server takes one of every
// durable DB, one DB after the other, for each of the three commands, and
// keeps the counters of INFO persistence as Redis keeps them: SAVE and
// BGSAVE are RDB saves (LASTSAVE, rdb_*; they reset
// rdb_changes_since_last_save), BGREWRITEAOF is an AOF rewrite
// (aof_rewrite*). One background job runs at a time, as Redis runs one
// child process; a command that finds one running is answered as Redis
// answers it (an error, or "scheduled": the job runs when the one in
// progress ends).
//
// The server also takes the automatic snapshots, as Redis rewrites its
// AOF when it has grown (auto-aof-rewrite-percentage 100,
// auto-aof-rewrite-min-size 64mb): once a second it snapshots the DBs
// whose log since their last snapshot is larger than both 64 MiB and that
// snapshot, as an AOF rewrite. It opens the DBs with the core's own
// automatic snapshots off (xstream.WithAutoSnapshot(-1)), so that every
// snapshot is one it knows of: INFO then reports each, and never calls
// DB.Persistence on a DB while it is being snapshotted (Persistence waits
// for the snapshot to end).

// jobKind is what a background job is: an RDB save or an AOF rewrite.
type jobKind int

const (
	jobNone    jobKind = iota
	jobSave            // BGSAVE, or SAVE while it runs
	jobRewrite         // BGREWRITEAOF
)

// persistence is the server's record of its saves.
type persistence struct {
	srv *Server

	mu        sync.Mutex
	running   jobKind     // the job in progress
	sync      bool        // the job in progress is a SAVE, on a client's goroutine
	started   time.Time   // when it began
	before    int64       // the server's changes when it began
	mask      uint16      // the DBs it snapshots (bit i: DB i)
	snapping  [numDBs]int // the snapshots of each DB in progress
	saveSched bool        // a BGSAVE waits for the job in progress
	rewSched  bool        // a BGREWRITEAOF waits for the job in progress
	idle      *sync.Cond

	lastSave       int64 // Unix seconds of the last successful save, or of the start
	saveFailed     bool  // the last save failed
	saveSecs       int64 // duration of the last background save, -1 for none
	saves          int64 // saves begun
	rewriteFailed  bool  // the last rewrite failed
	rewriteSecs    int64 // duration of the last rewrite, -1 for none
	rewrites       int64 // rewrites begun
	rewriteFailRun int64 // consecutive rewrites that failed

	// info caches what DB.Persistence said of each DB, for the DB a job
	// is snapshotting: Persistence waits for a snapshot in progress.
	info [numDBs]xstream.PersistenceInfo

	// snapshot takes the snapshot of DB i (snapshotDB); tests replace it.
	snapshot func(i int) error
	dbMu     [numDBs]sync.Mutex // held by snapshotDB
	// autoMin is the least log since a DB's last snapshot that makes an
	// automatic rewrite (Redis's auto-aof-rewrite-min-size).
	autoMin int64

	// logFailed is the error of each DB's log when the cron last looked
	// (nil: it worked), so that it logs each change once (watchLogs).
	// Only the cron's goroutine uses it.
	logFailed [numDBs]error
}

// allDBs is the mask of every DB.
const allDBs = 1<<numDBs - 1

// autoRewriteMin is Redis's auto-aof-rewrite-min-size, 64 MiB, which is
// also the core's default for its automatic snapshots.
const autoRewriteMin = 64 << 20

func (p *persistence) init(s *Server) {
	p.srv = s
	p.idle = sync.NewCond(&p.mu)
	p.saveSecs, p.rewriteSecs = -1, -1
	p.snapshot = s.snapshotDB
	p.autoMin = autoRewriteMin
}

// snapshotDB takes a snapshot of durable DB i, unless nothing changed
// since its last one (or since it was created): xstream's Snapshot fails
// then, as the new log segment it makes would have the name of the one in
// use. Flush first writes what is buffered, so that LogBytes counts every
// change made before the save began. One snapshot of a DB at a time (a
// SAVE may run beside a rewrite), so that the check holds for it.
func (s *Server) snapshotDB(i int) error {
	s.persist.dbMu[i].Lock()
	defer s.persist.dbMu[i].Unlock()
	db := s.db(i)
	if err := db.Flush(); err != nil {
		return err
	}
	if info, _ := db.Persistence(); info.LogBytes == 0 {
		return nil
	}
	return db.Snapshot()
}

// errNoPersistence answers the saving commands of a server without Dir.
const errNoPersistence = "ERR persistence is off: this server keeps its data in memory only (start it with -dir, Options.Dir, to keep it on disk)"

func init() {
	register("save", 1, saveCommand)
	register("bgsave", -1, bgsaveCommand)
	register("bgrewriteaof", 1, bgrewriteaofCommand)
	register("lastsave", 1, func(c *conn, args [][]byte) {
		p := &c.srv.persist
		p.mu.Lock()
		t := p.lastSaveLocked()
		p.mu.Unlock()
		c.int(t)
	})
}

// lastSaveLocked returns the Unix time of the last successful save, or
// the server's start.
func (p *persistence) lastSaveLocked() int64 {
	if p.lastSave == 0 {
		return p.srv.started.Unix()
	}
	return p.lastSave
}

// saveCommand takes a snapshot of every durable DB before it answers, as
// Redis's SAVE; other clients are served meanwhile.
func saveCommand(c *conn, args [][]byte) {
	if !c.srv.durable {
		c.err(errNoPersistence)
		return
	}
	p := &c.srv.persist
	p.mu.Lock()
	if p.running == jobSave {
		p.mu.Unlock()
		c.err("ERR Background save already in progress")
		return
	}
	// SAVE holds the job slot, so that a BGSAVE meanwhile is refused as
	// during a background save; during a rewrite it runs alongside it,
	// as Redis's SAVE does beside an AOF child.
	own := p.running == jobNone
	if own {
		p.begin(jobSave, allDBs)
		p.sync = true
	} else {
		p.saves++
	}
	before := c.srv.changes.Load()
	p.mu.Unlock()
	err := p.snapshotAll(allDBs)
	p.mu.Lock()
	p.saveDone(err, before, true)
	if own {
		p.running, p.sync = jobNone, false
		p.next()
	}
	p.mu.Unlock()
	if err != nil {
		c.fail(err)
		return
	}
	c.ok()
}

func bgsaveCommand(c *conn, args [][]byte) {
	schedule := false
	if len(args) > 1 {
		if len(args) != 2 || !is(args[1], "schedule") {
			c.err(errSyntax)
			return
		}
		schedule = true
	}
	if !c.srv.durable {
		c.err(errNoPersistence)
		return
	}
	p := &c.srv.persist
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.running == jobSave:
		c.err("ERR Background save already in progress")
	case p.running != jobNone || c.inExec:
		// Inside MULTI/EXEC Redis schedules it too.
		if !schedule && !c.inExec {
			c.err("ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.")
			return
		}
		p.saveSched = true
		c.simple("Background saving scheduled")
		if p.running == jobNone {
			p.next()
		}
	default:
		p.start(jobSave, allDBs)
		c.simple("Background saving started")
	}
}

func bgrewriteaofCommand(c *conn, args [][]byte) {
	if !c.srv.durable {
		c.err(errNoPersistence)
		return
	}
	p := &c.srv.persist
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.running == jobRewrite:
		c.err("ERR Background append only file rewriting already in progress")
	case p.running != jobNone || c.inExec:
		p.rewSched = true
		p.rewriteFailRun = 0
		c.simple("Background append only file rewriting scheduled")
		if p.running == jobNone {
			p.next()
		}
	default:
		p.start(jobRewrite, allDBs)
		c.simple("Background append only file rewriting started")
	}
}

// begin marks job k, of the DBs of mask, as running; the caller holds
// p.mu.
func (p *persistence) begin(k jobKind, mask uint16) {
	p.running, p.started, p.mask = k, time.Now(), mask
	p.before = p.srv.changes.Load()
	if k == jobSave {
		p.saves++
	} else {
		p.rewrites++
	}
}

// start runs job k of the DBs of mask in the background, then the jobs
// scheduled meanwhile; the caller holds p.mu and no job runs.
func (p *persistence) start(k jobKind, mask uint16) {
	p.begin(k, mask)
	p.srv.wg.Add(1) // Shutdown waits for it
	go func() {
		defer p.srv.wg.Done()
		for k != jobNone {
			err := p.snapshotAll(mask)
			p.mu.Lock()
			if k == jobSave {
				p.saveDone(err, p.before, false)
			} else {
				p.rewriteDone(err)
			}
			p.running = jobNone
			if k = p.scheduled(); k != jobNone {
				mask = allDBs
				p.begin(k, mask)
			} else {
				p.idle.Broadcast()
			}
			p.mu.Unlock()
		}
	}()
}

// next starts the job scheduled, if any; the caller holds p.mu and no job
// runs.
func (p *persistence) next() {
	if k := p.scheduled(); k != jobNone {
		p.start(k, allDBs)
	} else {
		p.idle.Broadcast()
	}
}

// scheduled takes the job that waits, a rewrite first as in Redis's
// serverCron; jobNone when none does or the server is closing. The caller
// holds p.mu.
func (p *persistence) scheduled() jobKind {
	switch {
	case p.srv.isClosing():
		p.rewSched, p.saveSched = false, false
	case p.rewSched:
		p.rewSched = false
		return jobRewrite
	case p.saveSched:
		p.saveSched = false
		return jobSave
	}
	return jobNone
}

// saveDone records the end of a save (sync: SAVE) that began when before
// changes had been made; the caller holds p.mu.
func (p *persistence) saveDone(err error, before int64, sync bool) {
	if !sync {
		p.saveSecs = int64(time.Since(p.started).Seconds())
	}
	if err != nil {
		if !sync {
			p.saveFailed = true
		}
		return
	}
	p.saveFailed = false
	p.lastSave = time.Now().Unix()
	p.srv.changes.Add(-before)
}

// rewriteDone records the end of a rewrite; the caller holds p.mu.
func (p *persistence) rewriteDone(err error) {
	p.rewriteFailed = err != nil
	p.rewriteSecs = int64(time.Since(p.started).Seconds())
	if err != nil {
		p.rewriteFailRun++
	} else {
		p.rewriteFailRun = 0
	}
}

// snapshotAll takes a snapshot of each DB of mask in turn, and stops
// early when the server closes. It returns the first error.
func (p *persistence) snapshotAll(mask uint16) error {
	var errs []error
	for i := range numDBs {
		if mask&(1<<i) == 0 {
			continue
		}
		if p.srv.isClosing() {
			errs = append(errs, errors.New("the server is shutting down"))
			break
		}
		p.mu.Lock()
		p.snapping[i]++
		p.mu.Unlock()
		if err := p.snapshot(i); err != nil {
			errs = append(errs, fmt.Errorf("database %d: %w", i, err))
		}
		p.mu.Lock()
		p.snapping[i]--
		p.mu.Unlock()
	}
	return errors.Join(errs...)
}

// cron logs the failures and recoveries of the DBs' logs and starts the
// automatic rewrites, once a second until the server shuts down.
func (p *persistence) cron() {
	defer p.srv.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-p.srv.ctx.Done():
			return
		case <-t.C:
			p.watchLogs()
			p.autoRewrite()
		}
	}
}

// watchLogs logs, once each, a DB's log failing (writes then get
// MISCONF) and working again, as Redis logs "Error writing to the AOF
// file" and "AOF write error looks solved, Redis can write again.". A DB
// retries its log each second by itself (xstream.DB.Err).
func (p *persistence) watchLogs() {
	log := p.srv.opts.Logger
	for i := range numDBs {
		err, was := p.srv.logErr(i), p.logFailed[i]
		switch {
		case err != nil && (was == nil || err.Error() != was.Error()):
			log.Error("xstream server: writing the log failed, writes are refused (MISCONF) until a write of it succeeds", "db", i, "err", err)
		case err == nil && was != nil:
			log.Warn("xstream server: the log write error looks solved, writes are accepted again", "db", i)
		}
		p.logFailed[i] = err
	}
}

// autoRewrite starts a rewrite of the DBs whose log has grown past
// autoMin and the size of their last snapshot, unless a job runs or waits
// (as Redis starts an automatic AOF rewrite only with no child process
// and none scheduled).
func (p *persistence) autoRewrite() {
	p.mu.Lock()
	busy := p.running != jobNone || p.rewSched || p.saveSched
	p.mu.Unlock()
	if busy || p.srv.isClosing() {
		return
	}
	var mask uint16
	for i := range numDBs {
		info := p.dbInfo(i)
		if info.LogBytes > max(p.autoMin, info.SnapshotBytes) {
			mask |= 1 << i
		}
	}
	if mask == 0 {
		return
	}
	p.mu.Lock()
	if p.running == jobNone && !p.srv.isClosing() {
		p.start(jobRewrite, mask)
	}
	p.mu.Unlock()
}

// wait returns once no background job runs (for tests).
func (p *persistence) wait() {
	p.mu.Lock()
	for p.running != jobNone {
		p.idle.Wait()
	}
	p.mu.Unlock()
}

// isClosing reports whether Shutdown has begun.
func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// dbInfo returns what DB.Persistence says of durable DB i, or, while a
// snapshot of that DB is in progress, what it said last (Persistence
// would wait for the snapshot to end). Holding p.mu keeps a snapshot of
// the server's from beginning meanwhile (snapshotAll counts it in
// snapping under p.mu first), and the DBs take no snapshot by themselves.
func (p *persistence) dbInfo(i int) xstream.PersistenceInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.snapping[i] == 0 {
		p.info[i], _ = p.srv.db(i).Persistence()
	}
	return p.info[i]
}

// writePersistenceInfo writes INFO's persistence section: the fields of
// Redis 7.0's, in its order. What has no counterpart in xstream (fork
// copy-on-write sizes, modules, loading in progress: Start loads every DB
// before the server listens) is 0.
func (c *conn) writePersistenceInfo(b *strings.Builder) {
	s := c.srv
	p := &s.persist
	var logBytes, snapBytes int64
	writeErr := false
	if s.durable {
		for i := range numDBs {
			info := p.dbInfo(i)
			logBytes += info.LogBytes
			snapBytes += info.SnapshotBytes
			if s.logErr(i) != nil {
				writeErr = true
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	status := func(failed bool) string {
		if failed {
			return "err"
		}
		return "ok"
	}
	elapsed := func(k jobKind) int64 {
		if p.running != k || p.sync {
			return -1
		}
		return int64(now.Sub(p.started).Seconds())
	}
	f := func(name string, v any) { fmt.Fprintf(b, "%s:%v\r\n", name, v) }
	b.WriteString("# Persistence\r\n")
	f("loading", 0)
	f("async_loading", 0)
	f("current_cow_peak", 0)
	f("current_cow_size", 0)
	f("current_cow_size_age", 0)
	f("current_fork_perc", "0.00")
	f("current_save_keys_processed", 0)
	f("current_save_keys_total", 0)
	f("rdb_changes_since_last_save", s.changes.Load())
	f("rdb_bgsave_in_progress", b2i(p.running == jobSave && !p.sync))
	f("rdb_last_save_time", p.lastSaveLocked())
	f("rdb_last_bgsave_status", status(p.saveFailed))
	f("rdb_last_bgsave_time_sec", p.saveSecs)
	f("rdb_current_bgsave_time_sec", elapsed(jobSave))
	f("rdb_saves", p.saves)
	f("rdb_last_cow_size", 0)
	f("rdb_last_load_keys_expired", 0)
	f("rdb_last_load_keys_loaded", s.loaded)
	f("aof_enabled", b2i(s.durable))
	f("aof_rewrite_in_progress", b2i(p.running == jobRewrite))
	f("aof_rewrite_scheduled", b2i(p.rewSched))
	f("aof_last_rewrite_time_sec", p.rewriteSecs)
	f("aof_current_rewrite_time_sec", elapsed(jobRewrite))
	f("aof_last_bgrewrite_status", status(p.rewriteFailed))
	f("aof_rewrites", p.rewrites)
	f("aof_rewrites_consecutive_failures", p.rewriteFailRun)
	f("aof_last_write_status", status(writeErr))
	f("aof_last_cow_size", 0)
	f("module_fork_in_progress", 0)
	f("module_fork_last_cow_size", 0)
	if s.durable {
		f("aof_current_size", snapBytes+logBytes)
		f("aof_base_size", snapBytes)
		f("aof_pending_rewrite", b2i(p.rewSched))
		f("aof_buffer_length", 0)
		f("aof_pending_bio_fsync", 0)
		f("aof_delayed_fsync", 0)
		f("aof_last_load_truncated_bytes", s.cutBytes()) // not Redis's: logcut.go
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
