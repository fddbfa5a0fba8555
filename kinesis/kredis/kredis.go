// Package kredis is the Redis engine's backend of the Kinesis endpoint
// (package kinesis): Kinesis streams are sharded streams of an xredis
// engine (xredis.CreateSharded), on Redis, Valkey or a Redis Cluster, and
// the catalog is the stream kinesis.CatalogStream on the same servers.
// Several endpoint processes, each with its own handler over its own
// engine, serve the same streams: they keep no state of their own but
// caches.
//
//	e, err := xredis.Dial(ctx, "127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002")
//	h := kinesis.New(kredis.Backend(e))
//	http.ListenAndServe(addr, h)
package kredis

import (
	"context"

	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/kinesis"
	"github.com/xstreamgo/xstream/xredis"
)

// Option configures a Backend.
type Option func(*backend)

// WithPrefix keeps the backend's streams apart from other backends' on
// the same servers: Kinesis stream s is the sharded stream prefix+s, and
// the catalog is the stream prefix+kinesis.CatalogStream. So several
// Kinesis "accounts" (or tests) share one Redis. The prefix may hold no
// { or }.
func WithPrefix(prefix string) Option { return func(b *backend) { b.prefix = prefix } }

// WithShardedOptions sets the options of each sharded stream the backend
// opens (xredis.WithShardClock, xredis.WithReshardLease).
func WithShardedOptions(opts ...xredis.ShardedOption) Option {
	return func(b *backend) { b.opts = opts }
}

// Backend returns the backend of engine e. The engine stays open: its
// owner closes it.
func Backend(e xredis.Engine, opts ...Option) kinesis.Backend {
	b := &backend{e: e}
	for _, o := range opts {
		o(b)
	}
	return b
}

type backend struct {
	e      xredis.Engine
	prefix string
	opts   []xredis.ShardedOption
}

func (b *backend) Catalog() (xstream.Engine, string) { return b.e, b.prefix + kinesis.CatalogStream }

func (b *backend) Create(ctx context.Context, name string, args xstream.ShardedArgs) (xstream.ShardedEngine, error) {
	return xredis.CreateSharded(ctx, b.e, b.prefix+name, args, b.opts...)
}

func (b *backend) Open(ctx context.Context, name string) (xstream.ShardedEngine, error) {
	return xredis.OpenSharded(ctx, b.e, b.prefix+name, b.opts...)
}

func (b *backend) Remove(ctx context.Context, name string) error {
	_, err := xredis.RemoveSharded(ctx, b.e, b.prefix+name)
	return err
}

func (*backend) Shared() bool { return true }
