// Command loadgen measures the Kinesis endpoint side by side with
// kinesalite and with a trivial net/http handler decoding the same JSON,
// each a server process of its own on loopback, under the same load: c
// concurrent keep-alive clients sending the same request bodies for a
// fixed time per scenario. BENCHMARKS.md has the figures and the command:
//
//	npm install --prefix /tmp/kl kinesalite@3.3.3
//	cd kinesis && go run ./internal/loadgen -kinesalite /tmp/kl/node_modules/kinesalite/cli.js
//
// Scenarios: PutRecord of 100 bytes; PutRecords of 100 records of 100
// bytes; GetRecords of 100 records (Limit 100, following
// NextShardIterator over a stream holding 20,000 records, starting again
// at TRIM_HORIZON at the end). Memory: the growth of each server's
// resident set per record after 200,000 records of 100 bytes (and, for
// xstream, of its live Go heap after a GC).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/kinesis"
)

var (
	serve      = flag.String("serve", "", "internal: run a server (xstream or trivial) at -addr")
	addr       = flag.String("addr", "127.0.0.1:0", "internal: the server's address")
	kinesalite = flag.String("kinesalite", "", "path of kinesalite's cli.js (npm install kinesalite@3.3.3); empty: skip it")
	duration   = flag.Duration("duration", 5*time.Second, "how long each scenario runs against each server, per round")
	rounds     = flag.Int("rounds", 3, "rounds: each runs every scenario on each server in turn; the figures are the medians")
	conc       = flag.Int("c", 16, "concurrent clients")
	memRecords = flag.Int("mem-records", 200000, "records stored for the memory figure")
	abPath     = flag.String("ab", "ab", "ApacheBench, the load generator (ab -k -c C, the same body each request); empty or missing: a Go load generator, which costs the shared CPUs more")
)

func main() {
	flag.Parse()
	switch *serve {
	case "xstream":
		serveXstream()
		return
	case "trivial":
		serveTrivial()
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

// serveXstream serves the endpoint over an in-memory DB, as
// xstream-server -kinesis-addr does, and /heap: the live heap after a GC.
func serveXstream() {
	h := kinesis.New(kinesis.LocalBackend(xstream.NewDB()))
	mux := http.NewServeMux()
	mux.Handle("/", h)
	mux.HandleFunc("/heap", func(w http.ResponseWriter, _ *http.Request) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		fmt.Fprint(w, m.HeapAlloc)
	})
	listen(mux)
}

// serveTrivial decodes PutRecord and PutRecords bodies into structs and
// answers a fixed result: the floor of HTTP and JSON on this machine.
func serveTrivial() {
	listen(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".PutRecords") {
			var in struct {
				StreamName string
				Records    []struct {
					PartitionKey string
					Data         []byte
				}
			}
			json.Unmarshal(body, &in)
			type res struct{ ShardId, SequenceNumber string }
			out := struct {
				FailedRecordCount int
				Records           []res
			}{}
			for range in.Records {
				out.Records = append(out.Records, res{"shardId-000000000000", "1"})
			}
			json.NewEncoder(w).Encode(out)
			return
		}
		var in struct {
			StreamName, PartitionKey string
			Data                     []byte
		}
		json.Unmarshal(body, &in)
		io.WriteString(w, `{"ShardId":"shardId-000000000000","SequenceNumber":"1"}`)
	}))
}

func listen(h http.Handler) {
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr())
	http.Serve(ln, h)
}

// target is a server under test.
type target struct {
	name string
	url  string
	cmd  *exec.Cmd
}

func (t *target) rss() int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", t.cmd.Process.Pid))
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// start runs cmd, which prints its address (or a line holding it) on its
// first line of output.
func start(name string, cmd *exec.Cmd, findAddr func(line string) string) (*target, error) {
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line := make([]byte, 0, 128)
	buf := make([]byte, 1)
	for {
		if _, err := out.Read(buf); err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		if buf[0] == '\n' {
			break
		}
		line = append(line, buf[0])
	}
	go io.Copy(io.Discard, out)
	return &target{name: name, url: "http://" + findAddr(string(line)), cmd: cmd}, nil
}

func freeAddr() string {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	return ln.Addr().String()
}

