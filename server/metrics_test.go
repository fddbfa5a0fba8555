package server

import (
	"io"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// scrape returns the metrics srv serves, as text.
func scrape(t *testing.T, srv *Server) string {
	t.Helper()
	h := httptest.NewServer(srv.MetricsHandler())
	defer h.Close()
	resp, err := h.Client().Get(h.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The metrics are INFO's counters: calls, failed and rejected calls and
// error codes as commandstats and errorstats count them, clients, and the
// streams' length, pending entries and groups' lag.
func TestMetrics(t *testing.T) {
	srv := RunT(t)
	c := newClient(t, srv.Addr())
	for _, args := range [][]string{
		{"XADD", "m", "1-1", "a", "1"},
		{"XADD", "m", "2-1", "a", "2"},
		{"XADD", "m", "3-1", "a", "3"},
		{"XADD", "m", "1-1", "a", "1"}, // failed
		{"XADD", "m"},                  // rejected
		{"XGROUP", "CREATE", "m", "g", "0"},
		{"XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "m", ">"},
		{"XADD", "other", "1-1", "a", "1"},
	} {
		c.send(args...)
	}
	text := scrape(t, srv)
	for _, want := range []string{
		`xstream_commands_total{command="xadd"} 5`,
		`xstream_command_errors_total{command="xadd",kind="failed"} 1`,
		`xstream_command_errors_total{command="xadd",kind="rejected"} 1`,
		`xstream_commands_total{command="xgroup|create"} 1`,
		`xstream_error_replies_total{code="ERR"} 2`,
		`xstream_connected_clients 1`,
		`xstream_blocked_clients 0`,
		`xstream_stream_length{db="0",stream="m"} 3`,
		`xstream_stream_length{db="0",stream="other"} 1`,
		`xstream_stream_pending{db="0",stream="m"} 1`,
		`xstream_group_lag{db="0",group="g",stream="m"} 2`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("no %q in the metrics:\n%s", want, grep(text, "xstream_"))
		}
	}
	// The latency histograms count the sampled calls: the connection's
	// first, and one in 16 after it.
	sum := func(re string) int {
		n := 0
		for _, m := range regexp.MustCompile(re).FindAllStringSubmatch(text, -1) {
			v, _ := strconv.Atoi(m[1])
			n += v
		}
		return n
	}
	calls, timed := sum(`(?m)^xstream_commands_total\{[^}]*\} (\d+)$`), sum(`(?m)^xstream_command_duration_seconds_count\{[^}]*\} (\d+)$`)
	if calls < 9 || timed != (calls+15)/16 {
		t.Errorf("%d calls, %d timed:\n%s", calls, timed, grep(text, "duration_seconds_count"))
	}
	for _, family := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		if !strings.Contains(text, family) {
			t.Errorf("no %s", family)
		}
	}
}

// Only the 20 longest streams are described.
func TestMetricsLongestStreams(t *testing.T) {
	srv := RunT(t)
	db := srv.DB(0)
	for i := range 25 {
		name := "s" + itoa(i)
		for j := 0; j <= i; j++ {
			c := newClient(t, srv.Addr())
			c.send("XADD", name, "*", "n", itoa(j))
			c.rdb.Close()
		}
	}
	if db.Len() != 25 {
		t.Fatalf("%d streams", db.Len())
	}
	text := scrape(t, srv)
	if n := strings.Count(text, "xstream_stream_length{"); n != 20 {
		t.Errorf("%d streams described, want 20", n)
	}
	if !strings.Contains(text, `xstream_stream_length{db="0",stream="s24"} 25`+"\n") || strings.Contains(text, `stream="s4"}`) {
		t.Errorf("not the 20 longest:\n%s", grep(text, "stream_length"))
	}
}

// grep returns the lines of text that contain s.
func grep(text, s string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// Collector registers in a program's own registry, beside the Go
// collector, and two servers' collectors in one registry apart by a
// label.
func TestMetricsCollector(t *testing.T) {
	a, b := RunT(t), RunT(t)
	expect(t, newClient(t, a.Addr()), `$"1-1"`, "XADD", "s", "1-1", "f", "v")
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector())
	prometheus.WrapRegistererWith(prometheus.Labels{"server": "a"}, reg).MustRegister(a.Collector())
	prometheus.WrapRegistererWith(prometheus.Labels{"server": "b"}, reg).MustRegister(b.Collector())
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			key := f.GetName()
			for _, l := range m.GetLabel() {
				key += "," + l.GetName() + "=" + l.GetValue()
			}
			got[key] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	for key, want := range map[string]float64{
		"xstream_commands_total,command=xadd,server=a": 1,
		"xstream_connected_clients,server=a":           1,
		"xstream_connected_clients,server=b":           0,
		"xstream_stream_length,db=0,server=a,stream=s": 1,
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("%s = %v (found %v), want %v", key, v, ok, want)
		}
	}
	if _, ok := got["go_goroutines"]; !ok {
		t.Errorf("the registry lost the program's own Go collector")
	}
}
