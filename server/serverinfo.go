package server

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// INFO, with the sections and fields that Redis's tools read (redis-cli
// --stat, monitoring agents, test suites): what a field means here is
// what it means in Redis, measured on the Go runtime where Redis measures
// its allocator.

// infoSections are INFO's sections in Redis's order; default says whether
// INFO without arguments (or "default") includes it, as Redis 7.
var infoSections = []struct {
	name    string
	dflt    bool
	section func(c *conn, b *strings.Builder)
}{
	{"server", true, (*conn).infoServer},
	{"clients", true, (*conn).infoClients},
	{"memory", true, (*conn).infoMemory},
	{"persistence", true, func(c *conn, b *strings.Builder) { c.writePersistenceInfo(b) }},
	{"stats", true, (*conn).infoStats},
	{"replication", true, (*conn).infoReplication},
	{"cpu", true, (*conn).infoCPU},
	{"modules", true, func(c *conn, b *strings.Builder) { b.WriteString("# Modules\r\n") }},
	{"commandstats", false, func(c *conn, b *strings.Builder) { c.srv.stats.writeCommandStats(b) }},
	{"errorstats", true, func(c *conn, b *strings.Builder) { c.srv.stats.writeErrorStats(b) }},
	{"cluster", true, func(c *conn, b *strings.Builder) { b.WriteString("# Cluster\r\ncluster_enabled:0\r\n") }},
	{"keyspace", true, (*conn).infoKeyspace},
}

func info(c *conn, args [][]byte) {
	want := map[string]bool{}
	for _, a := range args[1:] {
		want[strings.ToLower(string(a))] = true
	}
	all := want["all"] || want["everything"]
	dflt := len(want) == 0 || want["default"]
	var b strings.Builder
	for _, s := range infoSections {
		if all || want[s.name] || dflt && s.dflt {
			if b.Len() > 0 {
				b.WriteString("\r\n")
			}
			s.section(c, &b)
		}
	}
	c.verbatim(b.String())
}

// runID is the server process's run_id: 40 random hex digits, as Redis's.
var runID = func() string {
	var b [20]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}()

func (c *conn) infoServer(b *strings.Builder) {
	port := c.srv.port()
	up := time.Since(c.srv.started)
	exe, _ := os.Executable()
	fmt.Fprintf(b, "# Server\r\nredis_version:%s\r\nredis_mode:standalone\r\nxstream_server:1\r\nos:%s %s\r\narch_bits:64\r\n"+
		"go_version:%s\r\nprocess_id:%d\r\nprocess_supervised:no\r\nrun_id:%s\r\ntcp_port:%s\r\nserver_time_usec:%d\r\n"+
		"uptime_in_seconds:%d\r\nuptime_in_days:%d\r\nexecutable:%s\r\nconfig_file:\r\n",
		redisVersion, runtime.GOOS, runtime.GOARCH, runtime.Version(), os.Getpid(), runID, port, time.Now().UnixMicro(),
		int64(up.Seconds()), int64(up.Hours()/24), exe)
}

func (c *conn) infoClients(b *strings.Builder) {
	c.srv.mu.Lock()
	n, maxClients := len(c.srv.conns), c.srv.opts.MaxClients
	c.srv.mu.Unlock()
	fmt.Fprintf(b, "# Clients\r\nconnected_clients:%d\r\ncluster_connections:0\r\nmaxclients:%d\r\nblocked_clients:%d\r\ntracking_clients:0\r\n",
		n, maxClients, c.srv.stats.blocked.Load())
}

func (c *conn) infoMemory(b *strings.Builder) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	used := int64(ms.HeapAlloc + ms.StackInuse)
	peak := c.srv.stats.notePeak(used)
	rss := residentBytes()
	if rss == 0 {
		rss = int64(ms.Sys - ms.HeapReleased)
	}
	fmt.Fprintf(b, "# Memory\r\nused_memory:%d\r\nused_memory_human:%s\r\nused_memory_rss:%d\r\nused_memory_rss_human:%s\r\n"+
		"used_memory_peak:%d\r\nused_memory_peak_human:%s\r\nused_memory_lua:0\r\nused_memory_scripts:0\r\nnumber_of_cached_scripts:0\r\n"+
		"number_of_functions:0\r\nnumber_of_libraries:0\r\nmaxmemory:%d\r\nmaxmemory_human:%s\r\nmaxmemory_policy:noeviction\r\n"+
		"mem_allocator:go\r\ngo_heap_objects:%d\r\ngo_gc_cycles:%d\r\n",
		used, humanBytes(used), rss, humanBytes(rss), peak, humanBytes(peak), c.srv.opts.MaxMemory, humanBytes(c.srv.opts.MaxMemory), ms.HeapObjects, ms.NumGC)
}

// residentBytes reads the process's resident set size from
// /proc/self/statm; 0 where there is none.
func residentBytes() int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return int64(pages) * int64(os.Getpagesize())
}

// humanBytes writes n as Redis's bytesToHuman does: "970.09K", "6.38M".
func humanBytes(n int64) string {
	d := float64(n)
	switch {
	case n < 1024:
		return fmt.Sprintf("%dB", n)
	case n < 1<<20:
		return fmt.Sprintf("%.2fK", d/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.2fM", d/(1<<20))
	case n < 1<<40:
		return fmt.Sprintf("%.2fG", d/(1<<30))
	default:
		return fmt.Sprintf("%.2fT", d/(1<<40))
	}
}

func (c *conn) infoStats(b *strings.Builder) {
	fmt.Fprintf(b, "# Stats\r\ntotal_connections_received:%d\r\ntotal_commands_processed:%d\r\ntotal_error_replies:%d\r\n",
		c.srv.nextID.Load(), c.srv.commands.Load(), c.srv.stats.errorReplies.Load())
}

func (c *conn) infoReplication(b *strings.Builder) {
	b.WriteString("# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_failover_state:no-failover\r\n" +
		"master_replid:" + runID + "\r\nmaster_replid2:0000000000000000000000000000000000000000\r\n" +
		"master_repl_offset:0\r\nsecond_repl_offset:-1\r\nrepl_backlog_active:0\r\n")
}

func (c *conn) infoCPU(b *strings.Builder) {
	sys, user := cpuTimes()
	fmt.Fprintf(b, "# CPU\r\nused_cpu_sys:%.6f\r\nused_cpu_user:%.6f\r\nused_cpu_sys_children:0.000000\r\nused_cpu_user_children:0.000000\r\n",
		sys.Seconds(), user.Seconds())
}

func (c *conn) infoKeyspace(b *strings.Builder) {
	b.WriteString("# Keyspace\r\n")
	for i := range c.srv.dbs {
		db := c.srv.db(i)
		if n := db.Len(); n > 0 {
			fmt.Fprintf(b, "db%d:keys=%d,expires=%d,avg_ttl=%d\r\n", i, n, db.Expiring(), c.srv.access(i).avgTTL.Load())
		}
	}
}
