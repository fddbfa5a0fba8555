// Code generated from redis-server 7.0.15's COMMAND DOCS (arguments and
// history of the commands this server serves); DO NOT EDIT.
//
// It holds, for each name of commandSpecs that Redis 7.0 knows, the
// "history" and "arguments" fields of its RESP3 COMMAND DOCS reply, field
// by field in Redis's order. TestDiffCommandInfo compares them with a
// running redis-server 7.0, so a stale entry fails the tests.

package server

var commandDocsData = map[string]docSpec{
	"ping": {
		args: [][]docNode{
			{{key: "name", str: "message"}, {key: "type", str: "string"}, {key: "flags", flags: []string{"optional"}}},
		},
	},
	"echo": {
		args: [][]docNode{
			{{key: "name", str: "message"}, {key: "type", str: "string"}},
		},
	},
	"auth": {
		history: [][2]string{
			{"6.0.0", "Added ACL style (username and password)."},
		},
		args: [][]docNode{
			{{key: "name", str: "username"}, {key: "type", str: "string"}, {key: "since", str: "6.0.0"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "password"}, {key: "type", str: "string"}},
		},
	},
	"hello": {
		history: [][2]string{
			{"6.2.0", "`protover` made optional; when called without arguments the command reports the current connection's context."},
		},
		args: [][]docNode{
			{{key: "name", str: "arguments"}, {key: "type", str: "block"}, {key: "flags", flags: []string{"optional"}}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "protover"}, {key: "type", str: "integer"}},
				{{key: "name", str: "username_password"}, {key: "type", str: "block"}, {key: "token", str: "AUTH"}, {key: "flags", flags: []string{"optional"}}, {key: "arguments", args: [][]docNode{
					{{key: "name", str: "username"}, {key: "type", str: "string"}},
					{{key: "name", str: "password"}, {key: "type", str: "string"}},
				}}},
				{{key: "name", str: "clientname"}, {key: "type", str: "string"}, {key: "token", str: "SETNAME"}, {key: "flags", flags: []string{"optional"}}},
			}}},
		},
	},
	"select": {
		args: [][]docNode{
			{{key: "name", str: "index"}, {key: "type", str: "integer"}},
		},
	},
	"client|setname": {
		args: [][]docNode{
			{{key: "name", str: "connection-name"}, {key: "type", str: "string"}},
		},
	},
	"command|info": {
		history: [][2]string{
			{"7.0.0", "Allowed to be called with no argument to get info on all commands."},
		},
		args: [][]docNode{
			{{key: "name", str: "command-name"}, {key: "type", str: "string"}, {key: "flags", flags: []string{"optional", "multiple"}}},
		},
	},
	"command|list": {
		args: [][]docNode{
			{{key: "name", str: "filterby"}, {key: "type", str: "oneof"}, {key: "token", str: "FILTERBY"}, {key: "flags", flags: []string{"optional"}}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "module-name"}, {key: "type", str: "string"}, {key: "token", str: "MODULE"}},
				{{key: "name", str: "category"}, {key: "type", str: "string"}, {key: "token", str: "ACLCAT"}},
				{{key: "name", str: "pattern"}, {key: "type", str: "pattern"}, {key: "token", str: "PATTERN"}},
			}}},
		},
	},
	"command|docs": {
		args: [][]docNode{
			{{key: "name", str: "command-name"}, {key: "type", str: "string"}, {key: "flags", flags: []string{"optional", "multiple"}}},
		},
	},
	"del": {
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}, {key: "flags", flags: []string{"multiple"}}},
		},
	},
	"unlink": {
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}, {key: "flags", flags: []string{"multiple"}}},
		},
	},
	"exists": {
		history: [][2]string{
			{"3.0.3", "Accepts multiple `key` arguments."},
		},
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}, {key: "flags", flags: []string{"multiple"}}},
		},
	},
	"type": {
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
		},
	},
	"ttl": {
		history: [][2]string{
			{"2.8.0", "Added the -2 reply."},
		},
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
		},
	},
	"pttl": {
		history: [][2]string{
			{"2.8.0", "Added the -2 reply."},
		},
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
		},
	},
	"rename": {
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "newkey"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 1, isNum: true}},
		},
	},
	"renamenx": {
		history: [][2]string{
			{"3.2.0", "The command no longer returns an error when source and destination names are the same."},
		},
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "newkey"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 1, isNum: true}},
		},
	},
	"copy": {
		args: [][]docNode{
			{{key: "name", str: "source"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "destination"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 1, isNum: true}},
			{{key: "name", str: "destination-db"}, {key: "type", str: "integer"}, {key: "token", str: "DB"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "replace"}, {key: "type", str: "pure-token"}, {key: "token", str: "REPLACE"}, {key: "flags", flags: []string{"optional"}}},
		},
	},
	"swapdb": {
		args: [][]docNode{
			{{key: "name", str: "index1"}, {key: "type", str: "integer"}},
			{{key: "name", str: "index2"}, {key: "type", str: "integer"}},
		},
	},
	"expire": {
		history: [][2]string{
			{"7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`."},
		},
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "seconds"}, {key: "type", str: "integer"}},
			{{key: "name", str: "condition"}, {key: "type", str: "oneof"}, {key: "since", str: "7.0.0"}, {key: "flags", flags: []string{"optional"}}, {key: "arguments", args: [][]docNode{{{key: "name", str: "nx"}, {key: "type", str: "pure-token"}, {key: "token", str: "NX"}}, {{key: "name", str: "xx"}, {key: "type", str: "pure-token"}, {key: "token", str: "XX"}}, {{key: "name", str: "gt"}, {key: "type", str: "pure-token"}, {key: "token", str: "GT"}}, {{key: "name", str: "lt"}, {key: "type", str: "pure-token"}, {key: "token", str: "LT"}}}}},
		},
	},
	"pexpire": {
		history: [][2]string{
			{"7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`."},
		},
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "milliseconds"}, {key: "type", str: "integer"}},
			{{key: "name", str: "condition"}, {key: "type", str: "oneof"}, {key: "since", str: "7.0.0"}, {key: "flags", flags: []string{"optional"}}, {key: "arguments", args: [][]docNode{{{key: "name", str: "nx"}, {key: "type", str: "pure-token"}, {key: "token", str: "NX"}}, {{key: "name", str: "xx"}, {key: "type", str: "pure-token"}, {key: "token", str: "XX"}}, {{key: "name", str: "gt"}, {key: "type", str: "pure-token"}, {key: "token", str: "GT"}}, {{key: "name", str: "lt"}, {key: "type", str: "pure-token"}, {key: "token", str: "LT"}}}}},
		},
	},
	"expireat": {
		history: [][2]string{
			{"7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`."},
		},
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "unix-time-seconds"}, {key: "type", str: "unix-time"}},
			{{key: "name", str: "condition"}, {key: "type", str: "oneof"}, {key: "since", str: "7.0.0"}, {key: "flags", flags: []string{"optional"}}, {key: "arguments", args: [][]docNode{{{key: "name", str: "nx"}, {key: "type", str: "pure-token"}, {key: "token", str: "NX"}}, {{key: "name", str: "xx"}, {key: "type", str: "pure-token"}, {key: "token", str: "XX"}}, {{key: "name", str: "gt"}, {key: "type", str: "pure-token"}, {key: "token", str: "GT"}}, {{key: "name", str: "lt"}, {key: "type", str: "pure-token"}, {key: "token", str: "LT"}}}}},
		},
	},
	"pexpireat": {
		history: [][2]string{
			{"7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`."},
		},
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "unix-time-milliseconds"}, {key: "type", str: "unix-time"}},
			{{key: "name", str: "condition"}, {key: "type", str: "oneof"}, {key: "since", str: "7.0.0"}, {key: "flags", flags: []string{"optional"}}, {key: "arguments", args: [][]docNode{{{key: "name", str: "nx"}, {key: "type", str: "pure-token"}, {key: "token", str: "NX"}}, {{key: "name", str: "xx"}, {key: "type", str: "pure-token"}, {key: "token", str: "XX"}}, {{key: "name", str: "gt"}, {key: "type", str: "pure-token"}, {key: "token", str: "GT"}}, {{key: "name", str: "lt"}, {key: "type", str: "pure-token"}, {key: "token", str: "LT"}}}}},
		},
	},
	"expiretime": {
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
		},
	},
	"pexpiretime": {
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
		},
	},
	"persist": {
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
		},
	},
	"restore": {
		history: [][2]string{
			{"3.0.0", "Added the `REPLACE` modifier."},
			{"5.0.0", "Added the `ABSTTL` modifier."},
			{"5.0.0", "Added the `IDLETIME` and `FREQ` options."},
		},
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "ttl"}, {key: "type", str: "integer"}},
			{{key: "name", str: "serialized-value"}, {key: "type", str: "string"}},
			{{key: "name", str: "replace"}, {key: "type", str: "pure-token"}, {key: "token", str: "REPLACE"}, {key: "since", str: "3.0.0"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "absttl"}, {key: "type", str: "pure-token"}, {key: "token", str: "ABSTTL"}, {key: "since", str: "5.0.0"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "seconds"}, {key: "type", str: "integer"}, {key: "token", str: "IDLETIME"}, {key: "since", str: "5.0.0"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "frequency"}, {key: "type", str: "integer"}, {key: "token", str: "FREQ"}, {key: "since", str: "5.0.0"}, {key: "flags", flags: []string{"optional"}}},
		},
	},
	"object|encoding": {
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
		},
	},
	"object|refcount": {
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
		},
	},
	"memory|usage": {
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "count"}, {key: "type", str: "integer"}, {key: "token", str: "SAMPLES"}, {key: "flags", flags: []string{"optional"}}},
		},
	},
	"object|freq": {
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
		},
	},
	"keys": {
		args: [][]docNode{
			{{key: "name", str: "pattern"}, {key: "type", str: "pattern"}},
		},
	},
	"scan": {
		history: [][2]string{
			{"6.0.0", "Added the `TYPE` subcommand."},
		},
		args: [][]docNode{
			{{key: "name", str: "cursor"}, {key: "type", str: "integer"}},
			{{key: "name", str: "pattern"}, {key: "type", str: "pattern"}, {key: "token", str: "MATCH"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "count"}, {key: "type", str: "integer"}, {key: "token", str: "COUNT"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "type"}, {key: "type", str: "string"}, {key: "token", str: "TYPE"}, {key: "since", str: "6.0.0"}, {key: "flags", flags: []string{"optional"}}},
		},
	},
	"flushdb": {
		history: [][2]string{
			{"4.0.0", "Added the `ASYNC` flushing mode modifier."},
			{"6.2.0", "Added the `SYNC` flushing mode modifier."},
		},
		args: [][]docNode{
			{{key: "name", str: "async"}, {key: "type", str: "oneof"}, {key: "flags", flags: []string{"optional"}}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "async"}, {key: "type", str: "pure-token"}, {key: "token", str: "ASYNC"}, {key: "since", str: "4.0.0"}},
				{{key: "name", str: "sync"}, {key: "type", str: "pure-token"}, {key: "token", str: "SYNC"}, {key: "since", str: "6.2.0"}},
			}}},
		},
	},
	"flushall": {
		history: [][2]string{
			{"4.0.0", "Added the `ASYNC` flushing mode modifier."},
			{"6.2.0", "Added the `SYNC` flushing mode modifier."},
		},
		args: [][]docNode{
			{{key: "name", str: "async"}, {key: "type", str: "oneof"}, {key: "flags", flags: []string{"optional"}}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "async"}, {key: "type", str: "pure-token"}, {key: "token", str: "ASYNC"}, {key: "since", str: "4.0.0"}},
				{{key: "name", str: "sync"}, {key: "type", str: "pure-token"}, {key: "token", str: "SYNC"}, {key: "since", str: "6.2.0"}},
			}}},
		},
	},
	"info": {
		history: [][2]string{
			{"7.0.0", "Added support for taking multiple section arguments."},
		},
		args: [][]docNode{
			{{key: "name", str: "section"}, {key: "type", str: "string"}, {key: "flags", flags: []string{"optional", "multiple"}}},
		},
	},
	"bgsave": {
		history: [][2]string{
			{"3.2.2", "Added the `SCHEDULE` option."},
		},
		args: [][]docNode{
			{{key: "name", str: "schedule"}, {key: "type", str: "pure-token"}, {key: "token", str: "SCHEDULE"}, {key: "since", str: "3.2.2"}, {key: "flags", flags: []string{"optional"}}},
		},
	},
	"wait": {
		args: [][]docNode{
			{{key: "name", str: "numreplicas"}, {key: "type", str: "integer"}},
			{{key: "name", str: "timeout"}, {key: "type", str: "integer"}},
		},
	},
	"function|flush": {
		args: [][]docNode{
			{{key: "name", str: "async"}, {key: "type", str: "oneof"}, {key: "flags", flags: []string{"optional"}}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "async"}, {key: "type", str: "pure-token"}, {key: "token", str: "ASYNC"}},
				{{key: "name", str: "sync"}, {key: "type", str: "pure-token"}, {key: "token", str: "SYNC"}},
			}}},
		},
	},
	"function|list": {
		args: [][]docNode{
			{{key: "name", str: "library-name-pattern"}, {key: "type", str: "string"}, {key: "token", str: "LIBRARYNAME"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "withcode"}, {key: "type", str: "pure-token"}, {key: "token", str: "WITHCODE"}, {key: "flags", flags: []string{"optional"}}},
		},
	},
	"config|set": {
		history: [][2]string{
			{"7.0.0", "Added the ability to set multiple parameters in one call."},
		},
		args: [][]docNode{
			{{key: "name", str: "parameter_value"}, {key: "type", str: "block"}, {key: "flags", flags: []string{"multiple"}}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "parameter"}, {key: "type", str: "string"}},
				{{key: "name", str: "value"}, {key: "type", str: "string"}},
			}}},
		},
	},
	"config|get": {
		history: [][2]string{
			{"7.0.0", "Added the ability to pass multiple pattern parameters in one call"},
		},
		args: [][]docNode{
			{{key: "name", str: "parameter"}, {key: "type", str: "block"}, {key: "flags", flags: []string{"multiple"}}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "parameter"}, {key: "type", str: "string"}},
			}}},
		},
	},
	"client|list": {
		history: [][2]string{
			{"2.8.12", "Added unique client `id` field."},
			{"5.0.0", "Added optional `TYPE` filter."},
			{"6.0.0", "Added `user` field."},
			{"6.2.0", "Added `argv-mem`, `tot-mem`, `laddr` and `redir` fields and the optional `ID` filter."},
			{"7.0.0", "Added `resp`, `multi-mem`, `rbs` and `rbp` fields."},
			{"7.0.3", "Added `ssub` field."},
		},
		args: [][]docNode{
			{{key: "name", str: "normal_master_replica_pubsub"}, {key: "type", str: "oneof"}, {key: "token", str: "TYPE"}, {key: "since", str: "5.0.0"}, {key: "flags", flags: []string{"optional"}}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "normal"}, {key: "type", str: "pure-token"}, {key: "token", str: "NORMAL"}},
				{{key: "name", str: "master"}, {key: "type", str: "pure-token"}, {key: "token", str: "MASTER"}},
				{{key: "name", str: "replica"}, {key: "type", str: "pure-token"}, {key: "token", str: "REPLICA"}},
				{{key: "name", str: "pubsub"}, {key: "type", str: "pure-token"}, {key: "token", str: "PUBSUB"}},
			}}},
			{{key: "name", str: "id"}, {key: "type", str: "block"}, {key: "token", str: "ID"}, {key: "since", str: "6.2.0"}, {key: "flags", flags: []string{"optional"}}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "client-id"}, {key: "type", str: "integer"}, {key: "flags", flags: []string{"multiple"}}},
			}}},
		},
	},
	"client|kill": {
		history: [][2]string{
			{"2.8.12", "Added new filter format."},
			{"2.8.12", "`ID` option."},
			{"3.2.0", "Added `master` type in for `TYPE` option."},
			{"5.0.0", "Replaced `slave` `TYPE` with `replica`. `slave` still supported for backward compatibility."},
			{"6.2.0", "`LADDR` option."},
		},
		args: [][]docNode{
			{{key: "name", str: "filter"}, {key: "type", str: "oneof"}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "ip:port"}, {key: "type", str: "string"}, {key: "deprecated_since", str: "2.8.12"}},
				{{key: "name", str: "new-format"}, {key: "type", str: "oneof"}, {key: "flags", flags: []string{"multiple"}}, {key: "arguments", args: [][]docNode{
					{{key: "name", str: "client-id"}, {key: "type", str: "integer"}, {key: "token", str: "ID"}, {key: "since", str: "2.8.12"}, {key: "flags", flags: []string{"optional"}}},
					{{key: "name", str: "normal_master_slave_pubsub"}, {key: "type", str: "oneof"}, {key: "token", str: "TYPE"}, {key: "since", str: "2.8.12"}, {key: "flags", flags: []string{"optional"}}, {key: "arguments", args: [][]docNode{
						{{key: "name", str: "normal"}, {key: "type", str: "pure-token"}, {key: "token", str: "NORMAL"}},
						{{key: "name", str: "master"}, {key: "type", str: "pure-token"}, {key: "token", str: "MASTER"}, {key: "since", str: "3.2.0"}},
						{{key: "name", str: "slave"}, {key: "type", str: "pure-token"}, {key: "token", str: "SLAVE"}},
						{{key: "name", str: "replica"}, {key: "type", str: "pure-token"}, {key: "token", str: "REPLICA"}, {key: "since", str: "5.0.0"}},
						{{key: "name", str: "pubsub"}, {key: "type", str: "pure-token"}, {key: "token", str: "PUBSUB"}},
					}}},
					{{key: "name", str: "username"}, {key: "type", str: "string"}, {key: "token", str: "USER"}, {key: "flags", flags: []string{"optional"}}},
					{{key: "name", str: "ip:port"}, {key: "type", str: "string"}, {key: "token", str: "ADDR"}, {key: "flags", flags: []string{"optional"}}},
					{{key: "name", str: "ip:port"}, {key: "type", str: "string"}, {key: "token", str: "LADDR"}, {key: "since", str: "6.2.0"}, {key: "flags", flags: []string{"optional"}}},
					{{key: "name", str: "yes/no"}, {key: "type", str: "string"}, {key: "token", str: "SKIPME"}, {key: "flags", flags: []string{"optional"}}},
				}}},
			}}},
		},
	},
	"client|no-evict": {
		args: [][]docNode{
			{{key: "name", str: "enabled"}, {key: "type", str: "oneof"}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "on"}, {key: "type", str: "pure-token"}, {key: "token", str: "ON"}},
				{{key: "name", str: "off"}, {key: "type", str: "pure-token"}, {key: "token", str: "OFF"}},
			}}},
		},
	},
	"client|unblock": {
		args: [][]docNode{
			{{key: "name", str: "client-id"}, {key: "type", str: "integer"}},
			{{key: "name", str: "timeout_error"}, {key: "type", str: "oneof"}, {key: "flags", flags: []string{"optional"}}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "timeout"}, {key: "type", str: "pure-token"}, {key: "token", str: "TIMEOUT"}},
				{{key: "name", str: "error"}, {key: "type", str: "pure-token"}, {key: "token", str: "ERROR"}},
			}}},
		},
	},
	"client|reply": {
		args: [][]docNode{
			{{key: "name", str: "on_off_skip"}, {key: "type", str: "oneof"}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "on"}, {key: "type", str: "pure-token"}, {key: "token", str: "ON"}},
				{{key: "name", str: "off"}, {key: "type", str: "pure-token"}, {key: "token", str: "OFF"}},
				{{key: "name", str: "skip"}, {key: "type", str: "pure-token"}, {key: "token", str: "SKIP"}},
			}}},
		},
	},
	"latency|reset": {
		args: [][]docNode{
			{{key: "name", str: "event"}, {key: "type", str: "string"}, {key: "flags", flags: []string{"optional", "multiple"}}},
		},
	},
	"xadd": {
		history: [][2]string{
			{"6.2.0", "Added the `NOMKSTREAM` option, `MINID` trimming strategy and the `LIMIT` option."},
			{"7.0.0", "Added support for the `<ms>-*` explicit ID form."},
		},
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "nomkstream"}, {key: "type", str: "pure-token"}, {key: "token", str: "NOMKSTREAM"}, {key: "since", str: "6.2.0"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "trim"}, {key: "type", str: "block"}, {key: "flags", flags: []string{"optional"}}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "strategy"}, {key: "type", str: "oneof"}, {key: "arguments", args: [][]docNode{
					{{key: "name", str: "maxlen"}, {key: "type", str: "pure-token"}, {key: "token", str: "MAXLEN"}},
					{{key: "name", str: "minid"}, {key: "type", str: "pure-token"}, {key: "token", str: "MINID"}, {key: "since", str: "6.2.0"}},
				}}},
				{{key: "name", str: "operator"}, {key: "type", str: "oneof"}, {key: "flags", flags: []string{"optional"}}, {key: "arguments", args: [][]docNode{
					{{key: "name", str: "equal"}, {key: "type", str: "pure-token"}, {key: "token", str: "="}},
					{{key: "name", str: "approximately"}, {key: "type", str: "pure-token"}, {key: "token", str: "~"}},
				}}},
				{{key: "name", str: "threshold"}, {key: "type", str: "string"}},
				{{key: "name", str: "count"}, {key: "type", str: "integer"}, {key: "token", str: "LIMIT"}, {key: "since", str: "6.2.0"}, {key: "flags", flags: []string{"optional"}}},
			}}},
			{{key: "name", str: "id_or_auto"}, {key: "type", str: "oneof"}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "auto_id"}, {key: "type", str: "pure-token"}, {key: "token", str: "*"}},
				{{key: "name", str: "id"}, {key: "type", str: "string"}},
			}}},
			{{key: "name", str: "field_value"}, {key: "type", str: "block"}, {key: "flags", flags: []string{"multiple"}}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "field"}, {key: "type", str: "string"}},
				{{key: "name", str: "value"}, {key: "type", str: "string"}},
			}}},
		},
	},
	"xtrim": {
		history: [][2]string{
			{"6.2.0", "Added the `MINID` trimming strategy and the `LIMIT` option."},
		},
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "trim"}, {key: "type", str: "block"}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "strategy"}, {key: "type", str: "oneof"}, {key: "arguments", args: [][]docNode{
					{{key: "name", str: "maxlen"}, {key: "type", str: "pure-token"}, {key: "token", str: "MAXLEN"}},
					{{key: "name", str: "minid"}, {key: "type", str: "pure-token"}, {key: "token", str: "MINID"}, {key: "since", str: "6.2.0"}},
				}}},
				{{key: "name", str: "operator"}, {key: "type", str: "oneof"}, {key: "flags", flags: []string{"optional"}}, {key: "arguments", args: [][]docNode{
					{{key: "name", str: "equal"}, {key: "type", str: "pure-token"}, {key: "token", str: "="}},
					{{key: "name", str: "approximately"}, {key: "type", str: "pure-token"}, {key: "token", str: "~"}},
				}}},
				{{key: "name", str: "threshold"}, {key: "type", str: "string"}},
				{{key: "name", str: "count"}, {key: "type", str: "integer"}, {key: "token", str: "LIMIT"}, {key: "since", str: "6.2.0"}, {key: "flags", flags: []string{"optional"}}},
			}}},
		},
	},
	"xdel": {
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "id"}, {key: "type", str: "string"}, {key: "flags", flags: []string{"multiple"}}},
		},
	},
	"xsetid": {
		history: [][2]string{
			{"7.0.0", "Added the `entries_added` and `max_deleted_entry_id` arguments."},
		},
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "last-id"}, {key: "type", str: "string"}},
			{{key: "name", str: "entries_added"}, {key: "type", str: "integer"}, {key: "token", str: "ENTRIESADDED"}, {key: "since", str: "7.0.0"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "max_deleted_entry_id"}, {key: "type", str: "string"}, {key: "token", str: "MAXDELETEDID"}, {key: "since", str: "7.0.0"}, {key: "flags", flags: []string{"optional"}}},
		},
	},
	"xlen": {
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
		},
	},
	"xrange": {
		history: [][2]string{
			{"6.2.0", "Added exclusive ranges."},
		},
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "start"}, {key: "type", str: "string"}},
			{{key: "name", str: "end"}, {key: "type", str: "string"}},
			{{key: "name", str: "count"}, {key: "type", str: "integer"}, {key: "token", str: "COUNT"}, {key: "flags", flags: []string{"optional"}}},
		},
	},
	"xrevrange": {
		history: [][2]string{
			{"6.2.0", "Added exclusive ranges."},
		},
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "end"}, {key: "type", str: "string"}},
			{{key: "name", str: "start"}, {key: "type", str: "string"}},
			{{key: "name", str: "count"}, {key: "type", str: "integer"}, {key: "token", str: "COUNT"}, {key: "flags", flags: []string{"optional"}}},
		},
	},
	"xread": {
		args: [][]docNode{
			{{key: "name", str: "count"}, {key: "type", str: "integer"}, {key: "token", str: "COUNT"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "milliseconds"}, {key: "type", str: "integer"}, {key: "token", str: "BLOCK"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "streams"}, {key: "type", str: "block"}, {key: "token", str: "STREAMS"}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}, {key: "flags", flags: []string{"multiple"}}},
				{{key: "name", str: "id"}, {key: "type", str: "string"}, {key: "flags", flags: []string{"multiple"}}},
			}}},
		},
	},
	"xgroup|create": {
		history: [][2]string{
			{"7.0.0", "Added the `entries_read` named argument."},
		},
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "groupname"}, {key: "type", str: "string"}},
			{{key: "name", str: "id"}, {key: "type", str: "oneof"}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "id"}, {key: "type", str: "string"}},
				{{key: "name", str: "new_id"}, {key: "type", str: "pure-token"}, {key: "token", str: "$"}},
			}}},
			{{key: "name", str: "mkstream"}, {key: "type", str: "pure-token"}, {key: "token", str: "MKSTREAM"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "entries_read"}, {key: "type", str: "integer"}, {key: "token", str: "ENTRIESREAD"}, {key: "flags", flags: []string{"optional"}}},
		},
	},
	"xgroup|setid": {
		history: [][2]string{
			{"7.0.0", "Added the optional `entries_read` argument."},
		},
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "groupname"}, {key: "type", str: "string"}},
			{{key: "name", str: "id"}, {key: "type", str: "oneof"}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "id"}, {key: "type", str: "string"}},
				{{key: "name", str: "new_id"}, {key: "type", str: "pure-token"}, {key: "token", str: "$"}},
			}}},
			{{key: "name", str: "entries_read"}, {key: "type", str: "integer"}, {key: "token", str: "ENTRIESREAD"}, {key: "flags", flags: []string{"optional"}}},
		},
	},
	"xgroup|destroy": {
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "groupname"}, {key: "type", str: "string"}},
		},
	},
	"xgroup|createconsumer": {
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "groupname"}, {key: "type", str: "string"}},
			{{key: "name", str: "consumername"}, {key: "type", str: "string"}},
		},
	},
	"xgroup|delconsumer": {
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "groupname"}, {key: "type", str: "string"}},
			{{key: "name", str: "consumername"}, {key: "type", str: "string"}},
		},
	},
	"xreadgroup": {
		args: [][]docNode{
			{{key: "name", str: "group_consumer"}, {key: "type", str: "block"}, {key: "token", str: "GROUP"}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "group"}, {key: "type", str: "string"}},
				{{key: "name", str: "consumer"}, {key: "type", str: "string"}},
			}}},
			{{key: "name", str: "count"}, {key: "type", str: "integer"}, {key: "token", str: "COUNT"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "milliseconds"}, {key: "type", str: "integer"}, {key: "token", str: "BLOCK"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "noack"}, {key: "type", str: "pure-token"}, {key: "token", str: "NOACK"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "streams"}, {key: "type", str: "block"}, {key: "token", str: "STREAMS"}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}, {key: "flags", flags: []string{"multiple"}}},
				{{key: "name", str: "id"}, {key: "type", str: "string"}, {key: "flags", flags: []string{"multiple"}}},
			}}},
		},
	},
	"xack": {
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "group"}, {key: "type", str: "string"}},
			{{key: "name", str: "id"}, {key: "type", str: "string"}, {key: "flags", flags: []string{"multiple"}}},
		},
	},
	"xpending": {
		history: [][2]string{
			{"6.2.0", "Added the `IDLE` option and exclusive range intervals."},
		},
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "group"}, {key: "type", str: "string"}},
			{{key: "name", str: "filters"}, {key: "type", str: "block"}, {key: "flags", flags: []string{"optional"}}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "min-idle-time"}, {key: "type", str: "integer"}, {key: "token", str: "IDLE"}, {key: "since", str: "6.2.0"}, {key: "flags", flags: []string{"optional"}}},
				{{key: "name", str: "start"}, {key: "type", str: "string"}},
				{{key: "name", str: "end"}, {key: "type", str: "string"}},
				{{key: "name", str: "count"}, {key: "type", str: "integer"}},
				{{key: "name", str: "consumer"}, {key: "type", str: "string"}, {key: "flags", flags: []string{"optional"}}},
			}}},
		},
	},
	"xclaim": {
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "group"}, {key: "type", str: "string"}},
			{{key: "name", str: "consumer"}, {key: "type", str: "string"}},
			{{key: "name", str: "min-idle-time"}, {key: "type", str: "string"}},
			{{key: "name", str: "id"}, {key: "type", str: "string"}, {key: "flags", flags: []string{"multiple"}}},
			{{key: "name", str: "ms"}, {key: "type", str: "integer"}, {key: "token", str: "IDLE"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "unix-time-milliseconds"}, {key: "type", str: "unix-time"}, {key: "token", str: "TIME"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "count"}, {key: "type", str: "integer"}, {key: "token", str: "RETRYCOUNT"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "force"}, {key: "type", str: "pure-token"}, {key: "token", str: "FORCE"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "justid"}, {key: "type", str: "pure-token"}, {key: "token", str: "JUSTID"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "id"}, {key: "type", str: "string"}, {key: "token", str: "LASTID"}, {key: "flags", flags: []string{"optional"}}},
		},
	},
	"xautoclaim": {
		history: [][2]string{
			{"7.0.0", "Added an element to the reply array, containing deleted entries the command cleared from the PEL"},
		},
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "group"}, {key: "type", str: "string"}},
			{{key: "name", str: "consumer"}, {key: "type", str: "string"}},
			{{key: "name", str: "min-idle-time"}, {key: "type", str: "string"}},
			{{key: "name", str: "start"}, {key: "type", str: "string"}},
			{{key: "name", str: "count"}, {key: "type", str: "integer"}, {key: "token", str: "COUNT"}, {key: "flags", flags: []string{"optional"}}},
			{{key: "name", str: "justid"}, {key: "type", str: "pure-token"}, {key: "token", str: "JUSTID"}, {key: "flags", flags: []string{"optional"}}},
		},
	},
	"xinfo|stream": {
		history: [][2]string{
			{"6.0.0", "Added the `FULL` modifier."},
			{"7.0.0", "Added the `max-deleted-entry-id`, `entries-added`, `recorded-first-entry-id`, `entries-read` and `lag` fields"},
		},
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "full"}, {key: "type", str: "block"}, {key: "token", str: "FULL"}, {key: "flags", flags: []string{"optional"}}, {key: "arguments", args: [][]docNode{
				{{key: "name", str: "count"}, {key: "type", str: "integer"}, {key: "token", str: "COUNT"}, {key: "flags", flags: []string{"optional"}}},
			}}},
		},
	},
	"xinfo|groups": {
		history: [][2]string{
			{"7.0.0", "Added the `entries-read` and `lag` fields"},
		},
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
		},
	},
	"xinfo|consumers": {
		args: [][]docNode{
			{{key: "name", str: "key"}, {key: "type", str: "key"}, {key: "key_spec_index", num: 0, isNum: true}},
			{{key: "name", str: "groupname"}, {key: "type", str: "string"}},
		},
	},
}
