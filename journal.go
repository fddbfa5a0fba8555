package xstream

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xstreamgo/xstream/internal/wal"
)

// SyncPolicy says when the log of a durable DB reaches the disk, with the
// three levels of Redis's appendfsync.
type SyncPolicy uint8

const (
	// SyncEverySecond writes the log to the OS and fdatasyncs it once a
	// second in the background (Redis's appendfsync everysec), the
	// default. A call returns before its change is written: a crash of the
	// process loses the changes of about the last second that were not yet
	// written (call DB.Flush to write them, as the server does before it
	// replies), and a crash of the OS or a power loss those of about the
	// last one to two seconds.
	SyncEverySecond SyncPolicy = iota
	// SyncAlways makes every call that changes the DB return only after
	// its change is on disk (fdatasync), as Redis's appendfsync always
	// does; concurrent calls share one fdatasync (group commit). Nothing
	// a call returned is lost, whatever crashes; a reader is never handed
	// an entry that a crash could still lose. A call whose change could
	// not be synced fails with ErrLogFailed (see DB.Err).
	SyncAlways
	// SyncNo writes the log to the OS once a second (and when much is
	// buffered) and never fdatasyncs it: the OS decides when it reaches
	// the disk (Redis's appendfsync no). A crash of the process loses
	// about the last second of changes, a crash of the OS what the OS had
	// not yet written, typically up to 30 seconds.
	SyncNo
)

// String returns "always", "everysec" or "no", the names Redis uses.
func (p SyncPolicy) String() string {
	switch p {
	case SyncAlways:
		return "always"
	case SyncNo:
		return "no"
	}
	return "everysec"
}

const (
	flushEvery  = time.Second // the background write (and sync, with SyncEverySecond)
	kickBytes   = 1 << 20     // buffered log that wakes the background writer early
	maxBuffered = 64 << 20    // buffered log beyond which a call writes it itself
	maxSpare    = 16 << 20    // the largest write buffer kept for reuse
	preallocate = 4 << 20     // zeros written ahead of the log at a time (segment.Preallocate)
)

// journal is the log of a durable DB: records committed in order (each
// gets the next log sequence number, LSN), buffered, and written to the
// current segment file by one writer at a time. No lock is held while a
// writer writes or syncs: calls that commit meanwhile add to the next
// buffer, and calls that wait for their record to be on disk wait for the
// writer in progress and then, if their record is not yet on disk, one of
// them writes and syncs for all of them (group commit).
type journal struct {
	policy SyncPolicy

	mu    sync.Mutex
	buf   []byte        // framed records not yet written, from LSN written on
	spare []byte        // the buffer of the last write, for reuse
	next  uint64        // LSN of the next record; LSNs start at 1
	busy  bool          // a writer is writing
	done  chan struct{} // closed when the busy writer finishes
	seg   *wal.Segment  // the segment written to; changed only by a busy writer

	// While the log fails, err is the error of its last write, wrapping
	// ErrLogFailed; the records it could not write stay at the front of
	// buf, and each flush (the background writer's each second, Flush,
	// Sync, Close) writes them again: once one succeeds, err is nil again.
	// broken means that no retry can help (a sync failed, or a segment
	// could not be cut back after a failed write): err then sticks until
	// the DB is opened again, and the records from LSN lostFrom on are
	// not kept.
	err      error
	broken   bool
	lostFrom uint64
	// closed: Close began. Records from LSN endLSN+1 on are not kept.
	closed bool
	endLSN uint64
	g      *gate // the DB's gate, which shows err to calls that would change the DB

	// A rotation in progress: the records of buf from byte split on (LSN
	// rotBase on) go to rot, which the writer makes the segment once it
	// has written and synced the records before, and onRotate has run.
	rot      *wal.Segment
	split    int
	onRotate func(base uint64) error

	segBytes int64 // bytes committed to the newest segment, header included

	over    atomic.Bool   // more than maxBuffered bytes are buffered
	nextObj atomic.Uint64 // number of the next object of the DB
	written atomic.Uint64 // records below this LSN are written to the OS
	synced  atomic.Uint64 // records below this LSN are on disk
	logSize atomic.Int64  // bytes of log written since the last snapshot
	syncs   atomic.Int64  // fdatasyncs done

	// maxRecord bounds a record's bytes: wal.MaxPayload, lower in tests.
	// Set before the journal is used, then only read.
	maxRecord int

	onTick func() // run by the background writer each second

	// deferSync: under SyncAlways, settle does not wait for the disk
	// (WithDeferredSync); readers still do (durable). Set before the
	// journal is used, then only read.
	deferSync bool

	kick chan struct{} // wakes the background writer
	stop chan struct{}
	wg   sync.WaitGroup
}

