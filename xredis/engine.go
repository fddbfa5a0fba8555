package xredis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/rueidis"
	"github.com/xstreamgo/xstream"
)

// Engine is an xstream.Engine on a Redis, Valkey or Redis Cluster server,
// or on xstream's own Redis-protocol server. Besides the calls of
// xstream.Engine it moves dead letters (xstream.DeadLetterEngine), done
// on the client side, and it gives access to its client and to what it
// found out about the server.
//
// Whether an Engine is also an xstream.DeleteExEngine (Redis 8.2's XDELEX
// and XACKDEL) or an xstream.NackEngine (Redis 8.8's XNACK) depends on the
// server: New looks once, at connect time, and returns a value that has
// those methods only when the server has the commands. The core's
// functions xstream.DeleteEx, xstream.AckDel and xstream.Nack fail with an
// error wrapping errors.ErrUnsupported on an engine without them.
type Engine interface {
	xstream.Engine
	xstream.DeadLetterEngine

	// Client returns the client the engine sends its commands through.
	Client() rueidis.Client
	// Server describes the server as the engine found it at connect time.
	Server() ServerInfo
}

// ServerInfo describes the server an Engine talks to, as found at connect
// time.
type ServerInfo struct {
	// Name is "redis", "valkey" or "xstream" (xstream's own server).
	Name string
	// Version is the server's version: redis_version, or valkey_version
	// for Valkey, as INFO server reports it.
	Version string
	// Cluster is true on a Redis Cluster.
	Cluster bool
	// DeleteEx reports XDELEX, XACKDEL and the KEEPREF, DELREF and ACKED
	// policies of XADD and XTRIM (Redis 8.2).
	DeleteEx bool
	// Nack reports XNACK (Redis 8.8).
	Nack bool
}

// Option configures an Engine.
type Option func(*config)

type config struct {
	blockSlice time.Duration
	wait       replicaWait
}

// DefaultBlockSlice is how long one blocking command of a blocked Read or
// ReadGroup waits at most on the server (its BLOCK argument) before the
// engine sends the next one.
const DefaultBlockSlice = 2 * time.Second

// WithBlockSlice sets how long one blocking command waits at most on the
// server (DefaultBlockSlice by default). A read that blocks longer, or
// forever, sends one command per slice, so that it never depends on the
// server's own timeout to end; the context ends it at any time.
func WithBlockSlice(d time.Duration) Option {
	return func(c *config) {
		if d >= time.Millisecond {
			c.blockSlice = d
		}
	}
}

// New connects to the servers of opt.InitAddress (one standalone server,
// or any nodes of a cluster: rueidis finds the others) and returns an
// Engine on them. Client-side caching stays as opt has it (rueidis's
// default: on, which needs CLIENT TRACKING, as Redis 6 and later, Valkey
// and xstream's own server have it), except that it is turned off
// (opt.DisableCache) where rueidis cannot have it: over RESP2
// (opt.AlwaysRESP2), or when the server refuses it (rueidis.ErrNoCache).
// The engine's own commands do not use the cache. rueidis's retries are
// turned off (opt.DisableRetry): the engine retries its commands itself,
// as ErrNotApplied and ErrUnknownOutcome say. Close closes the client.
func New(ctx context.Context, opt rueidis.ClientOption, opts ...Option) (Engine, error) {
	opt.DisableRetry = true // the engine retries (see ErrNotApplied)
	if opt.AlwaysRESP2 {
		opt.DisableCache = true
	}
	c, err := rueidis.NewClient(opt)
	if errors.Is(err, rueidis.ErrNoCache) {
		opt.DisableCache = true
		c, err = rueidis.NewClient(opt)
	}
	if err != nil {
		return nil, err
	}
	e, err := newEngine(ctx, c, true, opts)
	if err != nil {
		c.Close()
		return nil, err
	}
	return e, nil
}

// Dial is New with the given addresses and rueidis's default options.
func Dial(ctx context.Context, addrs ...string) (Engine, error) {
	return New(ctx, rueidis.ClientOption{InitAddress: addrs})
}

// NewWithClient returns an Engine that sends its commands through c, an
// existing client (with DisableCache when the server lacks CLIENT
// TRACKING). Close leaves c open: it is the caller's. The engine retries
// its commands as ErrNotApplied and ErrUnknownOutcome say; when c retries
// reads itself (rueidis's default), a read that c retried until its
// context ended returns the context's error alone.
func NewWithClient(ctx context.Context, c rueidis.Client, opts ...Option) (Engine, error) {
	return newEngine(ctx, c, false, opts)
}

// base is the Engine of a server without Redis 8's commands; the types
// below add them.
type base struct {
	c       *failoverClient // the commands go through it
	raw     rueidis.Client  // the client given or made
	owned   bool
	cluster bool
	info    ServerInfo
	cfg     config
}

