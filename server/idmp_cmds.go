package server

import (
	"errors"
	"time"

	"github.com/xstreamgo/xstream"
)

// Idempotent production (Redis 8.6): XCFGSET sets a stream's setting
// (xstream.Stream.SetIdempotence). XADD's IDMP and IDMPAUTO options and
// XINFO STREAM's IDMP fields are in the handlers of those commands.

func init() {
	register("xcfgset", -2, xcfgset)
	// COMMAND DOCS arguments, as Redis 8's src/commands/xcfgset.json
	// describes them.
	commandDocsData["xcfgset"] = docSpec{args: [][]docNode{
		{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
		{{key: "name", str: "idmp-duration-block"}, {key: "type", str: "block"}, {key: "flags", flags: []string{"optional"}}, {key: "arguments", args: [][]docNode{
			{{key: "name", str: "idmp-duration-token"}, {key: "type", str: "pure-token"}, {key: "token", str: "IDMP-DURATION"}},
			{{key: "name", str: "duration"}, {key: "type", str: "integer"}},
		}}},
		{{key: "name", str: "idmp-maxsize-block"}, {key: "type", str: "block"}, {key: "flags", flags: []string{"optional"}}, {key: "arguments", args: [][]docNode{
			{{key: "name", str: "idmp-maxsize-token"}, {key: "type", str: "pure-token"}, {key: "token", str: "IDMP-MAXSIZE"}},
			{{key: "name", str: "maxsize"}, {key: "type", str: "integer"}},
		}}},
	}}
}

// XCFGSET's errors, as Redis 8.6 writes them.
const (
	errCfgNoParam  = "ERR At least one parameter (IDMP-DURATION or IDMP-MAXSIZE) is required"
	errCfgDuration = "ERR IDMP-DURATION must be between 1 and 86400 seconds"
	errCfgMaxSize  = "ERR IDMP-MAXSIZE must be between 1 and 10000 entries"
)

// xcfgset: XCFGSET key [IDMP-DURATION seconds] [IDMP-MAXSIZE n]. The
// options are read in pairs, in any order (a repeated one: the last
// counts), each value checked as it is read; then the key must hold a
// stream. It replies +OK.
func xcfgset(c *conn, args [][]byte) {
	if len(args) == 2 {
		c.err(errCfgNoParam)
		return
	}
	var cfg xstream.IdempotenceConfig
	for i := 2; i < len(args); i += 2 {
		duration := is(args[i], "idmp-duration")
		if !duration && !is(args[i], "idmp-maxsize") || i+1 == len(args) {
			c.err(errSyntax)
			return
		}
		n, ok := c.intArg(args[i+1], "")
		if !ok {
			return
		}
		switch {
		case duration && (n < 1 || n > int64(xstream.MaxIdempotenceDuration/time.Second)):
			c.err(errCfgDuration)
			return
		case duration:
			cfg.Duration = time.Duration(n) * time.Second
		case n < 1 || n > xstream.MaxIdempotenceMaxSize:
			c.err(errCfgMaxSize)
			return
		default:
			cfg.MaxSize = int(n)
		}
	}
	switch err := c.mustDB().SetIdempotence(string(args[1]), cfg); {
	case errors.Is(err, xstream.ErrNoStream):
		c.err(errNoKey)
		return
	case err != nil:
		c.err("ERR " + err.Error())
		return
	}
	c.ok()
}
