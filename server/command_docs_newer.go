package server

// COMMAND DOCS arguments of the commands Redis 7.0 does not have, which
// command_docs_data.go (generated from redis-server 7.0.15) cannot hold:
// those of Redis 7.2 and 8 as Redis 8's src/commands/*.json describes
// them, in Redis 7.0's fields (no display_text), and XGROUPCFG's, which
// only xstream has. redis-cli builds its hints from them.
// TestCommandDocsArguments checks that every command taking arguments has
// them.

func init() {
	// idsBlock is IDS numids id [id ...], the block of XACKDEL, XDELEX and
	// XNACK.
	idsBlock := []docNode{{key: "name", str: "ids"}, {key: "type", str: "block"}, {key: "token", str: "IDS"}, {key: "arguments", args: [][]docNode{
		{{key: "name", str: "numids"}, {key: "type", str: "integer"}},
		{{key: "name", str: "id"}, {key: "type", str: "string"}, {key: "flags", flags: []string{"multiple"}}},
	}}}
	// condition is KEEPREF | DELREF | ACKED, of XACKDEL and XDELEX.
	condition := []docNode{{key: "name", str: "condition"}, {key: "type", str: "oneof"}, {key: "flags", flags: []string{"optional"}}, {key: "arguments", args: [][]docNode{
		{{key: "name", str: "keepref"}, {key: "type", str: "pure-token"}, {key: "token", str: "KEEPREF"}},
		{{key: "name", str: "delref"}, {key: "type", str: "pure-token"}, {key: "token", str: "DELREF"}},
		{{key: "name", str: "acked"}, {key: "type", str: "pure-token"}, {key: "token", str: "ACKED"}},
	}}}
	key := []docNode{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}}
	group := []docNode{{key: "name", str: "group"}, {key: "type", str: "string"}}

	for name, args := range map[string][][]docNode{
		// CLIENT SETINFO <LIB-NAME libname | LIB-VER libver> (Redis 7.2)
		"client|setinfo": {
			{{key: "name", str: "attr"}, {key: "type", str: "oneof"}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "libname"}, {key: "type", str: "string"}, {key: "token", str: "LIB-NAME"}},
				{{key: "name", str: "libver"}, {key: "type", str: "string"}, {key: "token", str: "LIB-VER"}},
			}}},
		},
		// XACKDEL key group [KEEPREF | DELREF | ACKED] IDS numids id [id ...] (Redis 8.2)
		"xackdel": {key, group, condition, idsBlock},
		// XDELEX key [KEEPREF | DELREF | ACKED] IDS numids id [id ...] (Redis 8.2)
		"xdelex": {key, condition, idsBlock},
		// XNACK key group <SILENT | FAIL | FATAL> IDS numids id [id ...]
		// [RETRYCOUNT count] [FORCE] (Redis 8.8)
		"xnack": {key, group,
			{{key: "name", str: "mode"}, {key: "type", str: "oneof"}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "silent"}, {key: "type", str: "pure-token"}, {key: "token", str: "SILENT"}},
				{{key: "name", str: "fail"}, {key: "type", str: "pure-token"}, {key: "token", str: "FAIL"}},
				{{key: "name", str: "fatal"}, {key: "type", str: "pure-token"}, {key: "token", str: "FATAL"}},
			}}},
			idsBlock,
			{{key: "name", str: "count"}, {key: "type", str: "integer"}, {key: "token", str: "RETRYCOUNT"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "force"}, {key: "type", str: "pure-token"}, {key: "token", str: "FORCE"}, {key: "flags", flags: []string{"optional"}}},
		},
		// XCFGSET key [IDMP-DURATION duration] [IDMP-MAXSIZE maxsize] (Redis 8.6)
		"xcfgset": {key,
			{{key: "name", str: "idmp-duration-block"}, {key: "type", str: "block"}, {key: "flags", flags: []string{"optional"}}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "idmp-duration-token"}, {key: "type", str: "pure-token"}, {key: "token", str: "IDMP-DURATION"}},
				{{key: "name", str: "duration"}, {key: "type", str: "integer"}},
			}}},
			{{key: "name", str: "idmp-maxsize-block"}, {key: "type", str: "block"}, {key: "flags", flags: []string{"optional"}}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "idmp-maxsize-token"}, {key: "type", str: "pure-token"}, {key: "token", str: "IDMP-MAXSIZE"}},
				{{key: "name", str: "maxsize"}, {key: "type", str: "integer"}},
			}}},
		},
		// XGROUPCFG key group MAXDELIVER count [DEADLETTER stream]
		// (xstream's own; DEADLETTER goes with a count of 1 or more)
		"xgroupcfg": {key, group,
			{{key: "name", str: "count"}, {key: "type", str: "integer"}, {key: "token", str: "MAXDELIVER"}},
			{{key: "name", str: "stream"}, {key: "type", str: "string"}, {key: "token", str: "DEADLETTER"}, {key: "flags", flags: []string{"optional"}}},
		},
	} {
		commandDocsData[name] = docSpec{args: args}
	}
}
