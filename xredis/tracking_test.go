package xredis_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/server"
	"github.com/xstreamgo/xstream/xredis"
)

// A rueidis client with its default options (client-side caching on, in
// OPTIN mode) connects to each server, and a cached XLEN and XRANGE are
// invalidated by another client's XADD: the next cached read sees it.
// OnInvalidations only tells the test when the invalidation came; it
// changes nothing of the caching. (rueidis's builder marks no stream
// command cacheable: the reads are built as Cacheable by hand.)
func TestDefaultClientCaching(t *testing.T) {
	for _, kind := range []string{"xstream", "redis"} {
		t.Run(kind, func(t *testing.T) {
			addrs := serverAddrs(t, kind)
			invalidated := make(chan struct{}, 16)
			c, err := rueidis.NewClient(rueidis.ClientOption{
				InitAddress:     addrs,
				OnInvalidations: func([]rueidis.RedisMessage) { invalidated <- struct{}{} },
			})
			if err != nil {
				t.Fatalf("a default client: %v", err)
			}
			defer c.Close()
			w, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: addrs, DisableCache: true})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			key := keys(t)("s")
			add := func() {
				t.Helper()
				if err := w.Do(ctx, w.B().Xadd().Key(key).Id("*").FieldValue().FieldValue("f", "v").Build()).Error(); err != nil {
					t.Fatal(err)
				}
			}
			xlen := func() (int64, bool) {
				t.Helper()
				r := c.DoCache(ctx, rueidis.Cacheable(c.B().Arbitrary("XLEN").Keys(key).ReadOnly()), time.Minute)
				n, err := r.AsInt64()
				if err != nil {
					t.Fatal(err)
				}
				return n, r.IsCacheHit()
			}
			xrange := func() (int, bool) {
				t.Helper()
				r := c.DoCache(ctx, rueidis.Cacheable(c.B().Arbitrary("XRANGE").Keys(key).Args("-", "+").ReadOnly()), time.Minute)
				es, err := r.AsXRange()
				if err != nil {
					t.Fatal(err)
				}
				return len(es), r.IsCacheHit()
			}
			wait := func() {
				t.Helper()
				select {
				case <-invalidated:
				case <-ctx.Done():
					t.Fatal("no invalidation")
				}
			}
			add()
			if n, hit := xlen(); n != 1 || hit {
				t.Fatalf("first XLEN: %d, cache hit %v", n, hit)
			}
			if n, hit := xrange(); n != 1 || hit {
				t.Fatalf("first XRANGE: %d, cache hit %v", n, hit)
			}
			if n, hit := xlen(); n != 1 || !hit {
				t.Fatalf("second XLEN: %d, cache hit %v", n, hit)
			}
			add()
			wait()
			if n, hit := xlen(); n != 2 || hit {
				t.Fatalf("XLEN after XADD: %d, cache hit %v", n, hit)
			}
			if n, hit := xrange(); n != 2 || hit {
				t.Fatalf("XRANGE after XADD: %d, cache hit %v", n, hit)
			}
		})
	}
}

// New turns the cache off where rueidis cannot have it: on a server that
// refuses CLIENT TRACKING (rueidis.ErrNoCache, here an xstream server
// made to fail the command), and over RESP2; the engine works on both.
func TestNewWithoutTracking(t *testing.T) {
	srv := server.New(server.Options{})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if err := srv.FailCommand("client tracking", "ERR unknown subcommand 'TRACKING'. Try CLIENT HELP."); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr()}}); !errors.Is(err, rueidis.ErrNoCache) {
		t.Fatalf("a default client of a server without tracking: %v, want rueidis.ErrNoCache", err)
	}
	for _, opt := range []rueidis.ClientOption{{}, {AlwaysRESP2: true}} {
		opt.InitAddress = []string{srv.Addr()}
		e, err := xredis.New(ctx, opt)
		if err != nil {
			t.Fatalf("New(AlwaysRESP2 %v): %v", opt.AlwaysRESP2, err)
		}
		if _, err := e.Add(ctx, "s", xstream.AddArgs{}, xstream.Fields("f", "v")...); err != nil {
			t.Fatal(err)
		}
		e.Close()
	}
}
