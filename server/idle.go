package server

import (
	"sync"
	"sync/atomic"

	"github.com/xstreamgo/xstream"
)

// When each key was last accessed, for OBJECT IDLETIME, as Redis 7.0
// keeps it with its default policy (an LRU one or noeviction).
//
// Redis stamps a key's value with its LRU clock whenever a command looks
// the key up, but for the look-ups that say not to touch (OBJECT, TYPE,
// EXISTS, TTL and its kin, MEMORY USAGE). The LRU clock is the Unix time
// in seconds, kept in 24 bits and refreshed by the server's cron (10
// times a second at the default hz), and OBJECT IDLETIME answers the
// difference between the clock and the stamp, in seconds. Here the clock
// is Server.lru, refreshed by the active expiry cycle's ticker (every
// 100 ms) and at once by SetTime and FastForward, from the server's clock
// (Server.now); each command whose keys touch stamps them with it after
// it ran (and before, for a command that may block), which costs a map
// look-up per key under a read lock, and no clock read. A key with no
// stamp (made by the Go API, or in the DB when the server opened it) was
// last accessed when its DB's table was made.

// lruMax is Redis's LRU_CLOCK_MAX: the LRU clock has 24 bits.
const lruMax = 1<<24 - 1

// noTouch names the commands with keys that do not touch them (Redis's
// LOOKUP_NOTOUCH, or no look-up of the value). RESTORE and COPY stamp
// their keys themselves.
var noTouch = map[string]bool{
	"object|encoding": true, "object|refcount": true, "object|freq": true, "object|idletime": true,
	"type": true, "exists": true, "ttl": true, "pttl": true, "expiretime": true, "pexpiretime": true,
	"memory|usage": true, "del": true, "unlink": true, "restore": true, "copy": true,
}

// parseFirst names the commands that check their arguments before they
// look their keys up, as Redis's do: one rejected on its arguments (a
// syntax error, a bad ID, count or time) does not touch its keys. Each
// says when it reaches the look-up (conn.lookedUp); call stamps the keys
// only then.
var parseFirst = map[string]bool{
	"xadd": true, "xtrim": true, "xrange": true, "xrevrange": true, "xread": true, "xreadgroup": true,
	"xpending": true, "xgroup|create": true, "xgroup|setid": true, "xsetid": true,
	"expire": true, "pexpire": true, "expireat": true, "pexpireat": true,
	"xdelex": true, "xackdel": true,
}

// lookedUp notes that the running command reached its keys' look-up, so
// that call stamps them when it ends (see parseFirst).
func (c *conn) lookedUp() { c.looked = true }

// lruClock returns Redis's LRU clock for the server's time t (Unix
// seconds).
func lruClock(unix int64) int64 { return unix & lruMax }

// tickLRU refreshes the server's LRU clock from its clock.
func (s *Server) tickLRU() { s.lru.Store(lruClock(s.now().Unix())) }

// lruIdle returns the seconds from stamp to clock, as Redis's
// estimateObjectIdleTime computes them on its wrapping clock.
func lruIdle(clock, stamp int64) int64 {
	if clock >= stamp {
		return clock - stamp
	}
	return clock + (lruMax - stamp)
}

// accessTable holds the stamps of one DB's keys. A name keeps its cell
// once made (but for prune), so a key removed and made again under the
// same name by a command gets its cell back, stamped by that command.
type accessTable struct {
	db   *xstream.DB
	born int64 // the LRU clock when it was made: the stamp of the keys without a cell
	mu   sync.RWMutex
	m    map[string]*stampCell
	// avgTTL is the DB's avg_ttl of INFO keyspace (ms), kept by the
	// active expiry cycle (expire_cycle.go) with the table, as the DB's
	// own state that follows it through SWAPDB.
	avgTTL atomic.Int64
}

// stampCell is the stamp of one name. dead is set when prune drops it,
// so that a connection's cache of it (conn.stamp) is not used again.
type stampCell struct {
	at   atomic.Int64
	dead atomic.Bool
}

// stampCache is a connection's last stamped key: a command on the key
// the one before named stamps it without the table's lock and map.
type stampCache struct {
	tab  *accessTable
	key  []byte
	cell *stampCell
}

// accessTables finds the table of a DB. slot[i] is the table of the DB
// last seen at index i, a cache that SWAPDB and a restart make stale;
// all holds every table by DB, guarded by mu.
type accessTables struct {
	slot [numDBs]atomic.Pointer[accessTable]
	mu   sync.Mutex
	all  map[*xstream.DB]*accessTable
}

