package server

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Statistics of INFO's commandstats and errorstats sections, as Redis
// keeps them: per command (subcommands apart) its calls, their time
// (every call's, see slowlog.go's Timing),
// the calls that replied an error (failed) and the ones refused before
// they ran (rejected: wrong arity, NOAUTH, MISCONF, ...); per error code
// (the first word of an error reply) the number of replies. CONFIG
// RESETSTAT zeroes them.

// cmdStat is one command's counters.
type cmdStat struct {
	calls, nanos, failed, rejected atomic.Int64
	// The calls the metrics' latency histogram samples (one in
	// latencySample of each connection): their durations' sum and
	// histogram (by latencyBuckets, and above them).
	timedNanos atomic.Int64
	latency    [len(latencyBucketsArray) + 1]atomic.Int64
}

// maxErrorCodes bounds the error codes errorstats tracks, as Redis's
// ERRORSTATS_LIMIT: replies with codes beyond them are counted in
// total_error_replies only.
const maxErrorCodes = 128

// stats are a server's counters.
type stats struct {
	cmds []cmdStat // by command.idx

	mu     sync.Mutex
	errors map[string]int64 // by error code

	errorReplies atomic.Int64
	blocked      atomic.Int64 // clients in a blocking command
	peak         atomic.Int64 // the most used memory INFO saw
}

func (s *stats) init() {
	s.cmds = make([]cmdStat, len(commandsInOrder))
	s.errors = map[string]int64{}
}

// reset zeroes the counters (CONFIG RESETSTAT); blocked clients stay.
func (s *stats) reset() {
	for i := range s.cmds {
		st := &s.cmds[i]
		st.calls.Store(0)
		st.nanos.Store(0)
		st.failed.Store(0)
		st.rejected.Store(0)
		st.timedNanos.Store(0)
		for j := range st.latency {
			st.latency[j].Store(0)
		}
	}
	s.mu.Lock()
	clear(s.errors)
	s.mu.Unlock()
	s.errorReplies.Store(0)
}

// countError notes an error reply.
func (s *stats) countError(msg string) {
	s.errorReplies.Add(1)
	code, _, _ := strings.Cut(msg, " ")
	s.mu.Lock()
	if _, ok := s.errors[code]; ok || len(s.errors) < maxErrorCodes {
		s.errors[code]++
	}
	s.mu.Unlock()
}

// ran notes a call of cmd that took d and failed or not.
func (s *stats) ran(cmd *command, d time.Duration, failed bool) {
	st := &s.cmds[cmd.idx]
	st.calls.Add(1)
	st.nanos.Add(int64(d))
	if failed {
		st.failed.Add(1)
	}
}

// rejected notes a call of cmd refused before it ran.
func (s *stats) rejected(cmd *command) { s.cmds[cmd.idx].rejected.Add(1) }

// writeCommandStats writes INFO's commandstats lines, in command order,
// for the commands called or rejected since the last reset.
func (s *stats) writeCommandStats(b *strings.Builder) {
	b.WriteString("# Commandstats\r\n")
	for _, cmd := range commandsInOrder {
		st := &s.cmds[cmd.idx]
		calls, rejected, failed := st.calls.Load(), st.rejected.Load(), st.failed.Load()
		if calls == 0 && rejected == 0 && failed == 0 {
			continue
		}
		nanos := st.nanos.Load()
		perCall := 0.0
		if calls > 0 {
			perCall = float64(nanos) / 1000 / float64(calls)
		}
		fmt.Fprintf(b, "cmdstat_%s:calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d\r\n",
			cmd.name, calls, nanos/1000, perCall, rejected, failed)
	}
}

// writeErrorStats writes INFO's errorstats lines, by error code.
func (s *stats) writeErrorStats(b *strings.Builder) {
	b.WriteString("# Errorstats\r\n")
	s.mu.Lock()
	codes := make([]string, 0, len(s.errors))
	for c := range s.errors {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	for _, c := range codes {
		fmt.Fprintf(b, "errorstat_%s:count=%d\r\n", c, s.errors[c])
	}
	s.mu.Unlock()
}

// notePeak raises the peak of used memory to used and returns it.
func (s *stats) notePeak(used int64) int64 {
	for {
		p := s.peak.Load()
		if used <= p {
			return p
		}
		if s.peak.CompareAndSwap(p, used) {
			return used
		}
	}
}