func run() error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	same := func(s string) string { return s }
	var targets []*target
	t, err := start("xstream", exec.Command(self, "-serve", "xstream"), same)
	if err != nil {
		return err
	}
	targets = append(targets, t)
	if *kinesalite != "" {
		a := freeAddr()
		_, port, _ := net.SplitHostPort(a)
		t, err := start("kinesalite", exec.Command("node", *kinesalite, "--port", port, "--createStreamMs", "0", "--deleteStreamMs", "0", "--updateStreamMs", "0"),
			func(string) string { return a })
		if err != nil {
			return err
		}
		targets = append(targets, t)
	}
	t, err = start("trivial net/http", exec.Command(self, "-serve", "trivial"), same)
	if err != nil {
		return err
	}
	targets = append(targets, t)
	defer func() {
		for _, t := range targets {
			t.cmd.Process.Kill()
			t.cmd.Wait()
		}
	}()

	gen := "a Go load generator"
	if p, err := exec.LookPath(*abPath); *abPath != "" && err == nil {
		gen = "ab (" + p + ") -k"
	}
	fmt.Printf("%d clients, %s a scenario, %s, GOMAXPROCS %d, %d CPUs\n\n", *conc, *duration, gen, runtime.GOMAXPROCS(0), runtime.NumCPU())
	fmt.Println("| scenario | server | requests/s (median; min–max) | records/s | p50 | p99 |")
	fmt.Println("|---|---|---|---|---|---|")
	data := bytes.Repeat([]byte("x"), 100)
	for _, t := range targets[:len(targets)-1] {
		if err := call(t.url, "CreateStream", map[string]any{"StreamName": "bench", "ShardCount": 4}, nil); err != nil {
			return fmt.Errorf("%s: %v", t.name, err)
		}
		waitActive(t.url, "bench")
	}
	put := func(i int) (string, any, int) {
		return "PutRecord", map[string]any{"StreamName": "bench", "PartitionKey": "key-" + strconv.Itoa(i%1000), "Data": data}, 1
	}
	batch := make([]map[string]any, 100)
	for i := range batch {
		batch[i] = map[string]any{"PartitionKey": "key-" + strconv.Itoa(i), "Data": data}
	}
	puts := func(int) (string, any, int) {
		return "PutRecords", map[string]any{"StreamName": "bench", "Records": batch}, 100
	}
	useAB := false
	if *abPath != "" {
		if p, err := exec.LookPath(*abPath); err == nil {
			*abPath, useAB = p, true
		}
	}
	for _, sc := range []struct {
		name string
		gen  func(int) (string, any, int)
	}{{"PutRecord, 100 B", put}, {"PutRecords, 100 × 100 B", puts}} {
		res := make([][]result, len(targets))
		for range *rounds {
			for i, t := range targets {
				if useAB {
					action, in, per := sc.gen(0)
					body, _ := json.Marshal(in)
					res[i] = append(res[i], abLoad(t.url, action, body, per))
					continue
				}
				res[i] = append(res[i], load(t.url, sc.gen))
			}
		}
		for i, t := range targets {
			printMedian(sc.name, t.name, res[i])
		}
	}
	readers := targets[:len(targets)-1]
	for _, t := range readers {
		if err := call(t.url, "CreateStream", map[string]any{"StreamName": "reads", "ShardCount": 1}, nil); err != nil {
			return err
		}
		waitActive(t.url, "reads")
		for range 200 {
			if err := call(t.url, "PutRecords", map[string]any{"StreamName": "reads", "Records": batch}, nil); err != nil {
				return err
			}
		}
	}
	res := make([][]result, len(readers))
	for range *rounds {
		for i, t := range readers {
			if useAB {
				// One iterator (valid five minutes) read again and again.
				var it struct{ ShardIterator string }
				if err := call(t.url, "GetShardIterator", map[string]any{"StreamName": "reads", "ShardId": "shardId-000000000000", "ShardIteratorType": "TRIM_HORIZON"}, &it); err != nil {
					return err
				}
				body, _ := json.Marshal(map[string]any{"ShardIterator": it.ShardIterator, "Limit": 100})
				res[i] = append(res[i], abLoad(t.url, "GetRecords", body, 100))
				continue
			}
			res[i] = append(res[i], loadGets(t.url))
		}
	}
	for i, t := range readers {
		printMedian("GetRecords, 100 × 100 B", t.name, res[i])
	}

	fmt.Println("\n| server | records | resident set growth per record | live heap growth per record |")
	fmt.Println("|---|---|---|---|")
	big := make([]map[string]any, 500)
	for i := range big {
		big[i] = map[string]any{"PartitionKey": fmt.Sprintf("key-%05d", i), "Data": data}
	}
	for _, t := range targets[:len(targets)-1] {
		// A fresh process of the same server, so that its growth is the
		// records'.
		t, err := restart(t)
		if err != nil {
			return err
		}
		targets = append(targets, t)
		if err := call(t.url, "CreateStream", map[string]any{"StreamName": "mem", "ShardCount": 1}, nil); err != nil {
			return err
		}
		waitActive(t.url, "mem")
		heap0 := heap(t)
		rss0 := t.rss()
		for range *memRecords / len(big) {
			if err := call(t.url, "PutRecords", map[string]any{"StreamName": "mem", "Records": big}, nil); err != nil {
				return err
			}
		}
		heap1 := heap(t)
		rss := float64(t.rss()-rss0) / float64(*memRecords)
		hs := "n/a"
		if heap0 >= 0 {
			hs = fmt.Sprintf("%.0f B", float64(heap1-heap0)/float64(*memRecords))
		}
		fmt.Printf("| %s | %d × (100 B Data + 9 B key) | %.0f B | %s |\n", t.name, *memRecords, rss, hs)
	}
	return nil
}