// of returns the table of db, which is at index i, making it if needed.
// O(1); it takes a.mu only when the slot does not hold db's table.
func (a *accessTables) of(s *Server, i int, db *xstream.DB) *accessTable {
	if t := a.slot[i].Load(); t != nil && t.db == db {
		return t
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.all[db]
	if t == nil {
		if a.all == nil {
			a.all = map[*xstream.DB]*accessTable{}
		}
		// Forget the tables of DBs the server no longer has (a restart
		// opened new ones).
		live := s.dbList()
		for d := range a.all {
			gone := true
			for _, l := range live {
				gone = gone && l != d
			}
			if gone {
				delete(a.all, d)
			}
		}
		t = &accessTable{db: db, born: s.lru.Load(), m: map[string]*stampCell{}}
		a.all[db] = t
	}
	a.slot[i].Store(t)
	return t
}

// touch stamps the key name with clock, if the key exists, and returns
// its cell (nil if none). O(1) for a name already stamped once; a new
// name looks the key up in the DB.
func (t *accessTable) touch(name []byte, clock int64) *stampCell {
	t.mu.RLock()
	cell := t.m[string(name)]
	t.mu.RUnlock()
	if cell != nil {
		if cell.at.Load() != clock {
			cell.at.Store(clock)
		}
		return cell
	}
	if _, ok := t.db.Lookup(string(name)); ok {
		return t.set(string(name), clock)
	}
	return nil
}

// set stamps the key name with stamp, making its cell; every so often
// it first drops the cells of names the DB no longer has, so that the
// table stays within twice the DB's keys (amortized O(1)).
func (t *accessTable) set(name string, stamp int64) *stampCell {
	t.mu.Lock()
	defer t.mu.Unlock()
	cell := t.m[name]
	if cell == nil {
		if len(t.m) >= 2*t.db.Len()+1024 {
			for k, c := range t.m {
				if _, ok := t.db.Lookup(k); !ok {
					c.dead.Store(true)
					delete(t.m, k)
				}
			}
		}
		cell = new(stampCell)
		t.m[name] = cell
	}
	cell.at.Store(stamp)
	return cell
}

// stamp returns the key name's stamp.
func (t *accessTable) stamp(name string) int64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if cell := t.m[name]; cell != nil {
		return cell.at.Load()
	}
	return t.born
}

// access returns the table of DB i.
func (s *Server) access(i int) *accessTable { return s.accessAll.of(s, i, s.db(i)) }

// touchKeys stamps the keys of args that cmd's key specs name, in the
// connection's DB, with the LRU clock. The key of the connection's
// command before costs a comparison of the names and two atomic loads
// (conn.stamp), another one a look-up in the DB's table.
func (c *conn) touchKeys(cmd *command, args [][]byte) {
	clock := c.srv.lru.Load()
	if cmd.touchOne {
		c.touchKey(args[1], clock)
		return
	}
	eachKey(cmd.spec.specs, args, func(k []byte) { c.touchKey(k, clock) })
}

// touchKey stamps the key k of the connection's DB with clock.
func (c *conn) touchKey(k []byte, clock int64) {
	st := &c.stamp
	if st.cell != nil && st.tab.db == c.srv.db(c.db) && string(st.key) == string(k) && !st.cell.dead.Load() {
		if st.cell.at.Load() != clock {
			st.cell.at.Store(clock)
		}
		return
	}
	t := c.srv.access(c.db)
	if cell := t.touch(k, clock); cell != nil {
		st.tab, st.key, st.cell = t, append(st.key[:0], k...), cell
	}
}

// stampKey stamps the key name of DB i with the LRU clock less idle
// seconds, as RESTORE ... IDLETIME (idle 0 for a key just made) and
// Redis's objectSetLRUOrLFU do: a time before the clock's start is put
// half its range back.
func (s *Server) stampKey(i int, name string, idle int64) {
	clock := s.lru.Load()
	at := clock - idle
	if at < 0 {
		at = (clock + lruMax/2) % lruMax
	}
	s.access(i).set(name, at)
}

// idleSpecs are what COMMAND INFO and COMMAND DOCS say of OBJECT
// IDLETIME and TOUCH, as Redis 7.0.15 says it.
var idleSpecs = map[string]*commandSpec{
	"object|idletime": {
		summary:    "Get the time since a Redis object was last accessed",
		since:      "2.2.3",
		group:      "generic",
		complexity: "O(1)",
		flags:      "readonly",
		keys:       [3]int{2, 2, 1},
		acl:        "@keyspace @read @slow",
		tips:       "nondeterministic_output",
		specs:      []keySpec{{flags: "RO", index: 2}},
	},
	"touch": {
		summary:    "Alters the last access time of a key(s). Returns the number of existing keys specified.",
		since:      "3.2.1",
		group:      "generic",
		complexity: "O(N) where N is the number of keys that will be touched.",
		flags:      "readonly fast",
		keys:       [3]int{1, -1, 1},
		acl:        "@keyspace @read @fast",
		tips:       "request_policy:multi_shard response_policy:agg_sum",
		specs:      []keySpec{{flags: "RO", index: 1, lastkey: -1}},
	},
}

func init() {
	keyArg := []docNode{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}}
	for name, spec := range idleSpecs {
		commandSpecs[name] = spec
	}
	commandDocsData["object|idletime"] = docSpec{args: [][]docNode{keyArg}}
	commandDocsData["touch"] = docSpec{args: [][]docNode{append(keyArg[:3:3], docNode{key: "flags", flags: []string{"multiple"}})}}
	register("object|idletime", 3, func(c *conn, args [][]byte) {
		if _, ok := c.lookupStream(args[2]); !ok {
			c.null()
			return
		}
		c.int(lruIdle(c.srv.lru.Load(), c.srv.access(c.db).stamp(string(args[2]))))
	})
}
