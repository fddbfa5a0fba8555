package kredis_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xstreamgo/xstream/kinesis"
	"github.com/xstreamgo/xstream/kinesis/kinesistest"
	"github.com/xstreamgo/xstream/kinesis/kredis"
	"github.com/xstreamgo/xstream/xredis"
)

// The servers the tests run on: a standalone redis-server and a Redis
// Cluster of three masters, each started on loopback by the first test
// that needs it (with persistence off) and stopped by its process ID at
// the end. Without redis-server on PATH the tests are skipped, saying
// so. Each endpoint keeps to a key prefix of its own (WithPrefix).
var kinds = []string{"redis", "cluster"}

var (
	redisMu      sync.Mutex
	redisAddrs   = map[string][]string{}
	redisErrs    = map[string]error{}
	redisStops   []func()
	redisScratch string
	prefixSeq    atomic.Int64
)

func TestMain(m *testing.M) {
	code := m.Run()
	redisMu.Lock()
	for _, stop := range redisStops {
		stop()
	}
	if redisScratch != "" {
		os.RemoveAll(redisScratch)
	}
	redisMu.Unlock()
	os.Exit(code)
}

// TestBackend runs the endpoint's behaviour tests on each server.
func TestBackend(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			addrs := redisServer(t, kind)
			kinesistest.RunBackend(t, func(t *testing.T, opts ...kinesis.Option) *kinesistest.Endpoint {
				return startOn(t, addrs, fmt.Sprintf("t%d-", prefixSeq.Add(1)), opts)
			})
		})
	}
}

// TestShared runs two endpoints over each server.
func TestShared(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			addrs := redisServer(t, kind)
			kinesistest.RunShared(t, func(t *testing.T, opts ...kinesis.Option) [2]*kinesistest.Endpoint {
				prefix := fmt.Sprintf("t%d-", prefixSeq.Add(1))
				return [2]*kinesistest.Endpoint{startOn(t, addrs, prefix, opts), startOn(t, addrs, prefix, opts)}
			})
		})
	}
}

// startOn starts an endpoint with an engine of its own on the server at
// addrs, over the streams of prefix.
func startOn(t *testing.T, addrs []string, prefix string, opts []kinesis.Option) *kinesistest.Endpoint {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := xredis.Dial(ctx, addrs...)
	if err != nil {
		t.Fatalf("xredis.Dial(%v): %v", addrs, err)
	}
	t.Cleanup(func() { e.Close() })
	return kinesistest.StartWith(t, kredis.Backend(e, kredis.WithPrefix(prefix)), opts...)
}

// redisServer returns the addresses of the server of kind ("redis" or
// "cluster"), starting it once; it skips the test without redis-server.
func redisServer(t *testing.T, kind string) []string {
	t.Helper()
	redisMu.Lock()
	if _, ok := redisAddrs[kind]; !ok && redisErrs[kind] == nil {
		redisAddrs[kind], redisErrs[kind] = startRedisKind(kind)
	}
	addrs, err := redisAddrs[kind], redisErrs[kind]
	redisMu.Unlock()
	var notFound *exec.Error
	if errors.As(err, &notFound) {
		t.Skipf("skipping the %s backend: redis-server is not on PATH (%v)", kind, err)
	}
	if err != nil {
		t.Fatalf("starting %s: %v", kind, err)
	}
	return addrs
}

func startRedisKind(kind string) ([]string, error) {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, err
	}
	if redisScratch == "" {
		if redisScratch, err = os.MkdirTemp("", "kinesis-redis-"); err != nil {
			return nil, err
		}
	}
	if kind == "redis" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		return []string{"127.0.0.1:" + strconv.Itoa(port)}, runRedis(path, port)
	}
	// A cluster: three nodes on P..P+2 whose bus ports P+10000.. are free
	// too and below the ephemeral range.
	base := 0
	for try := range 500 {
		p := 12000 + (os.Getpid()+7*try)%10000
		free := true
		for i := 0; i < 3 && free; i++ {
			free = canListen(p+i) && canListen(p+i+10000)
		}
		if free {
			base = p
			break
		}
	}
	if base == 0 {
		return nil, errors.New("no free ports for a cluster")
	}
	var addrs []string
	for i := range 3 {
		p := base + i
		if err := runRedis(path, p, "--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(redisScratch, "nodes-"+strconv.Itoa(p)+".conf")); err != nil {
			return nil, err
		}
		addrs = append(addrs, "127.0.0.1:"+strconv.Itoa(p))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	create := append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, "redis-cli", create...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("redis-cli --cluster create: %v: %s", err, out)
	}
	for _, a := range addrs {
		_, port, _ := net.SplitHostPort(a)
		for {
			info, _ := exec.CommandContext(ctx, "redis-cli", "-p", port, "cluster", "info").Output()
			shards, _ := exec.CommandContext(ctx, "redis-cli", "-p", port, "cluster", "shards").Output()
			if bytes.Contains(info, []byte("cluster_state:ok")) && bytes.Count(shards, []byte("master")) >= 3 {
				break
			}
			if ctx.Err() != nil {
				return nil, fmt.Errorf("cluster node %s not ready in a minute: %s", a, info)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return addrs, nil
}

func canListen(port int) bool {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err == nil {
		ln.Close()
	}
	return err == nil
}

// runRedis starts redis-server on port without persistence and waits
// until it accepts connections; the caller holds redisMu.
func runRedis(path string, port int, extra ...string) error {
	p := strconv.Itoa(port)
	logFile := filepath.Join(redisScratch, "redis-"+p+".log")
	cmd := exec.Command(path, append([]string{"--port", p, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--logfile", logFile, "--dir", redisScratch}, extra...)...)
	dieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	redisStops = append(redisStops, func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+p, time.Second); err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logFile)
			return fmt.Errorf("redis-server on port %s did not start in 20s: %s", p, log)
		}
	}
}
