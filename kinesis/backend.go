package kinesis

import (
	"context"

	"github.com/xstreamgo/xstream"
)

// Backend is where a Handler keeps its streams: each Kinesis stream is a
// sharded stream of the backend's engine, of the same name, and the
// Kinesis-only state (statuses, tags, consumers, creation times) is a
// catalog kept in a stream of the backend's named-stream engine, so that
// it is durable when the DB is and shared when the engine is.
//
// LocalBackend is the in-process DB; package kredis has the Redis
// engine's.
type Backend interface {
	// Catalog is the named-stream engine holding the catalog, and the
	// name of the stream holding it (CatalogStream unless the backend
	// keeps several catalogs apart).
	Catalog() (xstream.Engine, string)
	// Create creates the sharded stream name; it fails with
	// xstream.ErrResourceInUse when one exists.
	Create(ctx context.Context, name string, args xstream.ShardedArgs) (xstream.ShardedEngine, error)
	// Open returns the sharded stream name; it fails with
	// xstream.ErrNoStream when there is none.
	Open(ctx context.Context, name string) (xstream.ShardedEngine, error)
	// Remove deletes the sharded stream name and its records; removing
	// one that does not exist is not an error.
	Remove(ctx context.Context, name string) error
	// Shared reports whether other processes may change the streams, so
	// that a handler must read the catalog again rather than trust what
	// it last wrote.
	Shared() bool
}

// CatalogStream is the name of the stream, in the backend's named-stream
// engine, that holds the Kinesis catalog by default: its last entry, in one field
// "catalog", is the JSON document of every stream's Kinesis state.
const CatalogStream = "kinesis:catalog"

// LocalBackend returns the backend of an in-process DB: its sharded
// streams are the Kinesis streams (one made by Go code with
// CreateShardedStream is not listed until the API creates it), and the
// catalog is its stream CatalogStream. With a durable DB (xstream.Open)
// everything survives a restart.
func LocalBackend(db *xstream.DB) Backend {
	return localBackend{db: func() *xstream.DB { return db }}
}

// LocalBackendFunc is LocalBackend for a DB that may be replaced while
// the handler serves it, as a server's database i is by SWAPDB or a
// restart: db returns the current one at each call (nil when there is
// none: the calls then fail with xstream.ErrClosed). Since the DB's
// catalog may change under the handler, the backend is Shared.
func LocalBackendFunc(db func() *xstream.DB) Backend { return localBackend{db: db, shared: true} }

type localBackend struct {
	db     func() *xstream.DB
	shared bool
}

// current returns the DB, or xstream.ErrClosed when there is none.
func (b localBackend) current() (*xstream.DB, error) {
	if db := b.db(); db != nil {
		return db, nil
	}
	return nil, xstream.ErrClosed
}

func (b localBackend) Catalog() (xstream.Engine, string) {
	db, err := b.current()
	if err != nil {
		db = closedDB
	}
	return xstream.Local(db), CatalogStream
}

// closedDB stands for a DB that is gone: its calls fail with ErrClosed.
var closedDB = func() *xstream.DB {
	db := xstream.NewDB()
	db.Close()
	return db
}()

func (b localBackend) Create(_ context.Context, name string, args xstream.ShardedArgs) (xstream.ShardedEngine, error) {
	db, err := b.current()
	if err != nil {
		return nil, err
	}
	ss, err := db.CreateShardedStream(name, args)
	if err != nil {
		return nil, err
	}
	return xstream.LocalSharded(ss), nil
}

func (b localBackend) Open(_ context.Context, name string) (xstream.ShardedEngine, error) {
	db, err := b.current()
	if err != nil {
		return nil, err
	}
	ss, ok := db.ShardedStream(name)
	if !ok {
		return nil, xstream.ErrNoStream
	}
	return xstream.LocalSharded(ss), nil
}

func (b localBackend) Remove(_ context.Context, name string) error {
	db, err := b.current()
	if err != nil {
		return err
	}
	_, err = db.RemoveShardedStream(name)
	return err
}

func (b localBackend) Shared() bool { return b.shared }
