// Command xstream-kinesis serves the Amazon Kinesis Data Streams API over
// a Redis or Redis Cluster: a stateless endpoint, of which several
// processes may run over the same servers, each serving every stream.
//
//	cd kinesis/kredis && go install ./cmd/xstream-kinesis
//	xstream-kinesis -addr 127.0.0.1:4567 -redis 127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002
//	aws --endpoint-url http://127.0.0.1:4567 kinesis list-streams
//
// Flags:
//
//	-addr ADDR          address to serve HTTP/1.1 and unencrypted HTTP/2 at
//	                    (127.0.0.1:4567)
//	-redis ADDRS        comma-separated addresses of the Redis server or of
//	                    any nodes of the cluster (127.0.0.1:6379)
//	-prefix P           keep the streams under this key prefix, apart from
//	                    other endpoints' (none)
//	-delay D            how long a stream stays CREATING, UPDATING and
//	                    DELETING (0: no time)
//	-shard-limit N      the account's limit on OPEN shards (500)
//
// It shuts down gracefully on SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/xstreamgo/xstream/kinesis"
	"github.com/xstreamgo/xstream/kinesis/kredis"
	"github.com/xstreamgo/xstream/xredis"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:4567", "address to serve the Kinesis API at")
	redisAddrs := flag.String("redis", "127.0.0.1:6379", "comma-separated addresses of the Redis server or cluster nodes")
	prefix := flag.String("prefix", "", "key prefix keeping this endpoint's streams apart")
	delay := flag.Duration("delay", 0, "how long a stream stays CREATING, UPDATING and DELETING")
	shardLimit := flag.Int("shard-limit", kinesis.DefaultShardLimit, "the account's limit on OPEN shards")
	flag.Parse()
	if err := run(*addr, strings.Split(*redisAddrs, ","), *prefix, *delay, *shardLimit); err != nil {
		fmt.Fprintln(os.Stderr, "xstream-kinesis:", err)
		os.Exit(1)
	}
}

func run(addr string, redisAddrs []string, prefix string, delay time.Duration, shardLimit int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	e, err := xredis.Dial(ctx, redisAddrs...)
	cancel()
	if err != nil {
		return err
	}
	defer e.Close()
	h := kinesis.New(kredis.Backend(e, kredis.WithPrefix(prefix)),
		kinesis.WithDelays(kinesis.Delays{Create: delay, Update: delay, Delete: delay}), kinesis.WithShardLimit(shardLimit))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, Protocols: new(http.Protocols)}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	srv.RegisterOnShutdown(func() { h.Close() })
	fmt.Fprintf(os.Stderr, "xstream-kinesis: Kinesis API at http://%s over Redis at %s\n", ln.Addr(), strings.Join(redisAddrs, ","))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	select {
	case err := <-done:
		return err
	case <-sig:
	}
	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer scancel()
	return srv.Shutdown(sctx)
}
