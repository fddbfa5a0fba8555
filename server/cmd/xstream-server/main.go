// Command xstream-server serves xstream streams over the Redis protocol.
//
//	cd server && go install ./cmd/xstream-server
//	xstream-server -addr 127.0.0.1:6379 -requirepass secret
//	xstream-server -dir /var/lib/xstream -appendfsync everysec
//
// It listens on 127.0.0.1 unless told otherwise and shuts down gracefully
// on SIGINT or SIGTERM. Without -dir it keeps everything in memory; with
// -dir it keeps database i (SELECT i, 0..15) in the directory DIR/i, loads
// them at start, and closes them at shutdown, which syncs their logs.
//
// Flags:
//
//	-addr ADDR               address to listen on (127.0.0.1:6379)
//	-requirepass PASS        password clients must give with AUTH (none)
//	-dir DIR                 keep the databases in DIR (default: in memory)
//	-appendfsync POLICY      always, everysec or no: when the log reaches
//	                         the disk, as Redis's appendfsync (everysec)
//	-max-request-bytes N     largest request in bytes (512 MiB)
//	-max-args N              most arguments of one command (1,048,576)
//	-max-reply-bytes N       largest reply in bytes (256 MiB)
//	-max-multi-bytes N       most memory one MULTI may queue (64 MiB)
//	-max-clients N           most clients connected at once (10,000;
//	                         lowered at start to fit the limit on open
//	                         files, as Redis does)
//	-max-clients-memory N    most memory of all clients' buffers
//	                         together, as Redis's maxmemory-clients
//	                         (2 GiB)
//	-maxmemory SIZE          Redis's maxmemory with noeviction: past it,
//	                         commands that add data get the OOM error;
//	                         also the Go runtime's memory limit. Bytes,
//	                         or with k, kb, m, mb, g, gb (0: none)
//	-shutdown-timeout D      how long a shutdown waits for in-flight
//	                         commands (10s)
//	-kinesis-addr ADDR       also serve the Amazon Kinesis Data Streams API
//	                         (HTTP/1.1 and unencrypted HTTP/2) at ADDR,
//	                         over database 0: Kinesis streams are its
//	                         sharded streams, kept in -dir with the rest
//	                         (default: none; see package kinesis)
//	-kinesis-delay D         how long a Kinesis stream stays CREATING,
//	                         UPDATING and DELETING (0: no time)
//	-kinesis-shard-limit N   the account's limit on OPEN Kinesis shards
//	                         (500)
//	-event-loops N           serve the clients with N event loops, as
//	                         Redis does (Linux; 0: a goroutine for each
//	                         client) (1). Under -appendfsync always a
//	                         loop syncs the log once for all the clients
//	                         it served in a pass, before any reply
//	-metrics-addr ADDR       serve Prometheus metrics at
//	                         http://ADDR/metrics (default: none)
//	-version                 print the version and exit
//
// It logs to stderr, a line for each event (slog's text form): where it
// listens, with its directory and sync policy, where it serves metrics
// and the Kinesis API, and what the server logs (a limit lowered at
// start, a log that fails, the shutdown).
//
// Under every -appendfsync policy the server writes the log of the
// commands it ran to the OS before it replies to them, so a crash of the
// server process (kill -9 included) loses nothing it acknowledged. With
// everysec the log is fdatasynced once a second, so a crash of the OS or
// a power loss can lose about the last second; with always each change is
// on disk before its reply; with no the OS decides when it reaches the
// disk.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/kinesis"
	"github.com/xstreamgo/xstream/server"
)

// versionString names the build: the module's version (as go install
// records it; "(devel)" for a build from a working tree), the core's, Go's
// and the Redis version the server speaks as.
func versionString() string {
	mod, core := "(unknown)", "(unknown)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		mod = bi.Main.Version
		for _, d := range bi.Deps {
			if d.Path == "github.com/xstreamgo/xstream" {
				core = d.Version
			}
		}
	}
	return fmt.Sprintf("xstream-server %s (core %s, %s), Redis protocol of %s", mod, core, runtime.Version(), server.RedisVersion)
}