// restart starts another process of the server t runs.
func restart(t *target) (*target, error) {
	args := t.cmd.Args
	if t.name == "kinesalite" {
		a := freeAddr()
		_, port, _ := net.SplitHostPort(a)
		args = slices.Clone(args)
		args[3] = port // node cli.js --port PORT
		return start(t.name, exec.Command(args[0], args[1:]...), func(string) string { return a })
	}
	return start(t.name, exec.Command(args[0], args[1:]...), func(s string) string { return s })
}

func heap(t *target) int64 {
	if t.name != "xstream" {
		return -1
	}
	resp, err := http.Get(t.url + "/heap")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	n, _ := strconv.ParseInt(string(b), 10, 64)
	return n
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}}

// call sends one signed-looking request and decodes the answer into out.
func call(url, action string, in any, out any) error {
	body, _ := json.Marshal(in)
	return send(url, action, body, out)
}

func send(url, action string, body []byte, out any) error {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("X-Amz-Target", "Kinesis_20131202."+action)
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/kinesis/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc")
	req.Header.Set("X-Amz-Date", "20260101T000000Z")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s: %d %s", action, resp.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

func waitActive(url, stream string) {
	for range 1000 {
		var d struct{ StreamDescription struct{ StreamStatus string } }
		if call(url, "DescribeStream", map[string]any{"StreamName": stream}, &d) == nil && d.StreamDescription.StreamStatus == "ACTIVE" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type result struct {
	reqs, recs int64
	took       time.Duration
	lat        []time.Duration
	p50, p99   time.Duration // when lat is not kept (ab)
	errs       int64
	firstErr   error
}

// printMedian prints the round of median throughput, with the range.
func printMedian(scenario, server string, rs []result) {
	slices.SortFunc(rs, func(a, b result) int {
		return int(float64(a.reqs)/a.took.Seconds() - float64(b.reqs)/b.took.Seconds())
	})
	rate := func(r result) float64 { return float64(r.reqs) / r.took.Seconds() }
	m := rs[len(rs)/2]
	printResult(scenario, server, m, fmt.Sprintf(" (%.0f–%.0f)", rate(rs[0]), rate(rs[len(rs)-1])))
}

func printResult(scenario, server string, r result, spread string) {
	slices.Sort(r.lat)
	q := func(p float64) time.Duration {
		if len(r.lat) == 0 {
			if p == 0.5 {
				return r.p50
			}
			return r.p99
		}
		return r.lat[int(p*float64(len(r.lat)-1))]
	}
	note := ""
	if r.errs > 0 {
		note = fmt.Sprintf(" (%d errors: %v)", r.errs, r.firstErr)
	}
	fmt.Printf("| %s | %s | %.0f%s | %.0f | %s | %s |%s\n", scenario, server, float64(r.reqs)/r.took.Seconds(), spread, float64(r.recs)/r.took.Seconds(),
		q(0.5).Round(10*time.Microsecond), q(0.99).Round(10*time.Microsecond), note)
}

// load runs c clients sending gen's requests (bodies made before the
// clock starts) for the scenario's duration.
func load(url string, gen func(int) (string, any, int)) result {
	const distinct = 1000
	bodies := make([][]byte, distinct)
	var action string
	var per int
	for i := range bodies {
		var in any
		action, in, per = gen(i)
		bodies[i], _ = json.Marshal(in)
	}
	return drive(func(ctx context.Context, i int) (int, error) {
		return per, send(url, action, bodies[i%distinct], nil)
	})
}

// loadGets runs c clients each reading the stream "reads" 100 records
// a call from TRIM_HORIZON, starting again at its end.
func loadGets(url string) result {
	return drive(func() func(ctx context.Context, i int) (int, error) {
		its := make([]string, *conc)
		return func(ctx context.Context, i int) (int, error) {
			w := i % *conc
			if its[w] == "" {
				var out struct{ ShardIterator string }
				if err := call(url, "GetShardIterator", map[string]any{"StreamName": "reads", "ShardId": "shardId-000000000000", "ShardIteratorType": "TRIM_HORIZON"}, &out); err != nil {
					return 0, err
				}
				its[w] = out.ShardIterator
			}
			var out struct {
				Records           []json.RawMessage
				NextShardIterator string
			}
			if err := call(url, "GetRecords", map[string]any{"ShardIterator": its[w], "Limit": 100}, &out); err != nil {
				return 0, err
			}
			its[w] = out.NextShardIterator
			if len(out.Records) == 0 {
				its[w] = ""
			}
			return len(out.Records), nil
		}
	}())
}

// drive runs c clients calling do (client w calls it with i = w, w+c,
// w+2c, ...) for the duration.
func drive(do func(ctx context.Context, i int) (int, error)) result {
	var res result
	var mu sync.Mutex
	var wg sync.WaitGroup
	var stop atomic.Bool
	begin := time.Now()
	for w := range *conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lat []time.Duration
			var reqs, recs, errs int64
			var first error
			for i := w; !stop.Load(); i += *conc {
				t0 := time.Now()
				n, err := do(context.Background(), i)
				if err != nil {
					errs++
					if first == nil {
						first = err
					}
					continue
				}
				lat = append(lat, time.Since(t0))
				reqs++
				recs += int64(n)
			}
			mu.Lock()
			res.reqs, res.recs, res.errs = res.reqs+reqs, res.recs+recs, res.errs+errs
			res.lat = append(res.lat, lat...)
			if res.firstErr == nil {
				res.firstErr = first
			}
			mu.Unlock()
		}()
	}
	time.Sleep(*duration)
	stop.Store(true)
	wg.Wait()
	res.took = time.Since(begin)
	if res.reqs == 0 && res.firstErr == nil {
		res.firstErr = errors.New("no request completed")
	}
	return res
}

// abLoad runs ApacheBench against url with the same body for each
// request: c keep-alive connections for the duration.
func abLoad(url, action string, body []byte, per int) result {
	f, err := os.CreateTemp("", "loadgen-body-")
	if err != nil {
		return result{firstErr: err}
	}
	defer os.Remove(f.Name())
	f.Write(body)
	f.Close()
	secs := strconv.Itoa(max(1, int(duration.Seconds())))
	out, err := exec.Command(*abPath, "-k", "-q", "-c", strconv.Itoa(*conc), "-t", secs, "-n", "100000000",
		"-p", f.Name(), "-T", "application/x-amz-json-1.1",
		"-H", "X-Amz-Target: Kinesis_20131202."+action,
		"-H", "Authorization: AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/kinesis/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc",
		"-H", "X-Amz-Date: 20260101T000000Z", url+"/").CombinedOutput()
	if err != nil {
		return result{firstErr: fmt.Errorf("ab: %v: %s", err, out)}
	}
	var r result
	var rps float64
	var failed int64
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		switch {
		case strings.HasPrefix(l, "Requests per second:") && len(f) >= 4:
			rps, _ = strconv.ParseFloat(f[3], 64)
		case strings.HasPrefix(l, "Failed requests:"):
			// Length failures are responses of another length than the
			// first (GetRecords's MillisBehindLatest varies): not failures.
			for _, k := range []string{"Connect:", "Receive:", "Exceptions:"} {
				if i := strings.Index(l, k); i >= 0 {
					n, _ := strconv.ParseInt(strings.Trim(strings.Fields(l[i+len(k):])[0], ",)"), 10, 64)
					failed += n
				}
			}
		case strings.HasPrefix(l, "Non-2xx responses:") && len(f) >= 3:
			n, _ := strconv.ParseInt(f[2], 10, 64)
			failed += n
		case len(f) == 2 && f[0] == "50%":
			ms, _ := strconv.ParseFloat(f[1], 64)
			r.p50 = time.Duration(ms * float64(time.Millisecond))
		case len(f) == 2 && f[0] == "99%":
			ms, _ := strconv.ParseFloat(f[1], 64)
			r.p99 = time.Duration(ms * float64(time.Millisecond))
		}
	}
	r.took = time.Second
	r.reqs = int64(rps)
	r.recs = int64(rps) * int64(per)
	r.errs = failed
	if failed > 0 {
		r.firstErr = errors.New("ab counted failed or non-2xx responses")
	}
	return r
}
