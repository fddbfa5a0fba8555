package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkBigReply is the cost of one big reply (see issue 11): an
// XRANGE and an XREAD of a whole stream of 20,000 entries of 1 KB (20 MB
// of reply) and an ECHO of 16 MB, from the xstream server and from redis-server
// (realAddr) on loopback in the same run, one after the other. It reports
// each server's time and their ratio, and each one's peak RSS growth over
// the reply's size: the process's resident high-water mark (VmHWM, reset
// through /proc/PID/clear_refs before the request) less its resident size
// just before (VmRSS). The xstream server runs in the benchmark's own
// process, whose client reads the reply through a fixed 1 MiB buffer; the
// Go heap is given back to the OS before each request, so the growth is
// what the reply takes. Linux only; the redis-server figures need one on
// this machine (its PID comes from INFO).
//
//	go test -run '^$' -bench BenchmarkBigReply -benchtime 3x
func BenchmarkBigReply(b *testing.B) {
	const entries, valueLen = 20_000, 1000
	value := strings.Repeat("v", valueLen)
	echo := strings.Repeat("x", 16<<20)
	cases := []struct {
		name string
		req  string
		fill bool
	}{
		{"XRANGE-20MB", resp("XRANGE", "s", "-", "+"), true},
		{"XREAD-20MB", resp("XREAD", "STREAMS", "s", "0"), true},
		{"ECHO-16MB", resp("ECHO", echo), false},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			srv := RunT(b)
			sides := []*bigSide{{name: "xstream", c: dialBig(b, srv.Addr()), pid: os.Getpid()}}
			if realAddr != "" {
				rc := dialBig(b, realAddr)
				sides = append(sides, &bigSide{name: "redis", c: rc, pid: serverPID(b, rc)})
			}
			var size int64
			for _, s := range sides {
				s.c.exchange(b, []byte(resp("DEL", "s")), 1)
				if tc.fill {
					s.c.fillValues(b, "s", entries, value)
				}
				size = s.c.replySize(b, []byte(tc.req)) // the same for both: checked below
				if s.size = size; s.size != sides[0].size {
					b.Fatalf("%s: a reply of %d bytes, xstream's has %d", s.name, s.size, sides[0].size)
				}
			}
			b.ResetTimer()
			for range b.N {
				for _, s := range sides {
					s.measure(b, []byte(tc.req))
				}
			}
			b.StopTimer()
			for _, s := range sides {
				b.ReportMetric(s.took.Seconds()*1000/float64(b.N), s.name+"-ms/op")
				b.ReportMetric(float64(s.peak)/float64(b.N)/float64(size), s.name+"-peak/reply")
				s.c.exchange(b, []byte(resp("DEL", "s")), 1)
			}
			if len(sides) == 2 {
				b.ReportMetric(sides[0].took.Seconds()/sides[1].took.Seconds(), "xstream/redis")
			}
			b.ReportMetric(float64(size), "reply-B")
		})
	}
}

// bigSide is one server of BenchmarkBigReply with what was measured.
type bigSide struct {
	name string
	c    *rawClient
	pid  int
	size int64
	took time.Duration
	peak int64 // summed over the requests
}

// measure sends req and reads its reply of s.size bytes, adding the time
// and the peak RSS growth.
func (s *bigSide) measure(b *testing.B, req []byte) {
	debug.FreeOSMemory()
	before := procStatusKB(b, s.pid, "VmRSS")
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", s.pid), []byte("5"), 0); err != nil {
		b.Skipf("cannot reset the peak RSS of process %d: %v", s.pid, err)
	}
	start := time.Now()
	if _, err := s.c.nc.Write(req); err != nil {
		b.Fatal(err)
	}
	if n, err := io.CopyBuffer(io.Discard, io.LimitReader(s.c.rd, s.size), make([]byte, 1<<20)); err != nil || n != s.size {
		b.Fatalf("%s: read %d of %d bytes: %v", s.name, n, s.size, err)
	}
	s.took += time.Since(start)
	s.peak += (procStatusKB(b, s.pid, "VmHWM") - before) << 10
}

// replySize sends req and returns the size of its reply, read whole.
func (c *rawClient) replySize(b *testing.B, req []byte) int64 {
	if _, err := c.nc.Write(req); err != nil {
		b.Fatal(err)
	}
	var n countingWriter
	if _, err := readReply(bufio.NewReader(io.TeeReader(c.rd, &n))); err != nil {
		b.Fatal(err)
	}
	return int64(n)
}

// fillValues adds n entries 1-1 ... n-1 of one field f with value v to
// key, in pipelined batches of 1,000 XADDs.
func (c *rawClient) fillValues(b *testing.B, key string, n int, v string) {
	var req bytes.Buffer
	for i := 1; i <= n; i++ {
		req.WriteString(resp("XADD", key, strconv.Itoa(i)+"-1", "f", v))
		if i%1000 == 0 || i == n {
			c.exchange(b, req.Bytes(), (i-1)%1000+1)
			req.Reset()
		}
	}
}

type countingWriter int64

func (w *countingWriter) Write(p []byte) (int, error) {
	*w += countingWriter(len(p))
	return len(p), nil
}

// serverPID returns the process_id of the server c is connected to.
func serverPID(b *testing.B, c *rawClient) int {
	r, _ := c.exchange(b, []byte(resp("INFO", "server")), 1)
	for line := range strings.SplitSeq(r.s, "\r\n") {
		if v, ok := strings.CutPrefix(line, "process_id:"); ok {
			if pid, err := strconv.Atoi(v); err == nil {
				return pid
			}
		}
	}
	b.Fatalf("no process_id in INFO server: %.200s", r.String())
	return 0
}

// procStatusKB reads a "kB" field of /proc/PID/status.
func procStatusKB(b *testing.B, pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("no /proc status of process %d: %v", pid, err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				b.Fatalf("%s of process %d: %q", field, pid, v)
			}
			return kb
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
