package server

import (
	"slices"
	"strings"
)

// COMMAND and its subcommands, from the command table and commandSpecs.
// Commands come in name order (Redis: hash order), each container's
// subcommands after it in COMMAND LIST.

var commandHelp = []string{
	"COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"(no subcommand)",
	"    Return details about all Redis commands.",
	"COUNT",
	"    Return the total number of commands in this Redis server.",
	"LIST",
	"    Return a list of all commands in this Redis server.",
	"INFO [<command-name> ...]",
	"    Return details about multiple Redis commands.",
	"    If no command names are given, documentation details for all",
	"    commands are returned.",
	"DOCS [<command-name> ...]",
	"    Return documentation details about multiple Redis commands.",
	"    If no command names are given, documentation details for all",
	"    commands are returned.",
	"HELP",
	"    Prints this help.",
}

func init() {
	register("command", -1, func(c *conn, args [][]byte) { c.commandInfos() })
	register("command|count", 2, func(c *conn, args [][]byte) { c.int(int64(len(commands))) })
	register("command|info", -2, func(c *conn, args [][]byte) {
		if len(args) == 2 {
			c.commandInfos()
			return
		}
		c.array(len(args) - 2)
		for _, a := range args[2:] {
			if cmd := commandByName(string(a)); cmd != nil {
				c.commandInfo(cmd)
			} else {
				c.null()
			}
		}
	})
	register("command|docs", -2, func(c *conn, args [][]byte) {
		var found []*command
		if len(args) == 2 {
			for _, n := range sortedKeys(commands) {
				found = append(found, commands[n])
			}
		}
		for _, a := range args[2:] {
			if cmd := commandByName(string(a)); cmd != nil {
				found = append(found, cmd)
			}
		}
		c.mapLen(len(found))
		for _, cmd := range found {
			c.bulk(cmd.name)
			c.commandDocs(cmd)
		}
	})
	register("command|list", -2, commandList)
	register("command|help", 2, func(c *conn, args [][]byte) { c.help(commandHelp) })
}

// commandByName finds a command by its name, or a subcommand by
// "container|sub", in any case, as Redis's lookupCommandBySds. O(1).
func commandByName(name string) *command {
	name = strings.ToLower(name)
	base, sub, isSub := strings.Cut(name, "|")
	cmd := commands[base]
	if !isSub || cmd == nil {
		return cmd
	}
	return cmd.subs[sub] // nil for a command without subcommands, or "a|b|c"
}

func sortedKeys(m map[string]*command) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// commandList answers COMMAND LIST [FILTERBY MODULE name | ACLCAT category
// | PATTERN pattern]: the names of the commands and subcommands that pass
// the filter. No module is loaded, so MODULE lists nothing.
func commandList(c *conn, args [][]byte) {
	keep := func(*command) bool { return true }
	switch {
	case len(args) == 2:
	case len(args) == 5 && is(args[2], "filterby"):
		arg := strings.ToLower(string(args[4]))
		switch {
		case is(args[3], "module"):
			keep = func(*command) bool { return false }
		case is(args[3], "aclcat"):
			keep = func(cmd *command) bool { return slices.Contains(strings.Fields(cmd.spec.acl), "@"+arg) }
		case is(args[3], "pattern"):
			keep = func(cmd *command) bool { return globMatch(arg, cmd.name) }
		default:
			c.err(errSyntax)
			return
		}
	default:
		c.err(errSyntax)
		return
	}
	var names []string
	for _, n := range sortedKeys(commands) {
		cmd := commands[n]
		if keep(cmd) {
			names = append(names, n)
		}
		for _, s := range sortedKeys(cmd.subs) {
			if keep(cmd.subs[s]) {
				names = append(names, cmd.subs[s].name)
			}
		}
	}
	c.array(len(names))
	for _, n := range names {
		c.bulk(n)
	}
}

// commandInfos writes the COMMAND INFO entries of all the commands.
func (c *conn) commandInfos() {
	names := sortedKeys(commands)
	c.array(len(names))
	for _, n := range names {
		c.commandInfo(commands[n])
	}
}

// commandInfo writes a command's COMMAND INFO entry in Redis 7.0's shape:
// name, arity, flags, first key, last key, key step, ACL categories, tips,
// key specs, subcommands.
func (c *conn) commandInfo(cmd *command) {
	s := cmd.spec
	c.array(10)
	c.bulk(cmd.name)
	c.int(int64(cmd.arity))
	c.wordSet(s.flags, c.simple)
	for _, k := range s.keys {
		c.int(int64(k))
	}
	c.wordSet(s.acl, c.simple)
	c.wordSet(s.tips, c.bulk)
	c.setLen(len(s.specs))
	for _, k := range s.specs {
		c.keySpec(k)
	}
	if cmd.subs == nil {
		c.setLen(0)
		return
	}
	c.array(len(cmd.subs)) // Redis: an array, or an empty set
	for _, n := range sortedKeys(cmd.subs) {
		c.commandInfo(cmd.subs[n])
	}
}

// wordSet writes the space-separated words of s as a set, each with put.
func (c *conn) wordSet(s string, put func(string)) {
	words := strings.Fields(s)
	c.setLen(len(words))
	for _, w := range words {
		put(w)
	}
}

func (c *conn) keySpec(k keySpec) {
	n := 3
	if k.notes != "" {
		n++
	}
	c.mapLen(n)
	if k.notes != "" {
		c.bulk("notes")
		c.bulk(k.notes)
	}
	c.bulk("flags")
	c.wordSet(k.flags, c.simple)
	c.bulk("begin_search")
	c.mapLen(2)
	c.bulk("type")
	if k.keyword == "" {
		c.bulk("index")
		c.bulk("spec")
		c.mapLen(1)
		c.bulk("index")
		c.int(int64(k.index))
	} else {
		c.bulk("keyword")
		c.bulk("spec")
		c.mapLen(2)
		c.bulk("keyword")
		c.bulk(k.keyword)
		c.bulk("startfrom")
		c.int(int64(k.from))
	}
	c.bulk("find_keys")
	c.mapLen(2)
	c.bulk("type")
	c.bulk("range")
	c.bulk("spec")
	c.mapLen(3)
	c.bulk("lastkey")
	c.int(int64(k.lastkey))
	c.bulk("keystep")
	c.int(1)
	c.bulk("limit")
	c.int(int64(k.limit))
}

// commandDocs writes a command's COMMAND DOCS entry: its summary, version,
// group and complexity, its history and arguments (Redis 7.0's, see
// command_docs.go), and its subcommands'.
func (c *conn) commandDocs(cmd *command) {
	s := cmd.spec
	n := 4 + docFields(cmd.name)
	if cmd.subs != nil {
		n++
	}
	if s.complexity == "" { // Redis leaves it out (MONITOR)
		n--
	}
	c.mapLen(n)
	for _, kv := range [...][2]string{{"summary", s.summary}, {"since", s.since}, {"group", s.group}, {"complexity", s.complexity}} {
		if kv[1] == "" && kv[0] == "complexity" {
			continue
		}
		c.bulk(kv[0])
		c.bulk(kv[1])
	}
	c.writeDocs(cmd.name)
	if cmd.subs == nil {
		return
	}
	c.bulk("subcommands")
	c.mapLen(len(cmd.subs))
	for _, n := range sortedKeys(cmd.subs) {
		c.bulk(cmd.subs[n].name)
		c.commandDocs(cmd.subs[n])
	}
}