type withDeleteEx struct{ *base }
type withNack struct{ *base }
type withDeleteExNack struct{ *base }

var (
	_ Engine                 = (*base)(nil)
	_ xstream.DeleteExEngine = withDeleteEx{}
	_ xstream.NackEngine     = withNack{}
	_ xstream.DeleteExEngine = withDeleteExNack{}
	_ xstream.NackEngine     = withDeleteExNack{}
)

func (w withDeleteEx) DeleteEx(ctx context.Context, stream string, policy xstream.DeletePolicy, ids ...string) ([]xstream.DeleteResult, error) {
	return w.deleteEx(ctx, stream, policy, ids)
}

func (w withDeleteEx) AckDel(ctx context.Context, stream, group string, policy xstream.DeletePolicy, ids ...string) ([]xstream.DeleteResult, error) {
	return w.ackDel(ctx, stream, group, policy, ids)
}

func (w withNack) Nack(ctx context.Context, stream, group string, mode xstream.NackMode, ids []string, args xstream.NackArgs) (int64, error) {
	return w.nack(ctx, stream, group, mode, ids, args)
}

func (w withDeleteExNack) DeleteEx(ctx context.Context, stream string, policy xstream.DeletePolicy, ids ...string) ([]xstream.DeleteResult, error) {
	return w.deleteEx(ctx, stream, policy, ids)
}

func (w withDeleteExNack) AckDel(ctx context.Context, stream, group string, policy xstream.DeletePolicy, ids ...string) ([]xstream.DeleteResult, error) {
	return w.ackDel(ctx, stream, group, policy, ids)
}

func (w withDeleteExNack) Nack(ctx context.Context, stream, group string, mode xstream.NackMode, ids []string, args xstream.NackArgs) (int64, error) {
	return w.nack(ctx, stream, group, mode, ids, args)
}

func newEngine(ctx context.Context, c rueidis.Client, owned bool, opts []Option) (Engine, error) {
	b := &base{raw: c, owned: owned, cluster: c.Mode() == rueidis.ClientModeCluster, cfg: config{blockSlice: DefaultBlockSlice}}
	for _, o := range opts {
		o(&b.cfg)
	}
	b.c = newFailoverClient(c, b.cfg.wait)
	info, err := detect(ctx, c)
	if err != nil {
		return nil, err
	}
	info.Cluster = b.cluster
	b.info = info
	switch {
	case info.DeleteEx && info.Nack:
		return withDeleteExNack{b}, nil
	case info.DeleteEx:
		return withDeleteEx{b}, nil
	case info.Nack:
		return withNack{b}, nil
	}
	return b, nil
}

// detect asks the server (in a cluster, one node) for its version and
// for the commands of Redis 8 that the engine uses.
func detect(ctx context.Context, c rueidis.Client) (ServerInfo, error) {
	res := c.DoMulti(ctx,
		c.B().Arbitrary("INFO", "server").Build(),
		c.B().Arbitrary("COMMAND", "INFO", "XDELEX", "XACKDEL", "XNACK").Build(),
	)
	text, err := res[0].ToString()
	if err != nil {
		return ServerInfo{}, fmt.Errorf("xredis: INFO server: %w", err)
	}
	info := ServerInfo{Name: "redis"}
	for line := range strings.Lines(text) {
		k, v, ok := strings.Cut(strings.TrimRight(line, "\r\n"), ":")
		if !ok {
			continue
		}
		switch k {
		case "redis_version":
			if info.Version == "" {
				info.Version = v
			}
		case "valkey_version":
			info.Name, info.Version = "valkey", v
		case "server_name":
			if v == "valkey" {
				info.Name = "valkey"
			}
		case "xstream_server":
			info.Name = "xstream"
		}
	}
	// COMMAND INFO answers nil for a command the server lacks. A server
	// without COMMAND INFO has none of them.
	if cmds, err := res[1].ToArray(); err == nil && len(cmds) == 3 {
		has := func(i int) bool { return !cmds[i].IsNil() }
		info.DeleteEx = has(0) && has(1)
		info.Nack = has(2)
	} else if !isRedisErr(err) {
		return ServerInfo{}, fmt.Errorf("xredis: COMMAND INFO: %w", err)
	}
	return info, nil
}

func (b *base) Client() rueidis.Client { return b.raw }
func (b *base) Server() ServerInfo     { return b.info }

// failover returns the client the engine's commands go through.
func (b *base) failover() *failoverClient { return b.c }

// Close closes the client if New or Dial made it; a client given to
// NewWithClient stays open.
func (b *base) Close() error {
	if b.owned {
		b.raw.Close()
	}
	return nil
}

func isRedisErr(err error) bool {
	var re *rueidis.RedisError
	return errors.As(err, &re)
}
