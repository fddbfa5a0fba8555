package kinesis

import "time"

// Option configures a Handler.
type Option func(*config)

type config struct {
	clock       func() time.Time
	createDelay time.Duration
	updateDelay time.Duration
	deleteDelay time.Duration
	shardLimit  int
	account     string
	region      string
	cacheTTL    time.Duration
}

// The defaults of the options.
const (
	// DefaultShardLimit is the account's default limit on OPEN shards, as
	// in Kinesis's larger regions.
	DefaultShardLimit = 500
	// DefaultAccount is the account ID in ARNs and messages.
	DefaultAccount = "000000000000"
	// DefaultRegion is the region in ARNs and messages.
	DefaultRegion = "us-east-1"
	// IteratorTTL is how long a shard iterator (and a ListShards
	// NextToken) stays valid after it is issued, as in Kinesis.
	IteratorTTL = 5 * time.Minute
	// maxRequestBytes is the largest request body, as kinesalite takes:
	// a PutRecords of 5 MiB in base64 fits.
	maxRequestBytes = 7 << 20
)

func newConfig(opts []Option) config {
	c := config{clock: time.Now, shardLimit: DefaultShardLimit, account: DefaultAccount, region: DefaultRegion,
		cacheTTL: time.Second}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithClock sets the clock (time.Now by default) of the status delays,
// the expiry of iterators and NextTokens, MillisBehindLatest and the
// creation timestamps. The records' arrival times and sequence numbers
// come from the engine's clock (the DB's WithClock, or the Redis
// servers').
func WithClock(now func() time.Time) Option { return func(c *config) { c.clock = now } }

// Delays are how long Kinesis's transitional stream statuses last: a new
// stream is CREATING for Create, a reshard keeps it UPDATING for Update
// (the new shards appear at its end), and a deleted stream is DELETING
// for Delete before its name is free. Zero (the default) makes each
// instant, for tests; kinesalite uses 500 ms, Kinesis some seconds.
type Delays struct {
	Create, Update, Delete time.Duration
}

// WithDelays sets the status delays.
func WithDelays(d Delays) Option {
	return func(c *config) {
		c.createDelay, c.updateDelay, c.deleteDelay = max(d.Create, 0), max(d.Update, 0), max(d.Delete, 0)
	}
}

// WithShardLimit sets the account's limit on OPEN shards over all its
// streams (DefaultShardLimit by default): CreateStream, SplitShard and
// UpdateShardCount beyond it fail with LimitExceededException.
func WithShardLimit(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.shardLimit = n
		}
	}
}

// WithAccount sets the account ID and region written in ARNs and
// messages (DefaultAccount and DefaultRegion by default). A StreamARN of
// another account or region names no stream.
func WithAccount(account, region string) Option {
	return func(c *config) {
		if account != "" {
			c.account = account
		}
		if region != "" {
			c.region = region
		}
	}
}

// WithCatalogCache sets how long a handler on a shared backend (several
// endpoint processes over one Redis) may answer PutRecord(s),
// GetShardIterator and GetRecords from its last read of the stream
// catalog (one second by default) before it reads it again; the other
// actions always read it. A stream deleted by another process may thus
// take puts for that long. Local backends are never stale.
func WithCatalogCache(d time.Duration) Option {
	return func(c *config) { c.cacheTTL = max(d, 0) }
}
