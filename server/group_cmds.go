package server

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/xstreamgo/xstream"
)

func init() {
	register("xgroup|create", -5, xgroupCreate)
	register("xgroup|setid", -5, xgroupSetID)
	register("xgroup|destroy", 4, xgroupDestroy)
	register("xgroup|createconsumer", 5, xgroupCreateConsumer)
	register("xgroup|delconsumer", 5, xgroupDelConsumer)
	register("xgroup|help", 2, func(c *conn, args [][]byte) { c.help(xgroupHelp) })
	register("xack", -4, xack)
	register("xackdel", -6, xackdel)
	register("xnack", -7, xnack)
	register("xpending", -3, xpending)
	register("xclaim", -6, xclaim)
	register("xautoclaim", -6, xautoclaim)
}

var xgroupHelp = []string{
	"XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CREATE <key> <groupname> <id|$> [option]",
	"    Create a new consumer group. Options are:",
	"    * MKSTREAM",
	"      Create the empty stream if it does not exist.",
	"    * ENTRIESREAD entries_read",
	"      Set the group's entries_read counter (internal use).",
	"CREATECONSUMER <key> <groupname> <consumer>",
	"    Create a new consumer in the specified group.",
	"DELCONSUMER <key> <groupname> <consumer>",
	"    Remove the specified consumer.",
	"DESTROY <key> <groupname>",
	"    Remove the specified group.",
	"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
	"    Set the current group ID and entries_read counter.",
	"HELP",
	"    Prints this help.",
}

func (c *conn) help(lines []string) {
	c.array(len(lines))
	for _, l := range lines {
		c.simple(l)
	}
}

// hasGroup reports whether s has the consumer group. O(log G).
func hasGroup(s *xstream.Stream, group string) bool {
	_, err := s.PendingRange(group, xstream.PendingArgs{Start: "+", End: "-"})
	return err == nil
}

func noGroupErr(key, group []byte) string {
	return fmt.Sprintf("NOGROUP No such key '%s' or consumer group '%s'", key, group)
}