func main() {
	var opts server.Options
	flag.StringVar(&opts.Addr, "addr", "127.0.0.1:6379", "address to listen on")
	flag.StringVar(&opts.Password, "requirepass", "", "password clients must give with AUTH (default: none)")
	flag.IntVar(&opts.MaxRequestBytes, "max-request-bytes", 512<<20, "largest request (command with its arguments) in bytes")
	flag.IntVar(&opts.MaxArgs, "max-args", 1<<20, "most arguments of one command")
	flag.IntVar(&opts.MaxReplyBytes, "max-reply-bytes", 256<<20, "largest reply in bytes")
	flag.IntVar(&opts.MaxMultiBytes, "max-multi-bytes", 64<<20, "most memory the commands queued in one MULTI may hold, in bytes")
	flag.IntVar(&opts.MaxClients, "max-clients", 10000, "most clients connected at once")
	flag.IntVar(&opts.MaxClientsMemory, "max-clients-memory", 2<<30, "most memory the buffers of all clients may hold together, in bytes")
	flag.StringVar(&opts.Dir, "dir", "", "keep the databases in this directory, database i in DIR/i, or as DIR/dbmap says after a SWAPDB (default: in memory only)")
	flag.IntVar(&opts.EventLoops, "event-loops", 1, "serve the clients with this many event loops, as Redis does, on Linux (0: a goroutine for each client)")
	maxmemory := flag.String("maxmemory", "0", "Redis's maxmemory (noeviction), also the Go memory limit: bytes, or 100mb, 2gb, ... (0: none)")
	fsync := flag.String("appendfsync", "everysec", "when the log reaches the disk with -dir: always, everysec or no")
	grace := flag.Duration("shutdown-timeout", 10*time.Second, "how long a shutdown waits for in-flight commands")
	version := flag.Bool("version", false, "print the version and exit")
	metricsAddr := flag.String("metrics-addr", "", "serve Prometheus metrics at http://ADDR/metrics (default: none)")
	kinesisAddr := flag.String("kinesis-addr", "", "also serve the Kinesis Data Streams API at http://ADDR over database 0 (default: none)")
	kinesisDelay := flag.Duration("kinesis-delay", 0, "how long a Kinesis stream stays CREATING, UPDATING and DELETING")
	kinesisShards := flag.Int("kinesis-shard-limit", kinesis.DefaultShardLimit, "the account's limit on OPEN Kinesis shards")
	flag.Parse()
	if *version {
		fmt.Println(versionString())
		return
	}
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "xstream-server: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	var err error
	if opts.MaxMemory, err = server.ParseMemory(*maxmemory); err != nil {
		fmt.Fprintf(os.Stderr, "xstream-server: -maxmemory: %v\n", err)
		os.Exit(2)
	}
	switch *fsync {
	case "always":
		opts.AppendFsync = xstream.SyncAlways
	case "everysec":
		opts.AppendFsync = xstream.SyncEverySecond
	case "no":
		opts.AppendFsync = xstream.SyncNo
	default:
		fmt.Fprintf(os.Stderr, "xstream-server: -appendfsync %q: want always, everysec or no\n", *fsync)
		os.Exit(2)
	}

	// One log, the server's (slog's default logger): the server says
	// where it listens, with its directory and sync policy; this command
	// adds only what it serves besides.
	log := slog.Default()
	srv := server.New(opts)
	if err := srv.Start(); err != nil {
		log.Error("xstream-server: cannot start", "err", err)
		os.Exit(1)
	}
	var metrics *http.Server
	if *metricsAddr != "" {
		ln, err := net.Listen("tcp", *metricsAddr)
		if err != nil {
			log.Error("xstream-server: -metrics-addr", "err", err)
			srv.Close()
			os.Exit(1)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", srv.MetricsHandler())
		metrics = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go metrics.Serve(ln)
		log.Info("xstream-server: serving metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	}
	var kin *http.Server
	if *kinesisAddr != "" {
		ln, err := net.Listen("tcp", *kinesisAddr)
		if err != nil {
			log.Error("xstream-server: -kinesis-addr", "err", err)
			srv.Close()
			os.Exit(1)
		}
		h := kinesis.New(kinesis.LocalBackendFunc(func() *xstream.DB { return srv.DB(0) }),
			kinesis.WithDelays(kinesis.Delays{Create: *kinesisDelay, Update: *kinesisDelay, Delete: *kinesisDelay}),
			kinesis.WithShardLimit(*kinesisShards))
		kin = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, Protocols: new(http.Protocols)}
		kin.Protocols.SetHTTP1(true)
		kin.Protocols.SetUnencryptedHTTP2(true)
		kin.RegisterOnShutdown(func() { h.Close() })
		go kin.Serve(ln)
		log.Info("xstream-server: serving the Kinesis API", "url", "http://"+ln.Addr().String())
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	ctx, cancel := context.WithTimeout(context.Background(), *grace)
	defer cancel()
	if metrics != nil {
		metrics.Shutdown(ctx)
	}
	if kin != nil {
		kin.Shutdown(ctx)
	}
	if err := srv.Shutdown(ctx); err != nil {
		log.Error("xstream-server: shutdown", "err", err)
		os.Exit(1)
	}
}
