package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/xstreamgo/xstream"
)

// SWAPDB, and where a durable server keeps each DB.
//
// SWAPDB swaps two entries of the server's table of DBs: every client
// then sees the other DB's keys under the index it selected, as in Redis.
// A durable server keeps DB i in Dir/dirOf[i]: the identity at first, and
// after a SWAPDB what the file Dir/dbmap says (written, synced and renamed
// into place before the swap takes effect), so a restart opens each DB
// from the directory that holds its keys.
//
// An XREAD blocked when the swap happens waits again, as in Redis 7.0
// (whose blocked clients stay with the DB index, and which looks at
// their keys at the swap): on the keys of the DB now at the index it
// selected, for entries after the IDs it waited for (a "$" as it stood),
// served at once if they are there. A blocked XREADGROUP too, by its
// group in the DB swapped in: served at once by entries past the group's
// last delivered there, else waiting there; when a key is not in that DB
// it ends with UNBLOCKED, when the key has not the group with NOGROUP
// (groupsMoved).

const dbMapFile = "dbmap"

func init() {
	register("swapdb", 3, func(c *conn, args [][]byte) {
		var idx [2]int
		for k, a := range args[1:] {
			n, ok := parseLL(a)
			if !ok {
				c.err("ERR invalid " + []string{"first", "second"}[k] + " DB index")
				return
			}
			if n < 0 || n >= numDBs {
				c.err("ERR DB index is out of range")
				return
			}
			idx[k] = int(n)
		}
		if err := c.srv.swapDBs(idx[0], idx[1]); err != nil {
			c.err("ERR " + err.Error())
			return
		}
		bits := uint16(1)<<idx[0] | uint16(1)<<idx[1]
		c.noteWrites(bits)
		c.ok()
	})
}

// dbList returns the DBs, in index order (nil ones of a closed durable
// server included). O(1), safe for concurrent use.
func (s *Server) dbList() [numDBs]*xstream.DB {
	var out [numDBs]*xstream.DB
	for i := range s.dbs {
		out[i] = s.db(i)
	}
	return out
}

// swapDBs swaps DBs a and b; a durable server first records the swap in
// Dir/dbmap, and changes nothing when that fails. It takes s.mu.
func (s *Server) swapDBs(a, b int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a == b {
		return nil
	}
	if s.durable {
		next := s.dirOf
		next[a], next[b] = next[b], next[a]
		if err := writeDBMap(s.opts.Dir, next); err != nil {
			return fmt.Errorf("SWAPDB: recording the swap: %w", err)
		}
		s.dirOf = next
	}
	x, y := s.dbs[a].Load(), s.dbs[b].Load()
	s.dbs[a].Store(y)
	s.dbs[b].Store(x)
	s.swaps.Add(1)
	// The XREADs and XREADGROUPs blocked in either DB wait again in the
	// DB now at their index (read_cmds.go).
	for c := range s.conns {
		c.swapWake(a, b)
	}
	return nil
}

// loadDBMap sets s.dirOf from Dir/dbmap, or to the identity when there is
// none.
func (s *Server) loadDBMap() error {
	for i := range s.dirOf {
		s.dirOf[i] = i
	}
	path := filepath.Join(s.opts.Dir, dbMapFile)
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("xstream server: %w", err)
	}
	fields := strings.Fields(string(b))
	seen := [numDBs]bool{}
	if len(fields) != numDBs {
		return fmt.Errorf("xstream server: %s: %d entries, want %d", path, len(fields), numDBs)
	}
	for i, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 || n >= numDBs || seen[n] {
			return fmt.Errorf("xstream server: %s: bad entry %d: %q", path, i, f)
		}
		seen[n] = true
		s.dirOf[i] = n
	}
	return nil
}

// writeDBMap writes Dir/dbmap atomically: a temporary file, synced, then
// renamed over the old one, and the directory synced.
func writeDBMap(dir string, dirOf [numDBs]int) error {
	var b strings.Builder
	for i, d := range dirOf {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(d))
	}
	b.WriteByte('\n')
	tmp := filepath.Join(dir, dbMapFile+".tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err = f.WriteString(b.String()); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, dbMapFile))
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
