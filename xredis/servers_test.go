package xredis_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream/server"
	"github.com/xstreamgo/xstream/xredis"
)

// The servers the tests run against, started once for the package (the
// first test that needs one starts it) and stopped by their process IDs
// when the tests end:
//
//   - "redis": a standalone redis-server on a free loopback port;
//   - "cluster": a Redis Cluster of three masters on loopback, made with
//     redis-cli --cluster create;
//   - "xstream": xstream's own server (module server), in this process;
//   - "valkey": a standalone valkey-server, like "redis";
//   - "replicated": a standalone redis-server with one replica (for the
//     benchmark of WithReplicaWait; the failover tests make clusters of
//     their own, see failover_test.go).
//
// Without redis-server (valkey-server) on PATH those kinds are skipped. Each test keeps
// to keys of its own (see keys), so tests share the servers without
// flushing them.

var (
	serversMu sync.Mutex
	servers   = map[string]*testServer{}
	stops     []func()
	scratch   string // a directory for the servers' files
)

type testServer struct {
	addrs []string
	err   error // why it could not start; a skip when errNoServer
}

// xsrv is the "xstream" kind's server, once started.
var xsrv *server.Server

// errNoServer is why a kind is skipped.
var errNoServer = errors.New("not installed")

func TestMain(m *testing.M) {
	code := m.Run()
	serversMu.Lock()
	for i := len(stops) - 1; i >= 0; i-- {
		stops[i]()
	}
	serversMu.Unlock()
	if scratch != "" {
		os.RemoveAll(scratch)
	}
	os.Exit(code)
}

// kinds are the servers every engine test runs against.
var kinds = []string{"redis", "cluster", "xstream", "valkey"}

// serverAddrs returns the addresses of the server of the given kind,
// starting it if needed; it skips the test when the kind cannot run here.
func serverAddrs(t testing.TB, kind string) []string {
	t.Helper()
	serversMu.Lock()
	s, ok := servers[kind]
	if !ok {
		s = &testServer{}
		s.addrs, s.err = startServer(kind)
		servers[kind] = s
	}
	serversMu.Unlock()
	if errors.Is(s.err, errNoServer) {
		t.Skip(s.err)
	}
	if s.err != nil {
		t.Fatalf("starting %s: %v", kind, s.err)
	}
	return s.addrs
}

func startServer(kind string) ([]string, error) {
	if err := makeScratch(); err != nil {
		return nil, err
	}
	switch kind {
	case "xstream":
		srv := server.New(server.Options{})
		if err := srv.Start(); err != nil {
			return nil, err
		}
		xsrv = srv
		stops = append(stops, func() { srv.Close() })
		return []string{srv.Addr()}, nil
	case "redis", "valkey":
		path, err := exec.LookPath(kind + "-server")
		if err != nil {
			return nil, fmt.Errorf("%s-server: %w", kind, errNoServer)
		}
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		if err := startRedis(path, port); err != nil {
			return nil, err
		}
		return []string{"127.0.0.1:" + strconv.Itoa(port)}, nil
	case "cluster":
		path, err := exec.LookPath("redis-server")
		if err != nil {
			return nil, fmt.Errorf("redis-server: %w", errNoServer)
		}
		return startCluster(path, 3)
	case "replicated":
		path, err := exec.LookPath("redis-server")
		if err != nil {
			return nil, fmt.Errorf("redis-server: %w", errNoServer)
		}
		return startReplicated(path)
	}
	return nil, fmt.Errorf("unknown server kind %q", kind)
}

