package server

import (
	"time"

	"github.com/xstreamgo/xstream"
)

// Idempotent production (Redis 8.6): XADD's IDMP and IDMPAUTO options
// (parseIdmp, for parseAddTrim), XCFGSET (xstream.Stream.SetIdempotence)
// and the IDMP fields of XINFO STREAM (idmpFields, for streamHead).

func init() {
	register("xcfgset", -2, xcfgset) // its COMMAND DOCS arguments are in command_docs_newer.go
}

// parseIdmp parses XADD's IDMPAUTO pid or IDMP pid iid at args[i] (the
// caller saw the arguments it takes) and returns the index of its last
// argument. An explicit ID after it is refused by parseAddTrim.
func (a *addTrimArgs) parseIdmp(args [][]byte, i int) (int, error) {
	auto := is(args[i], "idmpauto")
	switch {
	case a.idmp.Producer != "":
		return i, replyError(errIdmpTwice)
	case len(args[i+1]) == 0 && auto:
		return i, replyError(errIdmpAutoNoPid)
	case len(args[i+1]) == 0:
		return i, replyError(errIdmpNoPid)
	case auto:
		a.idmp = xstream.Idempotency{Producer: string(args[i+1]), Auto: true}
		return i + 1, nil
	case len(args[i+2]) == 0:
		return i, replyError(errIdmpNoIid)
	}
	a.idmp = xstream.Idempotency{Producer: string(args[i+1]), ID: string(args[i+2])}
	return i + 2, nil
}

// idmpFields writes the six IDMP fields of XINFO STREAM (and FULL), after
// recorded-first-entry-id, for a stream that used idempotent production
// (idmpPairs).
func (c *conn) idmpFields(info xstream.StreamInfo) {
	if info.Idempotence == nil {
		return // Redis 7.0's reply (see idmpPairs)
	}
	idmp := *info.Idempotence
	c.bulk("idmp-duration")
	c.int(int64(idmp.Duration / time.Second))
	c.bulk("idmp-maxsize")
	c.int(int64(idmp.MaxSize))
	c.bulk("pids-tracked")
	c.int(int64(idmp.Producers))
	c.bulk("iids-tracked")
	c.int(int64(idmp.Tracked))
	c.bulk("iids-added")
	c.int(idmp.Added)
	c.bulk("iids-duplicates")
	c.int(idmp.Duplicates)
}

// idmpPairs is how many field-value pairs idmpFields writes. A stream
// that never used idempotent production (no IDMP add, no XCFGSET) shows
// none: its XINFO STREAM stays Redis 7.0's, which clients older than Redis
// 8.6 parse (go-redis before v9.18 refuses unknown fields), as the server
// says it is 7.0. A stream that uses it shows Redis 8.6's six fields.
func idmpPairs(info xstream.StreamInfo) int {
	if info.Idempotence == nil {
		return 0
	}
	return 6
}

// xcfgset: XCFGSET key [IDMP-DURATION seconds] [IDMP-MAXSIZE n]. As
// xcfgsetCommand: the key is looked up first, then each option is read
// with its value and the value checked, in any order, once each; at
// least one must be given. It replies +OK.
func xcfgset(c *conn, args [][]byte) {
	s, ok := c.lookupStream(args[1])
	if !ok {
		c.err(errNoKey)
		return
	}
	cfg, err := parseCfgSet(args)
	if err != nil {
		c.fail(err)
		return
	}
	if err := s.SetIdempotence(cfg); err != nil {
		c.fail(err)
		return
	}
	c.ok()
}

// parseCfgSet parses XCFGSET's options.
func parseCfgSet(args [][]byte) (cfg xstream.IdempotenceConfig, err error) {
	for i := 2; i < len(args); i += 2 {
		duration := is(args[i], "idmp-duration")
		switch {
		case !duration && !is(args[i], "idmp-maxsize") || i+1 == len(args):
			return cfg, replyError(errSyntax)
		case duration && cfg.Duration != 0:
			return cfg, replyError(errCfgDurationTwice)
		case !duration && cfg.MaxSize != 0:
			return cfg, replyError(errCfgMaxSizeTwice)
		}
		n, err := intArg(args[i+1], "")
		if err != nil {
			return cfg, err
		}
		switch {
		case duration && (n < 1 || n > int64(xstream.MaxIdempotenceDuration/time.Second)):
			return cfg, replyError(errCfgDuration)
		case duration:
			cfg.Duration = time.Duration(n) * time.Second
		case n < 1 || n > xstream.MaxIdempotenceMaxSize:
			return cfg, replyError(errCfgMaxSize)
		default:
			cfg.MaxSize = int(n)
		}
	}
	if cfg == (xstream.IdempotenceConfig{}) {
		return cfg, replyError(errCfgNoParam)
	}
	return cfg, nil
}
