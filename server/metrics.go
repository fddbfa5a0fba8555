package server

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Prometheus metrics. They are read at scrape time from the counters INFO
// reports (commandstats, errorstats, clients); the commands pay only for
// the latency histogram, one observation in each timed call (one in 16).
// Per-stream figures cover the largest streams only.

// metricsStreams is how many streams (the longest, over every database)
// the per-stream metrics describe.
const metricsStreams = 20

// latencyBuckets are the upper bounds, in seconds, of the command latency
// histogram: 10 µs to about 1 s.
var latencyBuckets = latencyBucketsArray[:]

var latencyBucketsArray = [...]float64{1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1}

// MetricsHandler returns an http.Handler serving the server's metrics in
// Prometheus's format (mount it at /metrics; xstream-server does with
// -metrics-addr):
//
//   - xstream_commands_total{command}: calls, as INFO commandstats's calls;
//   - xstream_command_errors_total{command,kind}: kind "failed" (replied
//     an error) or "rejected" (refused before running);
//   - xstream_command_duration_seconds{command}: a histogram of the timed
//     calls (one in 16 of each connection, see INFO commandstats);
//   - xstream_error_replies_total{code}: error replies by code, as INFO
//     errorstats;
//   - xstream_connected_clients, xstream_blocked_clients,
//     xstream_commands_processed_total, xstream_connections_received_total;
//   - xstream_stream_length{db,stream}, xstream_stream_pending{db,stream}
//     and xstream_group_lag{db,stream,group} (entries not yet delivered;
//     absent while unknown) for the 20 longest streams;
//   - the Go runtime's and the process's metrics (go_*, process_*).
//
// Each handler has a registry of its own; a program with a registry of
// its own registers Collector in it instead.
func (s *Server) MetricsHandler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), s.Collector())
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

// Collector returns a Prometheus collector of the server's metrics, the
// xstream_* ones that MetricsHandler serves, for a program that embeds
// the server and serves its own registry:
//
//	prometheus.MustRegister(srv.Collector())
//
// It reads the server's counters at each scrape. The Go runtime's and
// the process's metrics are the program's to register. The collectors of
// two servers in one registry need a label to tell them apart:
//
//	prometheus.WrapRegistererWith(prometheus.Labels{"server": "orders"}, reg).MustRegister(srv.Collector())
func (s *Server) Collector() prometheus.Collector { return metricsCollector{s} }

var (
	descCommands    = prometheus.NewDesc("xstream_commands_total", "Calls of a command.", []string{"command"}, nil)
	descCmdErrors   = prometheus.NewDesc("xstream_command_errors_total", "Calls of a command that failed (replied an error) or were rejected (refused before running).", []string{"command", "kind"}, nil)
	descCmdLatency  = prometheus.NewDesc("xstream_command_duration_seconds", "Time of the sampled calls of a command (one in 16 of each connection).", []string{"command"}, nil)
	descErrors      = prometheus.NewDesc("xstream_error_replies_total", "Error replies by error code.", []string{"code"}, nil)
	descConnected   = prometheus.NewDesc("xstream_connected_clients", "Clients connected.", nil, nil)
	descBlocked     = prometheus.NewDesc("xstream_blocked_clients", "Clients waiting in a blocking command.", nil, nil)
	descProcessed   = prometheus.NewDesc("xstream_commands_processed_total", "Commands processed.", nil, nil)
	descConnections = prometheus.NewDesc("xstream_connections_received_total", "Connections accepted.", nil, nil)
	descLength      = prometheus.NewDesc("xstream_stream_length", "Entries in a stream (the longest streams only).", []string{"db", "stream"}, nil)
	descPending     = prometheus.NewDesc("xstream_stream_pending", "Entries delivered to a stream's groups and not acknowledged.", []string{"db", "stream"}, nil)
	descLag         = prometheus.NewDesc("xstream_group_lag", "Entries of the stream not yet delivered to the group.", []string{"db", "stream", "group"}, nil)
)

