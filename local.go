package xstream

import (
	"context"
	"time"
)

// Local returns db as an Engine: the in-process implementation, in memory
// or durable. Its calls are the DB's and its streams' with no allocation
// of their own; the context ends blocked reads, and the other calls, which
// never wait, do not look at it. Close closes db. Local's Engine also has
// every optional capability (NackEngine, DeleteExEngine, DeadLetterEngine,
// DeadLetterPolicyEngine, IdempotenceEngine).
func Local(db *DB) Engine { return local{db} }

// local is the Engine of a DB. It is a single pointer, so turning it into
// an Engine allocates nothing.
type local struct{ db *DB }

var (
	_ NackEngine             = local{}
	_ DeleteExEngine         = local{}
	_ DeadLetterEngine       = local{}
	_ DeadLetterPolicyEngine = local{}
	_ IdempotenceEngine      = local{}
)

// existing returns the stream called name, or an ErrNoStream error.
func (l local) existing(name string) (*Stream, error) {
	if s, ok := l.db.Lookup(name); ok {
		return s, nil
	}
	return nil, errorf(ErrNoStream, "%q", name)
}

// grouped returns the stream called name, or the NOGROUP error Redis gives
// for a missing key.
func (l local) grouped(name, group string) (*Stream, error) {
	if s, ok := l.db.Lookup(name); ok {
		return s, nil
	}
	return nil, errorf(ErrNoGroup, "%w: no stream %q for group %q", ErrNoStream, name, group)
}

func (l local) Add(_ context.Context, stream string, args AddArgs, fields ...Field) (ID, error) {
	return l.db.Add(stream, args, fields...)
}

func (l local) Range(_ context.Context, stream, start, end string, count int) ([]Entry, error) {
	if s, ok := l.db.Lookup(stream); ok {
		return s.Range(start, end, count)
	}
	if _, _, _, err := parseRange(start, end); err != nil {
		return nil, err
	}
	return checkCount(count)
}

func (l local) RevRange(_ context.Context, stream, end, start string, count int) ([]Entry, error) {
	if s, ok := l.db.Lookup(stream); ok {
		return s.RevRange(end, start, count)
	}
	if _, _, _, err := parseRange(start, end); err != nil {
		return nil, err
	}
	return checkCount(count)
}

// checkCount returns no entries, or the error of a negative count.
func checkCount(count int) ([]Entry, error) {
	if count < 0 {
		return nil, errorf(ErrInvalidArgument, "count must be >= 0, got %d", count)
	}
	return nil, nil
}

func (l local) Len(_ context.Context, stream string) (int64, error) {
	if s, ok := l.db.Lookup(stream); ok {
		return s.Len(), nil
	}
	return 0, nil
}

func (l local) Delete(_ context.Context, stream string, ids ...string) (int64, error) {
	if s, ok := l.db.Lookup(stream); ok {
		return s.Delete(ids...)
	}
	return 0, nil // XDEL of a missing key is 0 before the IDs are looked at, as in Redis
}

func (l local) Trim(_ context.Context, stream string, args TrimArgs) (int64, error) {
	if s, ok := l.db.Lookup(stream); ok {
		return s.Trim(args)
	}
	_, err := args.parse()
	return 0, err
}

func (l local) SetID(_ context.Context, stream string, args SetIDArgs) error {
	s, err := l.existing(stream)
	if err != nil {
		return err
	}
	return s.SetID(args)
}

func (l local) Info(_ context.Context, stream string) (StreamInfo, error) {
	s, err := l.existing(stream)
	if err != nil {
		return StreamInfo{}, err
	}
	return s.Info()
}

func (l local) InfoFull(_ context.Context, stream string, count int) (StreamInfo, error) {
	s, err := l.existing(stream)
	if err != nil {
		return StreamInfo{}, err
	}
	return s.InfoFull(count)
}

func (l local) Read(ctx context.Context, args ReadArgs, streamsAndIDs ...string) ([]StreamEntries, error) {
	return l.db.Read(ctx, args, streamsAndIDs...)
}

func (l local) Remove(_ context.Context, streams ...string) (int64, error) {
	n, err := l.db.Remove(streams...)
	return int64(n), err
}

func (l local) CreateGroup(_ context.Context, stream, group, start string, opts GroupOptions) error {
	return l.db.CreateGroup(stream, group, start, opts)
}

func (l local) SetGroupID(_ context.Context, stream, group, id string, opts GroupOptions) error {
	s, err := l.existing(stream)
	if err != nil {
		return err
	}
	return s.SetGroupID(group, id, opts)
}

func (l local) DestroyGroup(_ context.Context, stream, group string) (bool, error) {
	s, err := l.existing(stream)
	if err != nil {
		return false, err
	}
	return s.DestroyGroup(group)
}

