package xstream

import (
	"context"
	"errors"
	"time"
)

// Engine is the DB-level API of named streams, as one Redis database
// offers it, behind which any engine may be: the in-process DB (Local),
// or a Redis, Valkey or Redis Cluster server (module
// github.com/xstreamgo/xstream/xredis). A program written against Engine
// moves from one to the other by changing its constructor.
//
// Every method takes a context first: a remote engine does I/O, and a
// blocked Read or ReadGroup ends promptly when the context is done. The
// types and sentinel errors are the package's; an engine maps its own
// errors to them (a Redis NOGROUP is ErrNoGroup) and passes connection
// and context errors through.
//
// A missing stream behaves as in Redis: Range, Len, Delete, Trim and Ack
// see an empty stream; Info, InfoFull, SetID, Groups, Consumers and the
// group calls fail with ErrNoStream (CreateGroup unless MkStream);
// Pending, PendingRange, Claim and AutoClaim fail with ErrNoGroup.
//
// Capabilities that not every engine has are optional interfaces:
// NackEngine, DeleteExEngine, DeadLetterEngine, DeadLetterPolicyEngine and
// IdempotenceEngine. The functions Nack, DeleteEx, AckDel,
// MoveDeadLetters, SetDeadLetterPolicy and SetIdempotence call them, and
// fail with an error wrapping errors.ErrUnsupported on an engine without
// them.
type Engine interface {
	// Add appends an entry to the stream, creating it unless
	// args.NoMkStream (Redis XADD).
	Add(ctx context.Context, stream string, args AddArgs, fields ...Field) (ID, error)
	// Range and RevRange return entries by ID range (XRANGE, XREVRANGE).
	Range(ctx context.Context, stream, start, end string, count int) ([]Entry, error)
	RevRange(ctx context.Context, stream, end, start string, count int) ([]Entry, error)
	// Len returns the number of entries, 0 for a missing stream (XLEN).
	Len(ctx context.Context, stream string) (int64, error)
	// Delete removes entries by ID (XDEL).
	Delete(ctx context.Context, stream string, ids ...string) (int64, error)
	// Trim trims the stream (XTRIM).
	Trim(ctx context.Context, stream string, args TrimArgs) (int64, error)
	// SetID sets the stream's last ID and counters (XSETID).
	SetID(ctx context.Context, stream string, args SetIDArgs) error
	// Info and InfoFull describe the stream (XINFO STREAM [FULL]).
	Info(ctx context.Context, stream string) (StreamInfo, error)
	InfoFull(ctx context.Context, stream string, count int) (StreamInfo, error)
	// Read reads several streams, waiting as args.Block says (XREAD).
	Read(ctx context.Context, args ReadArgs, streamsAndIDs ...string) ([]StreamEntries, error)
	// Remove deletes whole streams and returns how many existed (DEL).
	Remove(ctx context.Context, streams ...string) (int64, error)

	// The group admin calls (XGROUP CREATE, SETID, DESTROY,
	// CREATECONSUMER, DELCONSUMER).
	CreateGroup(ctx context.Context, stream, group, start string, opts GroupOptions) error
	SetGroupID(ctx context.Context, stream, group, id string, opts GroupOptions) error
	DestroyGroup(ctx context.Context, stream, group string) (bool, error)
	CreateConsumer(ctx context.Context, stream, group, consumer string) (bool, error)
	DeleteConsumer(ctx context.Context, stream, group, consumer string) (int64, error)

	// ReadGroup reads several streams as a consumer of group, waiting as
	// args.Block says (XREADGROUP). The Redis engine refuses args.Claim
	// (ErrInvalidArgument); a DB serves it (see DB.ReadGroupDeliveries).
	ReadGroup(ctx context.Context, group, consumer string, args ReadGroupArgs, streamsAndIDs ...string) ([]StreamEntries, error)
	// Ack acknowledges pending entries (XACK).
	Ack(ctx context.Context, stream, group string, ids ...string) (int64, error)
	// Pending and PendingRange describe the PEL (XPENDING).
	Pending(ctx context.Context, stream, group string) (PendingSummary, error)
	PendingRange(ctx context.Context, stream, group string, args PendingArgs) ([]PendingEntry, error)
	// Claim and AutoClaim take over pending entries (XCLAIM,
	// XAUTOCLAIM).
	Claim(ctx context.Context, stream, group, consumer string, minIdle time.Duration, ids []string, args ClaimArgs) ([]Entry, error)
	AutoClaim(ctx context.Context, stream, group, consumer string, minIdle time.Duration, start string, args AutoClaimArgs) (AutoClaimResult, error)
	// Groups and Consumers describe groups and consumers (XINFO GROUPS,
	// XINFO CONSUMERS).
	Groups(ctx context.Context, stream string) ([]GroupInfo, error)
	Consumers(ctx context.Context, stream, group string) ([]ConsumerInfo, error)

	// Close releases the engine. For Local it closes the DB.
	Close() error
}