// newJournal makes the journal of the DB whose gate is g (it shows the
// calls of the DB when the log fails): its next record has LSN next, written to
// seg, which holds logSize bytes of log since the last snapshot; onTick,
// if not nil, runs each second after the background write once start
// has started it.
func newJournal(g *gate, policy SyncPolicy, seg *wal.Segment, next uint64, logSize int64, onTick func()) *journal {
	j := &journal{
		g: g, policy: policy, seg: seg, next: next, segBytes: seg.Size(), onTick: onTick, maxRecord: wal.MaxPayload,
		kick: make(chan struct{}, 1), stop: make(chan struct{}),
	}
	j.written.Store(next)
	j.synced.Store(next)
	j.nextObj.Store(1)
	j.logSize.Store(logSize)
	g.j = j
	return j
}

// start starts the background writer.
func (j *journal) start() {
	j.wg.Add(1)
	go j.background()
}

// commit frames the record rec, gives it the next LSN and buffers it. It
// needs the lock of the object the record is about, so that the log holds
// an object's records in the order they were applied. A record committed
// once the log is broken or closed is not kept: its settle reports why.
func (j *journal) commit(rec []byte) uint64 {
	j.mu.Lock()
	if j.broken || j.closed || len(rec) > j.maxRecord {
		if !j.broken && !j.closed {
			// The record cannot be framed: a call's checkSize should
			// have refused it. Nothing after it can be kept either,
			// nor what the buffer held (breakLocked empties it): the
			// records from the first one not written yet on.
			j.breakLocked(errorf(ErrLogFailed, "a record of %d bytes is larger than the log takes (%d)", len(rec), j.maxRecord), j.written.Load())
		}
		lsn := j.next
		j.next++
		j.mu.Unlock()
		return lsn
	}
	d, start := wal.BeginFrame(j.buf)
	d = append(d, rec...)
	j.buf = wal.EndFrameLen(d, start) // the writer seals it (wal.SealFrames)
	lsn := j.next
	j.next++
	n := len(j.buf)
	j.segBytes += int64(n - start)
	if n >= maxBuffered {
		j.over.Store(true)
	}
	j.mu.Unlock()
	if n >= kickBytes {
		select {
		case j.kick <- struct{}{}:
		default:
		}
	}
	return lsn
}

// settle is called after a call that committed the record lsn released
// its lock: with SyncAlways (unless deferSync) it returns once the record
// is on disk, and with any policy it writes the log itself when too much
// is buffered. It
// returns an error when the record is not kept as the policy promises:
// under SyncAlways when writing or syncing it failed (ErrLogFailed), under
// any policy when the log is broken or closed before the record was
// buffered (ErrLogFailed, ErrClosed). A record the log holds while its
// writes fail is kept under the other policies: a later write takes it.
func (j *journal) settle(lsn uint64) error {
	if j == nil || lsn == 0 {
		return nil
	}
	if j.policy == SyncAlways && !j.deferSync {
		return j.write(true, lsn, false)
	}
	if j.g.state.Load() != 0 {
		return j.settleFailing(lsn)
	}
	if j.over.Load() {
		j.write(false, lsn, false)
	}
	return nil
}

// settleFailing is settle under SyncEverySecond or SyncNo while the log
// fails or once the DB is closing: the record lsn is kept if the log
// buffered it.
func (j *journal) settleFailing(lsn uint64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.lostLocked(lsn)
}

// lostLocked returns the error that says why the record lsn is not kept,
// or nil when it is (or may still be) kept.
func (j *journal) lostLocked(lsn uint64) error {
	switch {
	case j.broken && lsn >= j.lostFrom:
		return j.err
	case j.closed && lsn > j.endLSN:
		return errorf(ErrClosed, "the DB was closed before the change was logged")
	}
	return nil
}

// settleAll settles every record committed so far. Under SyncAlways it
// waits for them to be on disk even with deferSync: the calls of sharded
// streams, which settle this way, are not deferred (WithDeferredSync).
func (j *journal) settleAll() error {
	switch {
	case j.policy == SyncAlways:
		return j.write(true, j.last(), false)
	case j.over.Load() || j.g.state.Load() != 0:
		return j.settle(j.last())
	}
	return nil
}

// durable waits until the record lsn is on disk under SyncAlways (for
// readers: an entry they return is then safe), and returns the log's
// error when it cannot be: the reader must then not return what it read.
// Under the other policies it returns an error only when the record is
// not kept (the log broke, or the DB closed, before it was buffered).
func (j *journal) durable(lsn uint64) error {
	if lsn == 0 {
		return nil
	}
	if j.policy == SyncAlways && j.synced.Load() <= lsn {
		return j.write(true, lsn, false)
	}
	if j.g.state.Load() != 0 {
		return j.settleFailing(lsn)
	}
	return nil
}

