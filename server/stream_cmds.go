package server

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/redcon"
	"github.com/xstreamgo/xstream"
)

func init() {
	register("xadd", -5, xadd)
	register("xtrim", -4, xtrim)
	register("xrange", -4, func(c *conn, args [][]byte) { xrange(c, args, false) })
	register("xrevrange", -4, func(c *conn, args [][]byte) { xrange(c, args, true) })
	register("xlen", 2, xlen)
	register("xdel", -3, xdel)
	register("xdelex", -5, xdelex)
	register("xsetid", -3, xsetid)
}

// addTrimArgs are the parsed options of XADD and XTRIM.
type addTrimArgs struct {
	trim     xstream.TrimArgs
	noMk     bool
	id       parsedID
	idGiven  bool
	fieldPos int
	idmp     xstream.Idempotency // IDMP or IDMPAUTO (idmp_cmds.go)
}

// parseAddTrim parses the options of XADD and XTRIM as Redis's
// streamParseAddOrTrimArgsOrReply does (Redis 8.2+ for the policies: a
// second policy word is read as XADD's ID, or is a syntax error in XTRIM).
func parseAddTrim(args [][]byte, xadd bool) (a addTrimArgs, err error) {
	limitGiven, policyGiven := false, false
	i := 2
loop:
	for ; i < len(args); i++ {
		more := len(args) - 1 - i
		opt := args[i]
		switch {
		case xadd && string(opt) == "*":
			break loop
		case (is(opt, "maxlen") || is(opt, "minid")) && more > 0:
			if i, err = a.parseStrategy(args, i); err != nil {
				return a, err
			}
		case is(opt, "limit") && more > 0:
			n, err := intArg(args[i+1], "")
			if err != nil {
				return a, err
			}
			if n < 0 {
				return a, replyError("ERR The LIMIT argument must be >= 0.")
			}
			a.trim.Limit, limitGiven = n, true
			i++
		case xadd && is(opt, "nomkstream"):
			a.noMk = true
		case xadd && is(opt, "idmpauto") && more > 0, xadd && is(opt, "idmp") && more > 1:
			if i, err = a.parseIdmp(args, i); err != nil {
				return a, err
			}
		case !policyGiven && is(opt, "keepref"):
			a.trim.Policy, policyGiven = xstream.KeepRef, true
		case !policyGiven && is(opt, "delref"):
			a.trim.Policy, policyGiven = xstream.DelRef, true
		case !policyGiven && is(opt, "acked"):
			a.trim.Policy, policyGiven = xstream.Acked, true
		case xadd:
			p, ok := parseID(string(opt), 0, true, true)
			if !ok {
				return a, replyError(errInvalidID)
			}
			if a.idmp.Producer != "" {
				return a, replyError(errIdmpWithID)
			}
			a.id, a.idGiven = p, true
			break loop
		default:
			return a, replyError(errSyntax)
		}
	}
	a.fieldPos = i + 1
	return a, a.check(xadd, limitGiven)
}

