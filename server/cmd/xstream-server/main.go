// Command xstream-server serves xstream streams over the Redis protocol.
//
//	cd server && go install ./cmd/xstream-server
//	xstream-server -addr 127.0.0.1:6379 -requirepass secret
//
// It listens on 127.0.0.1 unless told otherwise, keeps everything in
// memory, and shuts down gracefully on SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/xstreamgo/xstream/server"
)

func main() {
	var opts server.Options
	flag.StringVar(&opts.Addr, "addr", "127.0.0.1:6379", "address to listen on")
	flag.StringVar(&opts.Password, "requirepass", "", "password clients must give with AUTH (default: none)")
	flag.IntVar(&opts.MaxRequestBytes, "max-request-bytes", 512<<20, "largest request (command with its arguments) in bytes")
	flag.IntVar(&opts.MaxArgs, "max-args", 1<<20, "most arguments of one command")
	flag.IntVar(&opts.MaxReplyBytes, "max-reply-bytes", 256<<20, "largest reply in bytes")
	flag.IntVar(&opts.MaxMultiBytes, "max-multi-bytes", 64<<20, "most memory the commands queued in one MULTI may hold, in bytes")
	flag.IntVar(&opts.MaxClients, "max-clients", 10000, "most clients connected at once")
	grace := flag.Duration("shutdown-timeout", 10*time.Second, "how long a shutdown waits for in-flight commands")
	flag.Parse()

	srv := server.New(opts)
	if err := srv.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "xstream-server:", err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "xstream-server: listening on", srv.Addr())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	ctx, cancel := context.WithTimeout(context.Background(), *grace)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "xstream-server: shutdown:", err)
		os.Exit(1)
	}
}