// write returns once the record upTo is written to the OS (and with sync
// on disk), writing it itself when no other writer will. While the log
// fails it returns the log's error at once, unless retry is set: then it
// writes the records that failed again (a flush). It also returns the
// error when the record upTo is not kept (lostLocked).
func (j *journal) write(sync bool, upTo uint64, retry bool) error {
	if upTo < j.synced.Load() || !sync && upTo < j.written.Load() {
		return nil
	}
	for {
		j.mu.Lock()
		if err := j.lostLocked(upTo); err != nil {
			j.mu.Unlock()
			return err
		}
		if upTo < j.written.Load() && (!sync || upTo < j.synced.Load()) {
			j.mu.Unlock()
			return nil
		}
		if j.err != nil && (j.broken || !retry) {
			err := j.err
			j.mu.Unlock()
			return err
		}
		if j.busy {
			ch := j.done
			j.mu.Unlock()
			<-ch
			continue
		}
		j.mu.Unlock()
		if err := j.writeOut(sync); err != nil {
			return err
		}
	}
}

// writeOut writes every buffered record (and with sync fdatasyncs) as the
// one busy writer. When a rotation is pending it writes and syncs the
// records before the split to the old segment, runs onRotate, and goes on
// in the new segment.
//
// When a write fails, the segment is cut back to its size before it
// (wal.Segment.Write) and the records go back to the front of the buffer,
// for the next flush to write again: the log fails (err) until a write
// succeeds. Any other failure breaks the log (breakLocked).
func (j *journal) writeOut(sync bool) error {
	j.mu.Lock()
	for j.busy {
		ch := j.done
		j.mu.Unlock()
		<-ch
		j.mu.Lock()
	}
	if j.broken {
		err := j.err
		j.mu.Unlock()
		return err
	}
	j.busy, j.done = true, make(chan struct{})
	buf, end, seg := j.buf, j.next, j.seg
	rot, split, onRotate := j.rot, j.split, j.onRotate
	j.rot, j.onRotate = nil, nil
	if cap(j.spare) >= len(buf) {
		j.buf = j.spare[:0]
	} else {
		// Sized for a batch like this one, so that committers do not
		// grow it (and copy it) on their path.
		j.buf = make([]byte, 0, max(64<<10, len(buf)+len(buf)/4))
	}
	j.spare = nil
	j.over.Store(false)
	j.mu.Unlock()

	wal.SealFrames(buf)
	var err error
	retry := false   // err is a failed write: buf can be written again
	rotated := false // the switch to rot is done
	if rot != nil {
		if _, err = seg.Write(buf[:split]); err != nil {
			retry = seg.Err() == nil
		} else {
			err = seg.Sync()
		}
		if err == nil {
			err = seg.Close()
		}
		if err == nil {
			err = rot.SyncCreated()
		}
		if err == nil && onRotate != nil {
			err = onRotate(rot.Base())
		}
		if err == nil {
			buf, seg, rotated = buf[split:], rot, true
			j.logSize.Store(0)
			j.mu.Lock()
			j.seg = rot
			j.mu.Unlock()
		}
	}
	if err == nil && len(buf) > 0 {
		if j.policy != SyncNo && seg.Room() < int64(len(buf)) {
			// Zeros ahead of the writes: an fdatasync then has no
			// file size to record. Best effort: without them the
			// writes still go through.
			seg.Preallocate(max(preallocate, int64(len(buf))))
		}
		if _, err = seg.Write(buf); err == nil {
			j.logSize.Add(int64(len(buf)))
		} else {
			retry = seg.Err() == nil
		}
	}
	if err == nil && sync && j.synced.Load() < end {
		err = seg.Sync()
		j.syncs.Add(1)
	}

	j.mu.Lock()
	switch {
	case j.broken:
		// The log broke meanwhile (commit): its error stands.
	case err == nil:
		j.written.Store(end)
		if sync {
			j.synced.Store(end)
		}
		if j.err != nil {
			j.err = nil
			j.g.setFailing(false)
		}
		if cap(buf) <= maxSpare {
			j.spare = buf[:0]
		}
	case retry:
		// Nothing of buf reached the file: it goes back before the
		// records committed meanwhile, with the rotation it held if
		// the switch is not done. A rotation asked for meanwhile
		// splits the records committed meanwhile, which now follow
		// buf.
		switch {
		case rot != nil && !rotated:
			j.rot, j.split, j.onRotate = rot, split, onRotate
		case j.rot != nil:
			j.split += len(buf)
		}
		j.buf = append(buf, j.buf...)
		j.over.Store(len(j.buf) >= maxBuffered)
		j.err = logErr(seg, err)
		j.g.setFailing(true)
	default:
		// A sync failed (the kernel may have dropped what it did not
		// write), or a segment could not be cut back or switched:
		// what was not synced must be taken as lost.
		j.breakLocked(logErr(seg, err), j.synced.Load())
	}
	err = j.err
	j.busy = false
	close(j.done)
	j.mu.Unlock()
	return err
}