// NackEngine is an Engine with Redis 8.8's XNACK.
type NackEngine interface {
	Nack(ctx context.Context, stream, group string, mode NackMode, ids []string, args NackArgs) (int64, error)
}

// DeleteExEngine is an Engine with Redis 8.2's XDELEX and XACKDEL.
type DeleteExEngine interface {
	DeleteEx(ctx context.Context, stream string, policy DeletePolicy, ids ...string) ([]DeleteResult, error)
	AckDel(ctx context.Context, stream, group string, policy DeletePolicy, ids ...string) ([]DeleteResult, error)
}

// DeadLetterEngine is an Engine that moves dead letters itself (see
// Stream.MoveDeadLetters): entries of group delivered more than
// maxDeliveries times go to the stream to, at most count (0: all).
type DeadLetterEngine interface {
	MoveDeadLetters(ctx context.Context, stream, group string, maxDeliveries int64, to string, count int) ([]DeadLetter, error)
}

// DeadLetterPolicyEngine is an Engine that keeps a group's
// DeadLetterPolicy itself (Local): its Claim, AutoClaim and history reads
// move an entry delivered too often to the dead-letter stream atomically,
// its CreateGroup takes GroupOptions.DeadLetter, and its Groups report
// DeadLetter and DeadLettered. An engine without it fails a CreateGroup
// with a policy with an error wrapping errors.ErrUnsupported. A missing
// stream is an ErrNoStream error, a missing group ErrNoGroup.
type DeadLetterPolicyEngine interface {
	SetDeadLetterPolicy(ctx context.Context, stream, group string, p DeadLetterPolicy) error
}

// unsupported returns the error of a capability e lacks.
func unsupported(e Engine, what string) error {
	return errorf(errors.ErrUnsupported, "%s is not supported by this engine (%T)", what, e)
}

// Nack calls e's Nack (Redis 8.8 XNACK), or fails with an error wrapping
// errors.ErrUnsupported when e has none.
func Nack(ctx context.Context, e Engine, stream, group string, mode NackMode, ids []string, args NackArgs) (int64, error) {
	if n, ok := e.(NackEngine); ok {
		return n.Nack(ctx, stream, group, mode, ids, args)
	}
	return 0, unsupported(e, "Nack")
}

// DeleteEx calls e's DeleteEx (Redis 8.2 XDELEX), or fails with an error
// wrapping errors.ErrUnsupported.
func DeleteEx(ctx context.Context, e Engine, stream string, policy DeletePolicy, ids ...string) ([]DeleteResult, error) {
	if d, ok := e.(DeleteExEngine); ok {
		return d.DeleteEx(ctx, stream, policy, ids...)
	}
	return nil, unsupported(e, "DeleteEx")
}

// AckDel calls e's AckDel (Redis 8.2 XACKDEL), or fails with an error
// wrapping errors.ErrUnsupported.
func AckDel(ctx context.Context, e Engine, stream, group string, policy DeletePolicy, ids ...string) ([]DeleteResult, error) {
	if d, ok := e.(DeleteExEngine); ok {
		return d.AckDel(ctx, stream, group, policy, ids...)
	}
	return nil, unsupported(e, "AckDel")
}

// MoveDeadLetters calls e's MoveDeadLetters, or fails with an error
// wrapping errors.ErrUnsupported.
func MoveDeadLetters(ctx context.Context, e Engine, stream, group string, maxDeliveries int64, to string, count int) ([]DeadLetter, error) {
	if d, ok := e.(DeadLetterEngine); ok {
		return d.MoveDeadLetters(ctx, stream, group, maxDeliveries, to, count)
	}
	return nil, unsupported(e, "MoveDeadLetters")
}

// SetDeadLetterPolicy calls e's SetDeadLetterPolicy (see
// Stream.SetDeadLetterPolicy), or fails with an error wrapping
// errors.ErrUnsupported.
func SetDeadLetterPolicy(ctx context.Context, e Engine, stream, group string, p DeadLetterPolicy) error {
	if d, ok := e.(DeadLetterPolicyEngine); ok {
		return d.SetDeadLetterPolicy(ctx, stream, group, p)
	}
	return unsupported(e, "SetDeadLetterPolicy")
}