// makeScratch makes the directory of the servers' files, once; the
// caller holds serversMu.
func makeScratch() error {
	if scratch == "" {
		dir, err := os.MkdirTemp("", "xredis-test-")
		if err != nil {
			return err
		}
		scratch = dir
	}
	return nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func portFree(p int) bool {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// startRedis runs redis-server on port with persistence off, its output
// in a log file of scratch, and returns once it accepts connections. The
// server is stopped by its process ID at the end of the tests.
func startRedis(path string, port int, extra ...string) error {
	cmd, err := startNode(path, port, extra...)
	if cmd != nil {
		stops = append(stops, func() { stopNode(cmd) })
	}
	return err
}

// startNode runs redis-server as startRedis does and returns its process,
// which the caller stops (stopNode), also when it did not come up.
func startNode(path string, port int, extra ...string) (*exec.Cmd, error) {
	p := strconv.Itoa(port)
	logPath := filepath.Join(scratch, "redis-"+p+".log")
	args := append([]string{"--port", p, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--daemonize", "no", "--logfile", logPath, "--dir", scratch}, extra...)
	cmd := exec.Command(path, args...)
	cmd.Dir = scratch
	dieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+p, time.Second); err == nil {
			c.Close()
			return cmd, nil
		}
		if time.Now().After(deadline) {
			return cmd, fmt.Errorf("redis-server on port %s did not start in 20s; its log:\n%s", p, tail(logPath))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stopNode kills a server by its process ID and waits for it.
func stopNode(cmd *exec.Cmd) {
	cmd.Process.Kill()
	cmd.Wait()
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// startReplicated runs a standalone redis-server with one replica and
// returns the master's address once the replica's link is up.
func startReplicated(path string) ([]string, error) {
	var ports [2]int
	for i := range ports {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	if err := startRedis(path, ports[0]); err != nil {
		return nil, err
	}
	dir := filepath.Join(scratch, "replica-"+strconv.Itoa(ports[1])) // for the RDB of its sync
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := startRedis(path, ports[1], "--dir", dir, "--replicaof", "127.0.0.1", strconv.Itoa(ports[0])); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, _ := exec.Command("redis-cli", "-p", strconv.Itoa(ports[0]), "info", "replication").Output()
		if replicated(out) {
			return []string{"127.0.0.1:" + strconv.Itoa(ports[0])}, nil
		}
		if time.Now().After(deadline) {
			p := filepath.Join(scratch, "redis-"+strconv.Itoa(ports[1])+".log")
			return nil, fmt.Errorf("the replica on port %d did not link up in 20s:\n%s", ports[1], tail(p))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// replicated reports whether INFO replication (out) shows a replica whose
// link is up, or a master with its replicas online: counted by WAIT,
// which a master does only after a replica's first ACK.
func replicated(out []byte) bool {
	if bytes.Contains(out, []byte("role:master")) {
		return bytes.Contains(out, []byte("state=online")) && !bytes.Contains(out, []byte("state=wait")) &&
			!bytes.Contains(out, []byte("state=send"))
	}
	return bytes.Contains(out, []byte("master_link_status:up"))
}

// startCluster runs n redis-server nodes in cluster mode on ports P..P+n-1
// whose cluster bus ports (P+10000 on) are free too and below the
// ephemeral range, makes them a cluster of masters, and waits until every
// node reports cluster_state:ok.
func startCluster(path string, n int) ([]string, error) {
	return makeCluster(n, 0, 5000, func(port int, extra ...string) error {
		return startRedis(path, port, extra...)
	})
}

// makeCluster starts masters*(1+replicas) nodes with start (given the
// port and the cluster options), makes them a cluster of masters masters
// with replicas replicas each and cluster-node-timeout nodeTimeout ms,
// and waits until every node reports cluster_state:ok and knows every
// master and, with replicas, until every replica's link to its master is
// up.
func makeCluster(masters, replicas, nodeTimeout int, start func(port int, extra ...string) error) ([]string, error) {
	n := masters * (1 + replicas)
	base := 0
	for try := 0; try < 50 && base == 0; try++ {
		p := 12000 + rand.IntN(8000)
		ok := true
		for i := range n {
			ok = ok && portFree(p+i) && portFree(p+i+10000)
		}
		if ok {
			base = p
		}
	}
	if base == 0 {
		return nil, errors.New("no free ports for a cluster")
	}
	var addrs, logs []string
	for i := range n {
		p := strconv.Itoa(base + i)
		if err := start(base+i, "--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(scratch, "nodes-"+p+".conf"),
			"--cluster-node-timeout", strconv.Itoa(nodeTimeout)); err != nil {
			return nil, err
		}
		addrs = append(addrs, "127.0.0.1:"+p)
		logs = append(logs, filepath.Join(scratch, "redis-"+p+".log"))
	}
	nodeLogs := func() string {
		var b strings.Builder
		for _, l := range logs {
			fmt.Fprintf(&b, "--- %s\n%s\n", l, tail(l))
		}
		return b.String()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := exec.CommandContext(ctx, "redis-cli", args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("redis-cli --cluster create: %v\n%s\n%s", err, out, nodeLogs())
	}
	waitAll := func(what string, cmd []string, ok func(out []byte) bool) error {
		for _, a := range addrs {
			_, port, _ := net.SplitHostPort(a)
			for {
				out, _ := exec.CommandContext(ctx, "redis-cli", append([]string{"-p", port}, cmd...)...).Output()
				if ok(out) {
					break
				}
				if ctx.Err() != nil {
					return fmt.Errorf("node %s: %s not seen in 60s:\n%s\n%s", a, what, out, nodeLogs())
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
		return nil
	}
	if err := waitAll("cluster_state:ok", []string{"cluster", "info"}, func(out []byte) bool {
		return bytes.Contains(out, []byte("cluster_state:ok"))
	}); err != nil {
		return nil, err
	}
	// Every node must also know every slot's owner.
	if err := waitAll(strconv.Itoa(masters)+" masters", []string{"cluster", "shards"}, func(out []byte) bool {
		return bytes.Count(out, []byte("master")) >= masters
	}); err != nil {
		return nil, err
	}
	if replicas > 0 {
		if err := waitAll(strconv.Itoa(masters*replicas)+" replicas", []string{"cluster", "nodes"}, func(out []byte) bool {
			return bytes.Count(out, []byte("slave")) >= masters*replicas
		}); err != nil {
			return nil, err
		}
		// A replica's link must be up, and a master must count its
		// replica online (after the replica's first ACK), as WAIT does.
		if err := waitAll("the replication link up", []string{"info", "replication"}, replicated); err != nil {
			return nil, err
		}
	}
	return addrs, nil
}

// newEngine returns an engine on the server of the given kind, closed at
// the end of the test.
func newEngine(t testing.TB, kind string, opts ...xredis.Option) xredis.Engine {
	return newEngineWith(t, kind, rueidis.ClientOption{}, opts...)
}

func newEngineWith(t testing.TB, kind string, opt rueidis.ClientOption, opts ...xredis.Option) xredis.Engine {
	t.Helper()
	opt.InitAddress = serverAddrs(t, kind)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := xredis.New(ctx, opt, opts...)
	if err != nil {
		t.Fatalf("xredis.New(%s): %v", kind, err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// eachKind runs fn as a subtest on each kind of server.
func eachKind(t *testing.T, fn func(t *testing.T, kind string, e xredis.Engine)) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			fn(t, kind, newEngine(t, kind))
		})
	}
}

var keySeq atomic.Int64

// keys returns a function that names the keys of one test: a prefix of
// their own, so that tests share servers. In a cluster, names with
// different tags land in different slots; tag puts a name in a slot
// chosen by the tag.
func keys(t testing.TB) func(name string) string {
	prefix := fmt.Sprintf("%s#%d:", t.Name(), keySeq.Add(1))
	return func(name string) string { return prefix + name }
}

// tagged names a key of the hash tag tag.
func tagged(t testing.TB) func(tag, name string) string {
	prefix := fmt.Sprintf("%s#%d:", t.Name(), keySeq.Add(1))
	return func(tag, name string) string { return "{" + prefix + tag + "}" + name }
}

func bg() context.Context { return context.Background() }

func must[T any](t testing.TB) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// waitBlocked returns once want blocking commands wait on e's servers:
// on Redis and Valkey, by INFO's blocked_clients summed over the nodes
// (the tests do not run in parallel, so the count is theirs); on
// xstream's server, by the readers blocked on key, which must exist (a
// read over several streams waits on each of them at once). A test waits
// for it before it adds, so that no outcome depends on timing.
func waitBlocked(t testing.TB, kind string, e xredis.Engine, want int, key string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		n := 0
		if kind == "xstream" {
			if s, ok := xsrv.DB(0).Lookup(key); ok {
				n = s.Blocked()
			}
		} else {
			for _, c := range e.Client().Nodes() {
				info, err := c.Do(bg(), c.B().Info().Section("clients").Build()).ToString()
				require.NoError(t, err)
				_, rest, _ := strings.Cut(info, "blocked_clients:")
				v, _, _ := strings.Cut(rest, "\r")
				k, err := strconv.Atoi(v)
				require.NoError(t, err, "blocked_clients in %q", info)
				n += k
			}
		}
		if n >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d of %d commands blocked after a minute", kind, n, want)
		}
		runtime.Gosched()
	}
}