// parseStrategy parses MAXLEN or MINID at args[i], with its optional "~"
// or "=", and returns the index of its last argument.
func (a *addTrimArgs) parseStrategy(args [][]byte, i int) (int, error) {
	opt, more := args[i], len(args)-1-i
	if a.trim.Strategy != xstream.TrimNone {
		return i, replyError("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
	}
	a.trim.Approx = false
	if more >= 2 && string(args[i+1]) == "~" {
		a.trim.Approx = true
		i++
	} else if more >= 2 && string(args[i+1]) == "=" {
		i++
	}
	if is(opt, "maxlen") {
		n, err := intArg(args[i+1], "")
		if err != nil {
			return i, err
		}
		if n < 0 {
			return i, replyError("ERR The MAXLEN argument must be >= 0.")
		}
		a.trim.Strategy, a.trim.MaxLen = xstream.TrimMaxLen, n
	} else {
		id, ok := parseStrictID(args[i+1])
		if !ok {
			return i, replyError(errInvalidID)
		}
		a.trim.Strategy, a.trim.MinID = xstream.TrimMinID, id.String()
	}
	return i + 1, nil
}

// check applies the rules between options once all are parsed, and sets
// the default LIMIT of an approximate trim.
func (a *addTrimArgs) check(xadd, limitGiven bool) error {
	if a.trim.Limit != 0 && a.trim.Strategy == xstream.TrimNone {
		return replyError("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
	}
	if !xadd && a.trim.Strategy == xstream.TrimNone {
		return replyError("ERR syntax error, XTRIM must be called with a trimming strategy")
	}
	if limitGiven {
		if !a.trim.Approx {
			return replyError("ERR syntax error, LIMIT cannot be used without the special ~ option")
		}
	} else if a.trim.Approx {
		a.trim.Limit = -1 // the default, which the command sets (approxTrimLimit)
	}
	return nil
}

// approxTrimLimit is the LIMIT of a "~" trim that gives none, as Redis
// sets it: 100 nodes of stream-node-max-entries (CONFIG SET), 10000 when
// that is 0 (no entry bound), at most 1000000. O(1); takes s.mu briefly.
func approxTrimLimit(s *Server) int64 {
	_, entries, _ := s.settings()
	limit := 100 * entries
	if limit <= 0 {
		return 10000
	}
	return min(limit, 1000000)
}

// parseXadd parses XADD's arguments into the core's AddArgs; the fields
// start at the returned index.
func parseXadd(args [][]byte) (xstream.AddArgs, int, error) {
	a, err := parseAddTrim(args, true)
	if err != nil {
		return xstream.AddArgs{}, 0, err
	}
	n := len(args) - a.fieldPos
	if n < 2 || n%2 == 1 {
		return xstream.AddArgs{}, 0, replyError("ERR wrong number of arguments for 'xadd' command")
	}
	if a.idGiven && a.id.seqGiven && a.id.id.IsZero() {
		return xstream.AddArgs{}, 0, replyError("ERR The ID specified in XADD must be greater than 0-0")
	}
	add := xstream.AddArgs{ID: "*", NoMkStream: a.noMk, Idempotency: a.idmp}
	if a.idGiven {
		if a.id.seqGiven {
			add.ID = a.id.id.String()
		} else {
			add.ID = strconv.FormatUint(a.id.id.Ms, 10) + "-*"
		}
	}
	// A trim that removes nothing has the zero TrimArgs but a policy.
	if a.trim.Strategy != xstream.TrimNone {
		add.Trim = a.trim
	}
	return add, a.fieldPos, nil
}

func xadd(c *conn, args [][]byte) {
	add, fieldPos, err := parseXadd(args)
	if err != nil {
		c.fail(err)
		return
	}
	if add.Trim.Limit < 0 {
		add.Trim.Limit = approxTrimLimit(c.srv)
	}
	c.lookedUp()
	id, err := c.mustDB().Add(string(args[1]), add, c.fieldArgs(args[fieldPos:])...)
	clear(c.fields)
	if cap(c.fields) > maxKeptArgs {
		c.fields = nil // do not keep the slice of one huge request
	}
	switch {
	case err == nil:
		c.id(id)
	case errors.Is(err, xstream.ErrNoStream):
		c.null()
	case errors.Is(err, xstream.ErrIDTooSmall):
		c.err("ERR The ID specified in XADD is equal or smaller than the target stream top item")
	default:
		c.fail(err)
	}
}

// fieldArgs returns the field-value pairs of args as Fields, in a slice of
// the connection's that the next call reuses (Add keeps no Field slice).
// The strings share one allocation, so an XADD of any number of fields
// costs one.
func (c *conn) fieldArgs(args [][]byte) []xstream.Field {
	size := 0
	for _, a := range args {
		size += len(a)
	}
	var sb strings.Builder // its String does not copy
	sb.Grow(size)
	for _, a := range args {
		sb.Write(a)
	}
	all := sb.String()
	if n := len(args) / 2; n > cap(c.fields) {
		c.fields = make([]xstream.Field, 0, n)
	}
	c.fields = c.fields[:0]
	for i := 0; i+1 < len(args); i += 2 {
		n, v := len(args[i]), len(args[i+1])
		c.fields = append(c.fields, xstream.Field{Name: all[:n], Value: all[n : n+v]})
		all = all[n+v:]
	}
	return c.fields
}

func xtrim(c *conn, args [][]byte) {
	a, err := parseAddTrim(args, false)
	if err != nil {
		c.fail(err)
		return
	}
	if a.trim.Limit < 0 {
		a.trim.Limit = approxTrimLimit(c.srv)
	}
	c.lookedUp()
	s, ok := c.lookupStream(args[1])
	if !ok {
		c.int(0)
		return
	}
	n, err := s.Trim(a.trim)
	if err != nil {
		c.fail(err)
		return
	}
	c.int(n)
}

func xrange(c *conn, args [][]byte, rev bool) {
	startArg, endArg := args[2], args[3]
	if rev {
		startArg, endArg = endArg, startArg
	}
	lo, hi, ok := c.rangeBounds(startArg, endArg)
	if !ok {
		return
	}
	count := int64(-1)
	for j := 4; j < len(args); j++ {
		if is(args[j], "count") && j+1 < len(args) {
			if count, ok = c.intArg(args[j+1], ""); !ok {
				return
			}
			count = max(count, 0)
			j++
		} else {
			c.err(errSyntax)
			return
		}
	}
	c.lookedUp()
	s, found := c.lookupStream(args[1])
	if !found {
		c.array(0)
		return
	}
	if count == 0 {
		c.nullArray()
		return
	}
	if count < 0 || count > math.MaxInt32 {
		count = 0 // no limit
	}
	c.rangeReply(s, lo, hi, int(count), rev)
}

// rangePage is how many entries XRANGE and XREVRANGE read from the stream
// at a time: the batch of Stream.ScanNoCopy.
const rangePage = 1024

// rangeReply writes the entries of s from lo to hi (from hi down to lo
// when rev), at most count of them unless count is 0. It reads them a
// page at a time and writes each page before it reads the next, so a
// reply over the output limit stops after one page over it instead of
// materializing the whole range first. A reply of one page (up to
// rangePage entries) is read in one call, atomically; a longer one is
// read page by page, so writes other clients make meanwhile may show in
// its later pages.
func (c *conn) rangeReply(s *xstream.Stream, lo, hi xstream.ID, count int, rev bool) {
	start := len(c.out)
	var big pieces // a reply past bigReply, until its length is known
	n := 0
	// ScanNoCopy decodes the entries into a buffer it reuses, so a long
	// range costs the reply's bytes and no copy of every entry besides.
	seq, err := s.ScanNoCopy(lo.String(), hi.String(), count, rev)
	if err != nil { // the bounds were checked: not expected
		c.fail(err)
		return
	}
	c.headerLast = true
	defer func() { c.headerLast = false }()
	for id, fields := range seq {
		c.entry(xstream.Entry{ID: id, Fields: fields})
		n++
		if c.replyFull() {
			// run replaces the reply with an error.
			big.release(c)
			c.out, c.replyOver = c.out[:start], true
			return
		}
		start = big.cut(c, start)
	}
	if c.scanCut() {
		big.release(c)
		c.out = c.out[:start]
		c.err(misconf(c.srv.logErr(c.db)))
		return
	}
	// The array's length is known only now: put it in front.
	c.scratch = redcon.AppendArray(c.scratch[:0], n)
	if big.parts != nil {
		big.send(c, c.scratch)
		return
	}
	c.out = slices.Insert(c.out, start, c.scratch...)
}

// scanCut reports whether a scan of the connection's DB may have ended
// early: under SyncAlways, Stream.ScanNoCopy stops before a batch it
// cannot make durable, once the log fails.
func (c *conn) scanCut() bool {
	return c.srv.deferSync && c.srv.logErr(c.db) != nil
}

func xlen(c *conn, args [][]byte) {
	s, ok := c.lookupStream(args[1])
	if !ok {
		c.int(0)
		return
	}
	c.int(s.Len())
}

// strictIDs parses entry IDs, writing Redis's error on the first bad one.
func (c *conn) strictIDs(args [][]byte) ([]xstream.ID, bool) {
	out := make([]xstream.ID, len(args))
	for i, a := range args {
		id, ok := parseStrictID(a)
		if !ok {
			c.err(errInvalidID)
			return nil, false
		}
		out[i] = id
	}
	return out, true
}

func xdel(c *conn, args [][]byte) {
	s, ok := c.lookupStream(args[1])
	if !ok {
		c.int(0)
		return
	}
	ids, valid := c.strictIDs(args[2:])
	if !valid {
		return
	}
	n, err := s.DeleteIDs(ids...)
	if err != nil {
		c.fail(err)
		return
	}
	c.int(n)
}

// parseAckDelArgs parses what XDELEX and XACKDEL take after their key
// (and group), from args[j:], as Redis's streamParseAckDelArgsOrReply
// does: at most one of KEEPREF, DELREF and ACKED, and "IDS numids id ...",
// in any order. IDs past numids are read as options. The IDs themselves
// are checked later, and only if the key (and group) exist.
func (c *conn) parseAckDelArgs(args [][]byte, j int) (policy xstream.DeletePolicy, ids [][]byte, ok bool) {
	policyGiven := false
	for j < len(args) {
		opt := args[j]
		switch {
		case !policyGiven && is(opt, "keepref"):
			policy, policyGiven = xstream.KeepRef, true
			j++
		case !policyGiven && is(opt, "delref"):
			policy, policyGiven = xstream.DelRef, true
			j++
		case !policyGiven && is(opt, "acked"):
			policy, policyGiven = xstream.Acked, true
			j++
		case is(opt, "ids") && j+1 < len(args):
			n, valid := parseLL(args[j+1])
			if !valid || n < 1 {
				c.err("ERR Number of IDs must be a positive integer")
				return 0, nil, false
			}
			if n > int64(len(args)-j-2) {
				c.err("ERR The `numids` parameter must match the number of arguments")
				return 0, nil, false
			}
			ids = args[j+2 : j+2+int(n)]
			j += 2 + int(n)
		default:
			c.err(errSyntax)
			return 0, nil, false
		}
	}
	if ids == nil { // unreachable at XDELEX's and XACKDEL's arities, as in Redis
		c.err("ERR IDS option is required")
		return 0, nil, false
	}
	return policy, ids, true
}

func (c *conn) deleteResults(res []xstream.DeleteResult) {
	c.array(len(res))
	for _, r := range res {
		c.int(int64(r))
	}
}

// notFound answers XDELEX or XACKDEL on a missing key (or group): -1 for
// each ID, which Redis does not even parse then.
func (c *conn) notFound(n int) {
	c.array(n)
	for range n {
		c.int(int64(xstream.DeleteNotFound))
	}
}

// xdelex: XDELEX key [KEEPREF | DELREF | ACKED] IDS numids id [id ...]
// (Redis 8.2).
func xdelex(c *conn, args [][]byte) {
	policy, idArgs, ok := c.parseAckDelArgs(args, 2)
	if !ok {
		return
	}
	c.lookedUp()
	s, found := c.lookupStream(args[1])
	if !found {
		c.notFound(len(idArgs))
		return
	}
	ids, ok := c.strictIDs(idArgs)
	if !ok {
		return
	}
	res, err := s.DeleteExIDs(policy, ids...)
	if err != nil {
		c.fail(err)
		return
	}
	c.deleteResults(res)
}

func xsetid(c *conn, args [][]byte) {
	last, ok := parseStrictID(args[2])
	if !ok {
		c.err(errInvalidID)
		return
	}
	set := xstream.SetIDArgs{LastID: last.String(), EntriesAdded: -1}
	for i := 3; i < len(args); i += 2 {
		more := len(args) - 1 - i
		switch {
		case is(args[i], "entriesadded") && more > 0:
			n, ok := c.intArg(args[i+1], "")
			if !ok {
				return
			}
			if n < 0 {
				c.err("ERR entries_added must be positive")
				return
			}
			set.EntriesAdded = n
		case is(args[i], "maxdeletedid") && more > 0:
			id, ok := parseStrictID(args[i+1])
			if !ok {
				c.err(errInvalidID)
				return
			}
			if last.Less(id) {
				c.err("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
				return
			}
			set.MaxDeletedID = id.String()
		default:
			c.err(errSyntax)
			return
		}
	}
	c.lookedUp()
	s, found := c.lookupStream(args[1])
	if !found {
		c.err(errNoKey)
		return
	}
	// Redis's order of checks; SetID checks again atomically.
	info, err := s.Info()
	switch {
	case err != nil:
		c.fail(err)
		return
	case info.LastEntry != nil && last.Less(info.LastEntry.ID):
		c.err("ERR The ID specified in XSETID is smaller than the target stream top item")
		return
	case info.Length > 0 && set.EntriesAdded >= 0 && set.EntriesAdded < info.Length:
		c.err("ERR The entries_added specified in XSETID is smaller than the target stream length")
		return
	}
	err = s.SetID(set)
	switch {
	case err == nil:
		c.ok()
	case errors.Is(err, xstream.ErrIDTooSmall):
		c.err("ERR The ID specified in XSETID is smaller than the target stream top item")
	case errors.Is(err, xstream.ErrInvalidArgument):
		c.err("ERR The entries_added specified in XSETID is smaller than the target stream length")
	default:
		c.fail(err)
	}
}
