package server

import (
	"errors"
	"fmt"
	"math"
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

// ParseMemory parses a memory size as Redis's memtoull does (for
// maxmemory, CONFIG SET stream-node-max-bytes, client-output-buffer-limit,
// ...): decimal digits, then optionally a unit, in any case: b (1), k
// (1,000), kb (1,024), m (10^6), mb (2^20), g (10^9) or gb (2^30), as in
// "100mb". No sign, space, point or other unit. Unlike memtoull it refuses
// a size without digits ("" or "kb", which Redis reads as 0) and one past
// math.MaxInt64 bytes (Redis's maxmemory goes to 2^64-1). Its error wraps
// ErrBadMemory and quotes s.
func ParseMemory(s string) (int64, error) {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	mul := int64(0)
	switch strings.ToLower(s[i:]) {
	case "", "b":
		mul = 1
	case "k":
		mul = 1000
	case "kb":
		mul = 1 << 10
	case "m":
		mul = 1000 * 1000
	case "mb":
		mul = 1 << 20
	case "g":
		mul = 1000 * 1000 * 1000
	case "gb":
		mul = 1 << 30
	}
	n, err := strconv.ParseUint(s[:i], 10, 63)
	if mul == 0 || err != nil || n > uint64(math.MaxInt64/mul) {
		return 0, fmt.Errorf("%w: %q (want bytes, or a number with k, kb, m, mb, g or gb)", ErrBadMemory, s)
	}
	return int64(n) * mul, nil
}