// xgroupPrelude does the common part of the XGROUP subcommands with a
// key: the options, the key and the group, as Redis's xgroupCommand.
func (c *conn) xgroupPrelude(args [][]byte) (s *xstream.Stream, opts xstream.GroupOptions, ok bool) {
	sub := string(args[1])
	create, setid := is(args[1], "create"), is(args[1], "setid")
	for i := 5; i < len(args); {
		switch {
		case create && is(args[i], "mkstream"):
			opts.MkStream = true
			i++
		case (create || setid) && is(args[i], "entriesread") && i+1 < len(args):
			n, ok := c.intArg(args[i+1], "")
			if !ok {
				return nil, opts, false
			}
			if n < -1 {
				c.err("ERR value for ENTRIESREAD must be positive or -1")
				return nil, opts, false
			}
			opts.EntriesRead = &n
			i += 2
		default:
			c.err(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%.128s'. Try XGROUP HELP.", sub))
			return nil, opts, false
		}
	}
	c.lookedUp()
	s, found := c.lookupStream(args[2])
	if !found && !opts.MkStream {
		c.err("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
		return nil, opts, false
	}
	if !create && !is(args[1], "destroy") && !hasGroup(s, string(args[3])) {
		c.err(fmt.Sprintf("NOGROUP No such consumer group '%s' for key name '%s'", args[3], args[2]))
		return nil, opts, false
	}
	return s, opts, true
}

func groupStart(b []byte, strictParse bool) (string, bool) {
	if string(b) == "$" {
		return "$", true
	}
	p, ok := parseID(string(b), 0, strictParse, false)
	return p.id.String(), ok
}

func xgroupCreate(c *conn, args [][]byte) {
	if len(args) > 8 {
		c.err(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%s'. Try XGROUP HELP.", args[1]))
		return
	}
	_, opts, ok := c.xgroupPrelude(args)
	if !ok {
		return
	}
	start, ok := groupStart(args[4], true)
	if !ok {
		c.err(errInvalidID)
		return
	}
	if err := c.mustDB().CreateGroup(string(args[2]), string(args[3]), start, opts); err != nil {
		c.fail(err)
		return
	}
	c.ok()
}

func xgroupSetID(c *conn, args [][]byte) {
	if len(args) != 5 && len(args) != 7 {
		c.err(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%s'. Try XGROUP HELP.", args[1]))
		return
	}
	s, opts, ok := c.xgroupPrelude(args)
	if !ok {
		return
	}
	start, ok := groupStart(args[4], false)
	if !ok {
		c.err(errInvalidID)
		return
	}
	if err := s.SetGroupID(string(args[3]), start, opts); err != nil {
		c.fail(err)
		return
	}
	c.ok()
}

func xgroupDestroy(c *conn, args [][]byte) {
	s, _, ok := c.xgroupPrelude(args)
	if !ok {
		return
	}
	switch ok, err := s.DestroyGroup(string(args[3])); {
	case err != nil:
		c.fail(err)
	case ok:
		c.int(1)
	default:
		c.int(0)
	}
}

func xgroupCreateConsumer(c *conn, args [][]byte) {
	s, _, ok := c.xgroupPrelude(args)
	if !ok {
		return
	}
	created, err := s.CreateConsumer(string(args[3]), string(args[4]))
	if err != nil {
		c.fail(err)
		return
	}
	if created {
		c.int(1)
	} else {
		c.int(0)
	}
}

func xgroupDelConsumer(c *conn, args [][]byte) {
	s, _, ok := c.xgroupPrelude(args)
	if !ok {
		return
	}
	n, err := s.DeleteConsumer(string(args[3]), string(args[4]))
	if err != nil {
		c.fail(err)
		return
	}
	c.int(n)
}

func xack(c *conn, args [][]byte) {
	s, found := c.lookupStream(args[1])
	if !found || !hasGroup(s, string(args[2])) {
		c.int(0)
		return
	}
	ids, ok := c.strictIDs(args[3:])
	if !ok {
		return
	}
	n, err := s.AckIDs(string(args[2]), ids...)
	if err != nil {
		c.fail(err)
		return
	}
	c.int(n)
}

// xackdel: XACKDEL key group [KEEPREF | DELREF | ACKED] IDS numids id
// [id ...] (Redis 8.2).
func xackdel(c *conn, args [][]byte) {
	policy, idArgs, ok := c.parseAckDelArgs(args, 3)
	if !ok {
		return
	}
	c.lookedUp()
	s, found := c.lookupStream(args[1])
	if !found || !hasGroup(s, string(args[2])) {
		c.notFound(len(idArgs))
		return
	}
	ids, ok := c.strictIDs(idArgs)
	if !ok {
		return
	}
	res, err := s.AckDelIDs(string(args[2]), policy, ids...)
	if err != nil {
		c.fail(err)
		return
	}
	c.deleteResults(res)
}

// xnack: XNACK key group <SILENT | FAIL | FATAL> IDS numids id [id ...]
// [RETRYCOUNT count] [FORCE] (Redis 8.8), the options and the IDS block in
// any order after the mode. Like xnackCommand it looks up the key and the
// group first, then the mode, then the options in order; IDs past numids
// are read as options.
func xnack(c *conn, args [][]byte) {
	s, found := c.lookupStream(args[1])
	if !found || !hasGroup(s, string(args[2])) {
		c.err(noGroupErr(args[1], args[2]))
		return
	}
	var mode xstream.NackMode
	switch {
	case is(args[3], "silent"):
		mode = xstream.NackSilent
	case is(args[3], "fail"):
		mode = xstream.NackFail
	case is(args[3], "fatal"):
		mode = xstream.NackFatal
	default:
		c.err(errNackMode)
		return
	}
	var (
		idArgs [][]byte
		opts   xstream.NackArgs
	)
	for i := 4; i < len(args); i++ {
		more := len(args) - 1 - i
		switch {
		case is(args[i], "ids") && more > 0:
			n, ok := parseLL(args[i+1])
			if !ok || n < 1 || n > math.MaxInt32 {
				c.err(errNackNumIDs)
				return
			}
			if n > int64(len(args)-i-2) {
				c.err(errNackMismatch)
				return
			}
			idArgs = args[i+2 : i+2+int(n)]
			i += 1 + int(n)
		case is(args[i], "force"):
			opts.Force = true
		case is(args[i], "retrycount") && more > 0:
			i++
			v, ok := c.intArg(args[i], "")
			if !ok {
				return
			}
			if v < 0 {
				c.err(errNackRetry)
				return
			}
			opts.RetryCount = &v
		default:
			c.err(fmt.Sprintf(errNackOptionFmt, args[i]))
			return
		}
	}
	if idArgs == nil {
		c.err(errNackNoIDs)
		return
	}
	ids, ok := c.strictIDs(idArgs)
	if !ok {
		return
	}
	got, err := s.NackIDs(string(args[2]), mode, ids, opts)
	if err != nil {
		c.fail(err)
		return
	}
	c.int(got)
}

// pendingCmd is a parsed XPENDING in its extended form.
type pendingCmd struct {
	minIdle, count int64
	lo, hi         xstream.ID
	consumer       []byte // nil: every consumer
}

// xpending serves XPENDING: the summary form (key and group only) or the
// extended one (IDLE, a range, a count and a consumer).
func xpending(c *conn, args [][]byte) {
	p, err := parsePending(args)
	if err != nil {
		c.fail(err)
		return
	}
	c.lookedUp()
	s, found := c.lookupStream(args[1])
	if !found || !hasGroup(s, string(args[2])) {
		c.err(noGroupErr(args[1], args[2]))
		return
	}
	if len(args) == 3 {
		c.pendingSummary(s, string(args[2]))
		return
	}
	rows, err := pendingRows(s, string(args[2]), p)
	if err != nil {
		c.fail(err)
		return
	}
	c.array(len(rows))
	for _, r := range rows {
		c.array(4)
		c.id(r.ID)
		c.bulk(r.Consumer)
		c.int(r.Idle.Milliseconds())
		c.int(r.Deliveries)
	}
}

// parsePending parses the arguments of XPENDING's extended form, as
// Redis's xpendingCommand does before it looks up the key.
func parsePending(args [][]byte) (p pendingCmd, err error) {
	if len(args) != 3 && (len(args) < 6 || len(args) > 9) {
		return p, replyError(errSyntax)
	}
	if len(args) == 3 {
		return p, nil
	}
	start := 3
	if is(args[3], "idle") {
		if p.minIdle, err = intArg(args[4], ""); err != nil {
			return p, err
		}
		if len(args) < 8 {
			return p, replyError(errSyntax)
		}
		start += 2
	}
	if p.count, err = intArg(args[start+2], ""); err != nil {
		return p, err
	}
	p.count = max(p.count, 0)
	if p.lo, p.hi, err = rangeBounds(args[start], args[start+1]); err != nil {
		return p, err
	}
	if start+3 < len(args) {
		p.consumer = args[start+3]
	}
	return p, nil
}

// pendingSummary writes XPENDING's summary: the count, the lowest and
// highest IDs and the count of each consumer.
func (c *conn) pendingSummary(s *xstream.Stream, group string) {
	sum, err := s.Pending(group)
	if err != nil {
		c.fail(err)
		return
	}
	c.array(4)
	c.int(sum.Count)
	if sum.Count == 0 {
		c.null()
		c.null()
		c.nullArray()
		return
	}
	c.id(sum.Lowest)
	c.id(sum.Highest)
	c.array(len(sum.Consumers))
	for _, cp := range sum.Consumers {
		c.array(2)
		c.bulk(cp.Name)
		c.bulk(strconv.FormatInt(cp.Count, 10))
	}
}

// pendingRows returns the rows of XPENDING's extended form. The core reads
// Consumer "" as every consumer; Redis looks for a consumer called "":
// for it, pendingRows takes every row and keeps that consumer's.
func pendingRows(s *xstream.Stream, group string, p pendingCmd) ([]xstream.PendingEntry, error) {
	if p.count == 0 || p.hi.Less(p.lo) {
		return nil, nil
	}
	onlyEmpty := p.consumer != nil && len(p.consumer) == 0
	if onlyEmpty && !consumerExists(s, group, "") {
		return nil, nil
	}
	pageCount := int(min(p.count, 1<<31))
	if onlyEmpty {
		pageCount = 0
	}
	rows, err := s.PendingRange(group, xstream.PendingArgs{
		Start:    p.lo.String(),
		End:      p.hi.String(),
		Count:    pageCount,
		Consumer: string(p.consumer),
		MinIdle:  time.Duration(max(p.minIdle, 0)) * time.Millisecond,
	})
	if err != nil || !onlyEmpty {
		return rows, err
	}
	kept := rows[:0]
	for _, r := range rows {
		// Entries given back by XNACK have Consumer "" too, but belong
		// to no consumer.
		if r.Consumer == "" && r.Idle != xstream.NackIdle && int64(len(kept)) < p.count {
			kept = append(kept, r)
		}
	}
	return kept, nil
}

func consumerExists(s *xstream.Stream, group, name string) bool {
	cs, _ := s.Consumers(group)
	for _, ci := range cs {
		if ci.Name == name {
			return true
		}
	}
	return false
}

// claimCmd is a parsed XCLAIM.
type claimCmd struct {
	minIdle time.Duration
	ids     []xstream.ID
	opts    xstream.ClaimArgs
}

// xclaim serves XCLAIM: the key and group are looked up first, then the
// arguments are parsed, as in Redis's xclaimCommand.
func xclaim(c *conn, args [][]byte) {
	s, found := c.lookupStream(args[1])
	group := string(args[2])
	if !found || !hasGroup(s, group) {
		c.err(noGroupErr(args[1], args[2]))
		return
	}
	cl, err := parseClaim(args)
	if err != nil {
		c.fail(err)
		return
	}
	es, err := s.ClaimIDs(group, string(args[3]), cl.minIdle, cl.ids, cl.opts)
	switch {
	case err != nil:
		c.fail(err)
	case cl.opts.JustID:
		c.ids(es)
	default:
		c.entries(es)
	}
}

// parseClaim parses XCLAIM's min-idle-time, IDs and options. The IDs end
// at the first argument that is not one.
func parseClaim(args [][]byte) (cl claimCmd, err error) {
	minIdle, err := intArg(args[4], "Invalid min-idle-time argument for XCLAIM")
	if err != nil {
		return cl, err
	}
	cl.minIdle = time.Duration(max(minIdle, 0)) * time.Millisecond
	j := 5
	for ; j < len(args); j++ {
		id, ok := parseStrictID(args[j])
		if !ok {
			break
		}
		cl.ids = append(cl.ids, id)
	}
	for ; j < len(args); j++ {
		if j, err = cl.parseOption(args, j); err != nil {
			return cl, err
		}
	}
	if len(cl.ids) == 0 {
		cl.ids = []xstream.ID{{}} // 0-0, never an entry: claims nothing, still applies LASTID
	}
	return cl, nil
}

// parseOption parses the XCLAIM option at args[j] and returns the index
// of its last argument.
func (cl *claimCmd) parseOption(args [][]byte, j int) (int, error) {
	opts := &cl.opts
	more := len(args) - 1 - j
	switch {
	case is(args[j], "force"):
		opts.Force = true
	case is(args[j], "justid"):
		opts.JustID = true
	case is(args[j], "idle") && more > 0:
		v, err := intArg(args[j+1], "Invalid IDLE option argument for XCLAIM")
		if err != nil {
			return j, err
		}
		opts.Time, opts.Idle = time.Time{}, time.Duration(max(v, 0))*time.Millisecond
		j++
	case is(args[j], "time") && more > 0:
		v, err := intArg(args[j+1], "Invalid TIME option argument for XCLAIM")
		if err != nil {
			return j, err
		}
		opts.Idle, opts.Time = 0, time.UnixMilli(v)
		if v < 0 {
			opts.Time = time.Time{} // Redis: a bogus time counts as now
		}
		j++
	case is(args[j], "retrycount") && more > 0:
		v, err := intArg(args[j+1], "Invalid RETRYCOUNT option argument for XCLAIM")
		if err != nil {
			return j, err
		}
		opts.RetryCount = nil
		if v >= 0 {
			opts.RetryCount = &v
		}
		j++
	case is(args[j], "lastid") && more > 0:
		id, ok := parseStrictID(args[j+1])
		if !ok {
			return j, replyError(errInvalidID)
		}
		opts.LastID = id.String()
		j++
	default:
		return j, replyError(fmt.Sprintf("ERR Unrecognized XCLAIM option '%s'", args[j]))
	}
	return j, nil
}

func xautoclaim(c *conn, args [][]byte) {
	minIdle, ok := c.intArg(args[4], "Invalid min-idle-time argument for XAUTOCLAIM")
	if !ok {
		return
	}
	start, ex, ok := parseInterval(args[5], 0)
	if !ok {
		c.err(errInvalidID)
		return
	}
	if ex {
		if start, ok = start.Next(); !ok {
			c.err("ERR invalid start ID for the interval")
			return
		}
	}
	count := int64(100)
	justID := false
	for j := 6; j < len(args); j++ {
		more := len(args) - 1 - j
		switch {
		case is(args[j], "count") && more > 0:
			v, ok := parseLL(args[j+1])
			if !ok || v < 1 || v > (1<<63-1)/16 {
				c.err("ERR COUNT must be > 0")
				return
			}
			count = v
			j++
		case is(args[j], "justid"):
			justID = true
		default:
			c.err(errSyntax)
			return
		}
	}
	s, found := c.lookupStream(args[1])
	group := string(args[2])
	if !found || !hasGroup(s, group) {
		c.err(noGroupErr(args[1], args[2]))
		return
	}
	res, err := s.AutoClaim(group, string(args[3]), time.Duration(max(minIdle, 0))*time.Millisecond, start.String(), xstream.AutoClaimArgs{Count: int(count), JustID: justID})
	if err != nil {
		c.fail(err)
		return
	}
	c.array(3)
	c.id(res.Next)
	if justID {
		c.ids(res.Entries)
	} else {
		c.entries(res.Entries)
	}
	c.array(len(res.Deleted))
	for _, id := range res.Deleted {
		c.id(id)
	}
}
