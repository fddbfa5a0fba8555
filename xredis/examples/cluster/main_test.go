package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/xredis"
)

// TestRun runs the example on the in-process DB, and on a cluster when
// XSTREAM_CLUSTER_ADDRS names one.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	engines := map[string]func() (xstream.Engine, error){
		"local": func() (xstream.Engine, error) { return xstream.Local(xstream.NewDB()), nil },
	}
	if addrs := os.Getenv("XSTREAM_CLUSTER_ADDRS"); addrs != "" {
		engines["cluster"] = func() (xstream.Engine, error) {
			return xredis.Dial(ctx, strings.Split(addrs, ",")...)
		}
	}
	for name, mk := range engines {
		t.Run(name, func(t *testing.T) {
			e, err := mk()
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			var out bytes.Buffer
			if err := run(ctx, e, 100, &out); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(out.String(), "300 orders processed:") || strings.Count(out.String(), ": 0 pending") != 3 {
				t.Fatalf("output:\n%s", out.String())
			}
		})
	}
}