// logErr is the log's error for err, a failure of writing seg: it names
// the segment unless err does already (the os package's errors do).
func logErr(seg *wal.Segment, err error) error {
	if strings.Contains(err.Error(), seg.Path()) {
		return errorf(ErrLogFailed, "%w", err)
	}
	return errorf(ErrLogFailed, "%s: %w", seg.Path(), err)
}

// breakLocked breaks the log with err: the records from LSN lostFrom on
// are not kept, and every later change is refused until the DB is opened
// again.
func (j *journal) breakLocked(err error, lostFrom uint64) {
	if j.broken {
		return
	}
	j.err, j.broken, j.lostFrom = err, true, lostFrom
	j.buf = j.buf[:0]
	j.g.setFailing(true)
}

// last returns the LSN of the last record committed (0: none).
func (j *journal) last() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.next - 1
}

// flush writes every record committed so far (and with sync fdatasyncs),
// writing again, while the log fails, the records that failed.
func (j *journal) flush(sync bool) error {
	j.mu.Lock()
	last := j.next - 1
	j.mu.Unlock()
	return j.write(sync, last, true)
}

// rotate makes the records committed from now on go to a new segment,
// made by create from the LSN of the next record (unsynced: the writer
// syncs it), which it returns. It holds the journal's lock only while
// create makes the file: the records
// before are written and synced to the old segment by the next writer,
// which then runs onRotate (to record the new segment in the manifest)
// before it writes any record to the new one. The caller then calls
// writeOut, so that the switch is done when it returns.
func (j *journal) rotate(create func(base uint64) (*wal.Segment, error), onRotate func(base uint64) error) (uint64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return 0, j.err
	}
	if j.closed {
		return 0, errorf(ErrClosed, "a log rotation of a closed DB")
	}
	if j.rot != nil {
		return 0, errorf(ErrInvalidArgument, "a log rotation is already pending")
	}
	base := j.next
	seg, err := create(base)
	if err != nil {
		return 0, err
	}
	j.rot, j.split, j.onRotate = seg, len(j.buf), onRotate
	j.segBytes = seg.Size()
	return base, nil
}

// newObj returns the number of a new object of the DB.
func (j *journal) newObj() uint64 { return j.nextObj.Add(1) - 1 }

// emptySegment reports whether the newest segment holds no record yet
// (and no switch is pending), and returns its base: a snapshot then needs
// no new segment.
func (j *journal) emptySegment() (uint64, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.next, j.rot == nil && j.seg.Base() == j.next
}

// mark returns the LSN of the next record and the bytes of the newest
// segment before it.
func (j *journal) mark() (lsn uint64, off int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.next, j.segBytes
}

// segPath returns the path of the segment that takes new records.
func (j *journal) segPath() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.rot != nil {
		return j.rot.Path()
	}
	return j.seg.Path()
}

// background writes the log once a second, fdatasyncing it under
// SyncEverySecond, and early when much is buffered.
func (j *journal) background() {
	defer j.wg.Done()
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-j.stop:
			return
		case <-t.C:
			j.flush(j.policy != SyncNo)
			if j.onTick != nil {
				j.onTick()
			}
		case <-j.kick:
			j.flush(false)
		}
	}
}

// close stops the background writer, writes and syncs every record
// committed so far (records committed later are not kept: their settle
// returns ErrClosed), and closes the segment. It returns the error of
// the last write when the records could not be written.
func (j *journal) close() error {
	j.mu.Lock()
	j.closed, j.endLSN = true, j.next-1
	j.mu.Unlock()
	close(j.stop)
	j.wg.Wait()
	err := j.write(true, j.endLSN, true)
	j.mu.Lock()
	seg, rot := j.seg, j.rot
	j.rot = nil
	j.mu.Unlock()
	if cerr := seg.Close(); err == nil {
		err = cerr
	}
	if rot != nil {
		// A switch the failing log never did: the segment is in no
		// manifest, and the next Open removes it.
		rot.Close()
	}
	return err
}

// failed returns the log's error while it fails (nil when it works).
func (j *journal) failed() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}
