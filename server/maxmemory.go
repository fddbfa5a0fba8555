package server

import (
	"errors"
	"fmt"
	"runtime/metrics"
	"strconv"
	"strings"
)

// Options.MaxMemory is Redis's maxmemory under the noeviction policy:
// once the memory in use passes it, the commands that may add data (those
// Redis flags denyoom: XADD, XGROUP CREATE, XGROUP CREATECONSUMER,
// XSETID), any command queued in MULTI but EXEC and DISCARD, and an EXEC
// of such commands get Redis's OOM error; the others (reads, XACK, XDEL,
// XTRIM, DEL, ...) go on, so that a client can free memory. Start also
// sets the Go runtime's memory limit to it (debug.SetMemoryLimit), so the
// collector works to keep the process under it; Shutdown puts the limit
// back. The limit is the process's: with several servers in one process,
// the last started sets it.

// errOOM is Redis's reply to a command refused under maxmemory.
const errOOM = "OOM command not allowed when used memory > 'maxmemory'."

// heapObjects is the runtime metric taken as the memory in use: the heap
// memory of allocated objects (live, or dead and not yet swept), as
// Redis's used_memory counts what its allocator handed out.
const heapObjects = "/memory/classes/heap/objects:bytes"

// heapInUseBytes reads heapObjects. It does not stop the world.
func heapInUseBytes() uint64 {
	s := []metrics.Sample{{Name: heapObjects}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// refuseOOM answers Redis's OOM error, and reports true, for a command
// refused because the memory in use passed MaxMemory (see above).
func (c *conn) refuseOOM(cmd *command) bool {
	reject := cmd.denyOOM || cmd.name == "exec" && c.queuedDenyOOM
	if c.multi {
		switch cmd.name {
		case "exec", "discard", "quit":
		default:
			reject = true
		}
	}
	if !reject || c.srv.usedMemory() <= uint64(c.srv.opts.MaxMemory) {
		return false
	}
	if cmd.name == "exec" {
		c.resetMulti()
		c.err("EXECABORT Transaction discarded because of: " + errOOM)
		return true
	}
	c.err(errOOM)
	if c.multi {
		c.dirty = true
	}
	return true
}

// ErrBadMemory is the error of ParseMemory.
var ErrBadMemory = errors.New("xstream server: bad memory size")

// ParseMemory parses a memory size as Redis's configuration does: a
// number of bytes, or one with a unit: k (1,000), kb (1,024), m (10^6),
// mb (2^20), g (10^9), gb (2^30), in any case ("100mb"). Its error wraps
// ErrBadMemory and quotes s.
func ParseMemory(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mul := int64(1)
	for _, u := range []struct {
		suffix string
		mul    int64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"b", 1}} {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mul = rest, u.mul
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mul {
		return 0, fmt.Errorf("%w: %q (want bytes, or a number with k, kb, m, mb, g or gb)", ErrBadMemory, s)
	}
	return n * mul, nil
}
