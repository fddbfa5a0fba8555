// Command memprobe measures the memory of a Redis-protocol server process
// (xstream-server or redis-server) under large requests and replies, from
// outside it: the peak RSS (VmHWM of /proc/PID/status, reset before each
// workload through /proc/PID/clear_refs) and the RSS after the workload,
// sampled until it settles or a time limit. Linux only; it must be allowed
// to write the server's clear_refs (the same user, or root).
//
//	memprobe -addr 127.0.0.1:6379 -pid PID -work echo -size 400000000
//	memprobe -addr 127.0.0.1:6379 -pid PID -work xrange -size 230000000 -clients 4
//	memprobe -addr 127.0.0.1:6379 -pid PID -work entries -n 1000000
//
// Workloads: echo sends one ECHO of -size bytes and reads the reply; xrange
// fills a stream with entries of one 1,000-byte field (-size bytes of
// values), then -clients clients each read all of it with one XRANGE at
// the same time; entries adds -n entries of one small field (XADD s *
// f v, pipelined) and reports the RSS per entry.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "server address")
	pid := flag.Int("pid", 0, "server process ID")
	work := flag.String("work", "echo", "echo, xrange or entries")
	size := flag.Int("size", 400_000_000, "bytes of the request (echo) or of the values (xrange)")
	clients := flag.Int("clients", 1, "clients reading at once (xrange)")
	n := flag.Int("n", 1_000_000, "entries (entries)")
	after := flag.Duration("after", 60*time.Second, "how long to follow the RSS after the workload")
	flag.Parse()
	if *pid == 0 {
		fail(fmt.Errorf("-pid is required"))
	}
	p := proc(*pid)
	switch *work {
	case "echo":
		p.resetPeak()
		before := p.rss()
		start := time.Now()
		c := dial(*addr)
		payload := strings.Repeat("x", *size)
		c.send([]byte(cmd("ECHO", payload)))
		got := c.readBulkLen()
		fmt.Printf("ECHO %d bytes: reply %d bytes in %v; RSS before %s, peak %s (%.2fx the request)\n",
			*size, got, time.Since(start).Round(time.Millisecond), mb(before), mb(p.peak()), float64(p.peak())/float64(*size))
		p.follow(*after)
	case "xrange":
		c := dial(*addr)
		const value = 1000
		entries := *size / value
		v := strings.Repeat("v", value)
		var b strings.Builder
		for i := range entries {
			b.WriteString(cmd("XADD", "big", strconv.Itoa(i+1)+"-1", "f", v))
		}
		c.send([]byte(b.String()))
		for range entries {
			c.drainReply()
		}
		before := p.rss()
		p.resetPeak()
		start := time.Now()
		var wg sync.WaitGroup
		sizes := make([]int64, *clients)
		for i := range *clients {
			wg.Go(func() {
				c := dial(*addr)
				c.send([]byte(cmd("XRANGE", "big", "-", "+")))
				sizes[i] = c.drainReply()
			})
		}
		wg.Wait()
		fmt.Printf("XRANGE of %d entries by %d clients at once: replies of %d bytes in %v; RSS before %s, peak %s (%.2fx one reply, %.2fx all)\n",
			entries, *clients, sizes[0], time.Since(start).Round(time.Millisecond), mb(before), mb(p.peak()),
			float64(p.peak()-before)/float64(sizes[0]), float64(p.peak()-before)/float64(sizes[0]*int64(*clients)))
		p.follow(*after)
	case "entries":
		c := dial(*addr)
		before := p.rss()
		const batch = 10_000
		for i := 0; i < *n; i += batch {
			var b strings.Builder
			for j := i; j < min(*n, i+batch); j++ {
				b.WriteString(cmd("XADD", "small", "*", "f", "v"))
			}
			c.send([]byte(b.String()))
			for j := i; j < min(*n, i+batch); j++ {
				c.drainReply()
			}
		}
		time.Sleep(2 * time.Second) // let the collector and the scavenger settle
		after := p.rss()
		fmt.Printf("%d entries: RSS before %s, after %s: %.1f B/entry\n", *n, mb(before), mb(after), float64(after-before)/float64(*n))
	default:
		fail(fmt.Errorf("unknown -work %q", *work))
	}
}

func cmd(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

type conn struct {
	nc net.Conn
	rd *bufio.Reader
}

func dial(addr string) *conn {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		fail(err)
	}
	return &conn{nc: nc, rd: bufio.NewReaderSize(nc, 1<<20)}
}

func (c *conn) send(b []byte) {
	go func() {
		if _, err := c.nc.Write(b); err != nil {
			fail(err)
		}
	}()
}

func (c *conn) readLine() string {
	line, err := c.rd.ReadString('\n')
	if err != nil {
		fail(err)
	}
	if strings.HasPrefix(line, "-") {
		fail(fmt.Errorf("server error: %s", strings.TrimSpace(line)))
	}
	return strings.TrimSuffix(line, "\r\n")
}

// readBulkLen reads a bulk string reply without keeping it.
func (c *conn) readBulkLen() int64 {
	line := c.readLine()
	n, err := strconv.ParseInt(line[1:], 10, 64)
	if err != nil || line[0] != '$' {
		fail(fmt.Errorf("reply %q", line))
	}
	if _, err := io.CopyN(io.Discard, c.rd, n+2); err != nil {
		fail(err)
	}
	return n
}

// drainReply reads one reply of nested arrays and bulks, returning its
// size in bytes.
func (c *conn) drainReply() int64 {
	line := c.readLine()
	size := int64(len(line) + 2)
	switch line[0] {
	case '*':
		n, _ := strconv.Atoi(line[1:])
		for range n {
			size += c.drainReply()
		}
	case '$':
		n, _ := strconv.ParseInt(line[1:], 10, 64)
		if n >= 0 {
			if _, err := io.CopyN(io.Discard, c.rd, n+2); err != nil {
				fail(err)
			}
			size += n + 2
		}
	}
	return size
}

type proc int

func (p proc) status(field string) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(int(p)) + "/status")
	if err != nil {
		fail(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	fail(fmt.Errorf("no %s in /proc/%d/status", field, p))
	return 0
}

func (p proc) rss() int64  { return p.status("VmRSS") }
func (p proc) peak() int64 { return p.status("VmHWM") }

func (p proc) resetPeak() {
	if err := os.WriteFile("/proc/"+strconv.Itoa(int(p))+"/clear_refs", []byte("5"), 0); err != nil {
		fail(err)
	}
}

// follow prints the RSS each 5 s until d passed.
func (p proc) follow(d time.Duration) {
	start := time.Now()
	var marks []string
	for time.Since(start) < d {
		time.Sleep(5 * time.Second)
		marks = append(marks, fmt.Sprintf("%ds %s", int(time.Since(start).Seconds()+0.5), mb(p.rss())))
	}
	fmt.Println("RSS after:", strings.Join(marks, ", "))
}

func mb(n int64) string { return fmt.Sprintf("%.0f MB", float64(n)/1e6) }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "memprobe:", err)
	os.Exit(1)
}