func (l local) CreateConsumer(_ context.Context, stream, group, consumer string) (bool, error) {
	s, err := l.existing(stream)
	if err != nil {
		return false, err
	}
	return s.CreateConsumer(group, consumer)
}

func (l local) DeleteConsumer(_ context.Context, stream, group, consumer string) (int64, error) {
	s, err := l.existing(stream)
	if err != nil {
		return 0, err
	}
	return s.DeleteConsumer(group, consumer)
}

func (l local) ReadGroup(ctx context.Context, group, consumer string, args ReadGroupArgs, streamsAndIDs ...string) ([]StreamEntries, error) {
	return l.db.ReadGroup(ctx, group, consumer, args, streamsAndIDs...)
}

func (l local) Ack(_ context.Context, stream, group string, ids ...string) (int64, error) {
	s, ok := l.db.Lookup(stream)
	if !ok {
		return 0, nil // XACK of a missing stream acknowledges nothing, as in Redis
	}
	n, err := s.Ack(group, ids...)
	if err != nil && !s.hasGroup(group) {
		return 0, nil // nor of a missing group, whatever the IDs
	}
	return n, err
}

func (l local) Pending(_ context.Context, stream, group string) (PendingSummary, error) {
	s, err := l.grouped(stream, group)
	if err != nil {
		return PendingSummary{}, err
	}
	return s.Pending(group)
}

func (l local) PendingRange(_ context.Context, stream, group string, args PendingArgs) ([]PendingEntry, error) {
	s, err := l.grouped(stream, group)
	if err != nil {
		return nil, err
	}
	return s.PendingRange(group, args)
}

func (l local) Claim(_ context.Context, stream, group, consumer string, minIdle time.Duration, ids []string, args ClaimArgs) ([]Entry, error) {
	s, err := l.grouped(stream, group)
	if err != nil {
		return nil, err
	}
	return s.Claim(group, consumer, minIdle, ids, args)
}

func (l local) AutoClaim(_ context.Context, stream, group, consumer string, minIdle time.Duration, start string, args AutoClaimArgs) (AutoClaimResult, error) {
	s, err := l.grouped(stream, group)
	if err != nil {
		return AutoClaimResult{}, err
	}
	return s.AutoClaim(group, consumer, minIdle, start, args)
}

func (l local) Groups(_ context.Context, stream string) ([]GroupInfo, error) {
	s, err := l.existing(stream)
	if err != nil {
		return nil, err
	}
	return s.Groups(), nil
}

func (l local) Consumers(_ context.Context, stream, group string) ([]ConsumerInfo, error) {
	s, err := l.existing(stream)
	if err != nil {
		return nil, err
	}
	return s.Consumers(group)
}

func (l local) Close() error { return l.db.Close() }

func (l local) Nack(_ context.Context, stream, group string, mode NackMode, ids []string, args NackArgs) (int64, error) {
	s, err := l.grouped(stream, group)
	if err != nil {
		return 0, err
	}
	return s.Nack(group, mode, ids, args)
}

func (l local) DeleteEx(_ context.Context, stream string, policy DeletePolicy, ids ...string) ([]DeleteResult, error) {
	if s, ok := l.db.Lookup(stream); ok {
		return s.DeleteEx(policy, ids...)
	}
	return notFound(policy, len(ids))
}

// notFound is the result of XDELEX of a missing key, or XACKDEL of a
// missing key or group: -1 for each ID, which Redis does not parse then
// (it checks the policy, which comes with the arguments).
func notFound(policy DeletePolicy, n int) ([]DeleteResult, error) {
	if err := policy.check(); err != nil {
		return nil, err
	}
	out := make([]DeleteResult, n)
	for i := range out {
		out[i] = DeleteNotFound
	}
	return out, nil
}

func (l local) AckDel(_ context.Context, stream, group string, policy DeletePolicy, ids ...string) ([]DeleteResult, error) {
	s, ok := l.db.Lookup(stream)
	if !ok || !s.hasGroup(group) {
		return notFound(policy, len(ids))
	}
	return s.AckDel(group, policy, ids...)
}

func (l local) MoveDeadLetters(_ context.Context, stream, group string, maxDeliveries int64, to string, count int) ([]DeadLetter, error) {
	s, err := l.grouped(stream, group)
	if err != nil {
		return nil, err
	}
	if to == stream {
		return nil, errorf(ErrInvalidArgument, "the dead-letter stream %q is the source stream", stream)
	}
	return s.MoveDeadLetters(group, DeadLetterArgs{MaxDeliveries: maxDeliveries, To: l.db.Stream(to), Count: count})
}

func (l local) SetDeadLetterPolicy(_ context.Context, stream, group string, p DeadLetterPolicy) error {
	s, err := l.existing(stream)
	if err != nil {
		return err
	}
	return s.SetDeadLetterPolicy(group, p)
}