// metricsCollector reads a server's counters at each scrape.
type metricsCollector struct{ s *Server }

func (m metricsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descCommands, descCmdErrors, descCmdLatency, descErrors, descConnected,
		descBlocked, descProcessed, descConnections, descLength, descPending, descLag} {
		ch <- d
	}
}

func (m metricsCollector) Collect(ch chan<- prometheus.Metric) {
	s := m.s
	st := &s.stats
	for _, cmd := range commandsInOrder {
		c := &st.cmds[cmd.idx]
		calls, failed, rejected := c.calls.Load(), c.failed.Load(), c.rejected.Load()
		if calls == 0 && failed == 0 && rejected == 0 {
			continue
		}
		ch <- prometheus.MustNewConstMetric(descCommands, prometheus.CounterValue, float64(calls), cmd.name)
		ch <- prometheus.MustNewConstMetric(descCmdErrors, prometheus.CounterValue, float64(failed), cmd.name, "failed")
		ch <- prometheus.MustNewConstMetric(descCmdErrors, prometheus.CounterValue, float64(rejected), cmd.name, "rejected")
		buckets := make(map[float64]uint64, len(latencyBuckets))
		var n uint64
		for i, ub := range latencyBuckets {
			n += uint64(c.latency[i].Load())
			buckets[ub] = n
		}
		n += uint64(c.latency[len(latencyBuckets)].Load())
		ch <- prometheus.MustNewConstHistogram(descCmdLatency, n, float64(c.timedNanos.Load())/1e9, buckets, cmd.name)
	}
	st.mu.Lock()
	for code, n := range st.errors {
		ch <- prometheus.MustNewConstMetric(descErrors, prometheus.CounterValue, float64(n), code)
	}
	st.mu.Unlock()
	s.mu.Lock()
	connected := len(s.conns)
	s.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(descConnected, prometheus.GaugeValue, float64(connected))
	ch <- prometheus.MustNewConstMetric(descBlocked, prometheus.GaugeValue, float64(st.blocked.Load()))
	ch <- prometheus.MustNewConstMetric(descProcessed, prometheus.CounterValue, float64(s.commands.Load()))
	ch <- prometheus.MustNewConstMetric(descConnections, prometheus.CounterValue, float64(s.nextID.Load()))
	m.collectStreams(ch)
}

// collectStreams reports the longest streams of every database, their
// pending entries and their groups' lag.
func (m metricsCollector) collectStreams(ch chan<- prometheus.Metric) {
	type named struct {
		db   int
		name string
		n    int64
	}
	var top []named
	for i := range numDBs {
		db := m.s.DB(i)
		if db == nil {
			continue
		}
		for _, name := range db.Names("") {
			if st, ok := db.Lookup(name); ok {
				top = append(top, named{i, name, st.Len()})
			}
		}
	}
	slices.SortFunc(top, func(a, b named) int {
		return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.db, b.db), strings.Compare(a.name, b.name))
	})
	for _, t := range top[:min(len(top), metricsStreams)] {
		st, ok := m.s.DB(t.db).Lookup(t.name)
		if !ok {
			continue // removed meanwhile
		}
		db := strconv.Itoa(t.db)
		ch <- prometheus.MustNewConstMetric(descLength, prometheus.GaugeValue, float64(st.Len()), db, t.name)
		var pending int64
		for _, g := range st.Groups() {
			pending += g.Pending
			if g.LagKnown {
				ch <- prometheus.MustNewConstMetric(descLag, prometheus.GaugeValue, float64(g.Lag), db, t.name, g.Name)
			}
		}
		ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(pending), db, t.name)
	}
}

// observeLatency adds a sampled call's duration d to cmd's histogram.
func (s *stats) observeLatency(cmd *command, d time.Duration) {
	c := &s.cmds[cmd.idx]
	sec := d.Seconds()
	i, _ := slices.BinarySearch(latencyBuckets, sec)
	c.latency[i].Add(1)
	c.timedNanos.Add(int64(d))
}
