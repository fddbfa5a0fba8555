package xredis

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/rueidis"
	"github.com/xstreamgo/xstream"
)

var errUnsupported = errors.ErrUnsupported

// Redis's error replies and the sentinels they map to, by the start of
// the text (after the client took off "ERR "). The texts are those of
// Redis 7.0 to 8.8 (t_stream.c) and of xstream's server, which writes
// the same.
var errorTexts = []struct {
	prefix   string
	sentinel error
}{
	{"NOGROUP ", xstream.ErrNoGroup},
	{"BUSYGROUP ", xstream.ErrGroupExists},
	{"UNBLOCKED the stream key no longer exists", xstream.ErrNoStream},
	{"The ID specified in XADD must be greater than 0-0", xstream.ErrZeroID},
	{"The ID specified in XADD is equal or smaller than the target stream top item", xstream.ErrIDTooSmall},
	{"The stream has exhausted the last possible ID", xstream.ErrStreamExhausted},
	{"Invalid stream ID", xstream.ErrInvalidID},
	{"invalid start ID for the interval", xstream.ErrInvalidID},
	{"invalid end ID for the interval", xstream.ErrInvalidID},
	{"The ID specified in XSETID is smaller than", xstream.ErrIDTooSmall},
	{"The entries_added specified in XSETID is smaller than", xstream.ErrInvalidArgument},
	{"no such key", xstream.ErrNoStream},
	{"The XGROUP subcommand requires the key to exist", xstream.ErrNoStream},
	{"syntax error, MAXLEN and MINID options at the same time", xstream.ErrTrimConflict},
	{"syntax error, LIMIT cannot be used without", xstream.ErrTrimConflict},
	{"value is not an integer or out of range", xstream.ErrInvalidArgument},
	{"COUNT must be > 0", xstream.ErrInvalidArgument},
	{"The MAXLEN argument must be >= 0", xstream.ErrInvalidArgument},
	{"The LIMIT argument must be >= 0", xstream.ErrInvalidArgument},
	{"entries_added must be positive", xstream.ErrInvalidArgument},
	{"value for ENTRIESREAD must be positive or -1", xstream.ErrInvalidArgument},
}

// mapErr maps a Redis error reply to the xstream sentinel it stands for:
// the result wraps both the sentinel and the *rueidis.RedisError. Other
// Redis errors (WRONGTYPE, CROSSSLOT, ...) come back as the client gave
// them, and so do connection and context errors, unwrapped.
func mapErr(err error) error {
	if err == nil || rueidis.IsRedisNil(err) {
		return err
	}
	var re *rueidis.RedisError
	if !errors.As(err, &re) {
		return err
	}
	msg := re.Error()
	for _, t := range errorTexts {
		if strings.HasPrefix(msg, t.prefix) {
			return fmt.Errorf("xredis: %w: %w", t.sentinel, re)
		}
	}
	return err
}

// noSuchKeyOrGroup reports a NOGROUP error that does not say which of
// the key and the group is missing ("No such key ... or consumer group").
func noSuchKeyOrGroup(err error) bool {
	var re *rueidis.RedisError
	return errors.As(err, &re) && strings.HasPrefix(re.Error(), "NOGROUP No such key")
}

// groupErr is mapErr for the replies to commands on a group of the
// stream: Redis answers NOGROUP for a missing stream as for a missing
// group; like the core, the engine's error then also matches
// xstream.ErrNoStream when the stream is missing, which it asks the
// server (only on this error path).
func (b *base) groupErr(ctx context.Context, err error, group string, streams ...string) error {
	if !noSuchKeyOrGroup(err) {
		return mapErr(err)
	}
	// The error names the first stream that failed: look at that one.
	var re *rueidis.RedisError
	errors.As(err, &re)
	for _, s := range streams {
		if strings.HasPrefix(re.Error(), "NOGROUP No such key '"+s+"' or consumer group '"+group+"'") {
			streams = []string{s}
			break
		}
	}
	if missing, ok := b.missingStream(ctx, streams); ok {
		return fmt.Errorf("xredis: %w: %w: no stream %q for group %q", xstream.ErrNoGroup, xstream.ErrNoStream, missing, group)
	}
	return mapErr(err)
}

// missingStream returns the first of streams that does not exist.
func (b *base) missingStream(ctx context.Context, streams []string) (string, bool) {
	cmds := make(rueidis.Commands, len(streams))
	for i, s := range streams {
		cmds[i] = b.c.B().Arbitrary("EXISTS").Keys(s).ReadOnly()
	}
	for i, r := range b.c.DoMulti(ctx, cmds...) {
		if n, err := r.AsInt64(); err == nil && n == 0 {
			return streams[i], true
		}
	}
	return "", false
}

// noGroupErr is the error of a call on a group of a missing stream, as
// the core gives it.
func noGroupErr(stream, group string) error {
	return fmt.Errorf("xredis: %w: %w: no stream %q for group %q", xstream.ErrNoGroup, xstream.ErrNoStream, stream, group)
}

// exists reports whether stream exists.
func (b *base) exists(ctx context.Context, stream string) (bool, error) {
	n, err := b.c.Do(ctx, b.c.B().Arbitrary("EXISTS").Keys(stream).ReadOnly()).AsInt64()
	return n > 0, err
}

// orNoStream returns the core's ErrNoStream error when stream does not
// exist, else err: the core looks the stream up before it checks the
// arguments of some calls, which the engine checks before it sends them.
func (b *base) orNoStream(ctx context.Context, stream string, err error) error {
	if ok, xerr := b.exists(ctx, stream); xerr != nil {
		return xerr
	} else if !ok {
		return errorf(xstream.ErrNoStream, "%q", stream)
	}
	return err
}

// orNoGroup is orNoStream for the calls on which a missing stream is an
// ErrNoGroup error.
func (b *base) orNoGroup(ctx context.Context, stream, group string, err error) error {
	if ok, xerr := b.exists(ctx, stream); xerr != nil {
		return xerr
	} else if !ok {
		return noGroupErr(stream, group)
	}
	return err
}

// redisText is the text of a Redis error reply (without "ERR ").
func redisText(err error) string {
	var re *rueidis.RedisError
	if errors.As(err, &re) {
		return re.Error()
	}
	return ""
}
