package xstream

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error returned by this package wraps one of these,
// so callers can test for a kind of failure with errors.Is; the message of
// the returned error says what was wrong and which value was given.
var (
	// ErrInvalidID reports an ID that does not parse, or an ID form that is
	// not allowed where it was given (for example "*" in a range, or "$"
	// in Add).
	ErrInvalidID = errors.New("invalid stream ID")

	// ErrZeroID reports an explicit Add of the ID 0-0, which is never a
	// valid entry ID.
	ErrZeroID = errors.New("the ID specified in XADD must be greater than 0-0")

	// ErrIDTooSmall reports an explicit Add ID equal to or smaller than the
	// stream's last ID.
	ErrIDTooSmall = errors.New("the ID specified in XADD is equal or smaller than the target stream top item")

	// ErrStreamExhausted reports an Add to a stream whose last ID is the
	// largest possible ID.
	ErrStreamExhausted = errors.New("the stream has exhausted the last possible ID, unable to add more items")

	// ErrNoFields reports an entry with no field/value pairs.
	ErrNoFields = errors.New("an entry needs at least one field/value pair")

	// ErrTrimConflict reports trimming arguments that do not go together:
	// MaxLen with MinID, or Limit without Approx.
	ErrTrimConflict = errors.New("conflicting trim options")

	// ErrInvalidArgument reports a numeric argument out of its range, such
	// as a negative count, MaxLen or Limit.
	ErrInvalidArgument = errors.New("invalid argument")

	// ErrNoStream reports an operation that needs an existing stream on a
	// name that holds none.
	ErrNoStream = errors.New("no such stream")

	// ErrNoGroup reports a consumer group that does not exist on the
	// stream (Redis NOGROUP); the message names the stream and the group.
	ErrNoGroup = errors.New("NOGROUP no such consumer group")

	// ErrIdempotentWithID reports an idempotent Add (AddArgs.Idempotency)
	// with an explicit ID.
	ErrIdempotentWithID = errors.New("IDMP/IDMPAUTO can be used only with auto-generated IDs")

	// ErrGroupExists reports a CreateGroup of a group name the stream
	// already has (Redis BUSYGROUP).
	ErrGroupExists = errors.New("BUSYGROUP consumer group name already exists")
)

// Sentinel errors of sharded streams (ShardedStream).
var (
	// ErrInvalidPartitionKey reports a partition key that is empty or
	// longer than 256 characters.
	ErrInvalidPartitionKey = errors.New("invalid partition key")

	// ErrInvalidHashKey reports a hash key that is not a decimal number
	// from 0 to 2^128-1.
	ErrInvalidHashKey = errors.New("invalid hash key")

	// ErrShardNotFound reports a shard ID that names no shard of the
	// sharded stream.
	ErrShardNotFound = errors.New("no such shard")

	// ErrShardClosed reports a split or merge of a shard that is CLOSED.
	ErrShardClosed = errors.New("shard is closed")

	// ErrShardExpired reports an operation on a shard that is EXPIRED: all
	// its records are past the retention period. Iterators of an expired
	// shard fail with it.
	ErrShardExpired = errors.New("shard is expired")

	// ErrPastTrimHorizon reports a sequence number or iterator position
	// whose records were dropped by retention.
	ErrPastTrimHorizon = errors.New("position is past the trim horizon")

	// ErrInvalidIterator reports a shard iterator that is nil or belongs
	// to another sharded stream.
	ErrInvalidIterator = errors.New("invalid shard iterator")

	// ErrResourceInUse reports a reshard requested while another is in
	// progress (the stream is UPDATING).
	ErrResourceInUse = errors.New("resource in use")
)

// Sentinel errors of durable DBs (Open).
var (
	// ErrDBNotFound reports an Open with WithMustExist of a directory that
	// holds no DB.
	ErrDBNotFound = errors.New("no DB in the directory")

	// ErrLocked reports an Open of a directory that another DB (of this
	// process or another) holds open.
	ErrLocked = errors.New("the DB directory is locked by another process")

	// ErrNotDB reports a file in the DB's directory that is not an xstream
	// file where one is expected (a foreign or damaged manifest, snapshot
	// or log segment header).
	ErrNotDB = errors.New("not an xstream DB file")

	// ErrVersion reports a file written by a newer version of xstream, in
	// a format this one cannot read.
	ErrVersion = errors.New("written by a newer xstream")

	// ErrCorrupt reports damaged data in a DB's files: a record whose
	// checksum is wrong with valid records after it (or the mark the log
	// writes after each fdatasync, see Open), a record that does not
	// decode, or a truncated snapshot. The message names the file and
	// the offset. WithTruncateCorrupt opens such a log anyway.
	ErrCorrupt = errors.New("corrupt DB file")

	// ErrLogFailed reports that the log of a durable DB could not be
	// written (the disk is full, say): the error wraps the error of the
	// file system. While the log fails, every call that would change the
	// DB fails with it, changing nothing, and the log is written again
	// each second (and at each Flush, Sync and Close) until a write
	// succeeds; then the DB takes changes again. Under SyncAlways a call
	// whose own change could not be synced fails with it too (with
	// WithDeferredSync, the DB.Sync that was to make it durable), and so does
	// a read that would return a change not yet on disk. After a failed
	// sync the log is broken until the DB is opened again. See DB.Err.
	ErrLogFailed = errors.New("writing the DB's log failed")

	// ErrClosed reports a call on a DB (or on a stream or sharded stream
	// of it) after Close; calls blocked when Close is called return it
	// too.
	ErrClosed = errors.New("the DB is closed")
)

// errorf wraps sentinel with a message that names what was given.
func errorf(sentinel error, format string, args ...any) error {
	return fmt.Errorf("xstream: %w: "+format, append([]any{sentinel}, args...)...)
}
