package server

import (
	"context"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// newerThan70 are the commands served that Redis 7.0 lacks; COMMAND
// describes them with the values of Redis 8 (see commandSpecs), and
// XGROUPCFG, xstream's own, with its own.
var newerThan70 = map[string]bool{"client|setinfo": true, "xackdel": true, "xdelex": true, "xnack": true, "xgroupcfg": true, "xcfgset": true}

// servedNames is every command and subcommand served, by full name,
// sorted.
func servedNames() []string {
	var names []string
	for n, cmd := range commands {
		names = append(names, n)
		for _, sub := range cmd.subs {
			names = append(names, sub.name)
		}
	}
	slices.Sort(names)
	return names
}

// known70 reports whether Redis 7.0 has the command and this server
// serves it.
func known70(name string) bool { return commandByName(name) != nil && !newerThan70[name] }

// keepKnownSubs keeps, of the subcommands of each COMMAND INFO entry in
// r, those known70, in name order.
func keepKnownSubs(r *reply) {
	for _, e := range r.kids {
		if len(e.kids) != 10 {
			continue
		}
		subs := e.kids[9]
		subs.kids = slices.DeleteFunc(subs.kids, func(s *reply) bool { return !known70(s.kids[0].s) })
		sort.Slice(subs.kids, func(i, j int) bool { return subs.kids[i].kids[0].s < subs.kids[j].kids[0].s })
	}
}

// keepKnownDocs drops from a COMMAND DOCS reply the subcommands not
// known70, in name order.
func keepKnownDocs(r *reply) {
	var fix func(doc *reply)
	fix = func(doc *reply) {
		mapFields(doc, nil, func(n string, v *reply) {
			if n != "subcommands" {
				return
			}
			var pairs [][2]*reply
			for i := 0; i+1 < len(v.kids); i += 2 {
				if known70(v.kids[i].s) {
					fix(v.kids[i+1])
					pairs = append(pairs, [2]*reply{v.kids[i], v.kids[i+1]})
				}
			}
			sort.Slice(pairs, func(i, j int) bool { return pairs[i][0].s < pairs[j][0].s })
			v.kids = v.kids[:0]
			for _, p := range pairs {
				v.kids = append(v.kids, p[0], p[1])
			}
		})
	}
	mapFields(r, nil, func(_ string, doc *reply) { fix(doc) })
}

// compare fails the test unless the replies are equal.
func compare(t *testing.T, args []string, want, got *reply) {
	t.Helper()
	if !equalReplies(want, got) {
		t.Errorf("%q:\n  redis:   %v\n  xstream: %v", args, want, got)
	}
}

// Every command served has Redis 7.0.15's COMMAND INFO entry and COMMAND
// DOCS entry (with arguments and history), subcommands included, for
// the subcommands both serve.
func TestDiffCommandInfo(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		for _, name := range servedNames() {
			if newerThan70[name] {
				continue
			}
			for _, sub := range []string{"INFO", "DOCS"} {
				args := []string{"COMMAND", sub, name}
				want, got := p.real.do(t, args...), p.xs.do(t, args...)
				if sub == "INFO" {
					keepKnownSubs(want)
					keepKnownSubs(got)
				} else {
					keepKnownDocs(want)
					keepKnownDocs(got)
				}
				compare(t, args, want, got)
			}
		}
		p.do("COMMAND", "INFO", "xadd", "nosuch", "XGROUP|CREATE", "xadd|", "xgroup|", "xgroup|create|x", "", "|")
		args := []string{"COMMAND", "DOCS", "XLEN", "nosuch", "xinfo|HELP", "xadd|", "xlen"}
		want := p.real.do(t, args...)
		keepKnownDocs(want)
		compare(t, args, want, p.xs.do(t, args...))
		p.do("COMMAND", "DOCS", "nosuch")
	})
}

// The commands newer than Redis 7.0 are described as Redis 8 describes
// them, which is, but for the name, arity, key flags and tips, how Redis
// 7.0 describes a command like them.
func TestDiffCommandInfoNewer(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		for _, tc := range []struct {
			name, like string
			arity      int64
			keyFlags   []string // added to like's
			tips       []string // replacing like's
		}{
			{name: "xackdel", like: "xack", arity: -6, keyFlags: []string{"delete"}},
			{name: "xnack", like: "xack", arity: -7},
			{name: "xdelex", like: "xdel", arity: -5},
			{name: "client|setinfo", like: "client|setname", arity: 4, tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"}},
		} {
			want := p.real.do(t, "COMMAND", "INFO", tc.like)
			e := want.kids[0]
			e.kids[0].s, e.kids[1].n = tc.name, tc.arity
			for _, f := range tc.keyFlags {
				mapFields(e.kids[8].kids[0], nil, func(n string, v *reply) {
					if n == "flags" {
						v.kids = append(v.kids, &reply{kind: '+', s: f})
					}
				})
			}
			for _, tip := range tc.tips {
				e.kids[7].kids = append(e.kids[7].kids, &reply{kind: '$', s: tip})
			}
			compare(t, []string{"COMMAND", "INFO", tc.name}, want, p.xs.do(t, "COMMAND", "INFO", tc.name))

			docs := p.xs.do(t, "COMMAND", "DOCS", tc.name)
			var keys []string
			mapFields(docs.kids[1], nil, func(n string, v *reply) { keys = append(keys, n+"="+v.s) })
			if len(keys) != 5 || !strings.HasPrefix(keys[1], "since=7.2.") && !strings.HasPrefix(keys[1], "since=8.") || keys[4] != "arguments=" {
				t.Errorf("COMMAND DOCS %s: %v", tc.name, docs)
			}
		}
	})
}

// COMMAND, COMMAND COUNT and COMMAND LIST tell the commands served; COMMAND
// LIST filters them as Redis does, and COMMAND HELP is Redis's but for
// the subcommands not served.
func TestDiffCommandList(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		names := func(r *reply) []string {
			var out []string
			for _, k := range r.kids {
				if k.kind == '$' {
					out = append(out, k.s)
				} else {
					out = append(out, k.kids[0].s)
				}
			}
			slices.Sort(out)
			return out
		}
		served := servedNames()
		if got := names(p.xs.do(t, "COMMAND", "LIST")); !slices.Equal(got, served) {
			t.Errorf("COMMAND LIST: %v, serving %v", got, served)
		}
		var top []string
		for _, n := range served {
			if !strings.Contains(n, "|") {
				top = append(top, n)
			}
		}
		if got := names(p.xs.do(t, "COMMAND")); !slices.Equal(got, top) {
			t.Errorf("COMMAND: %v, serving %v", got, top)
		}
		if got := names(p.xs.do(t, "COMMAND", "INFO")); !slices.Equal(got, top) {
			t.Errorf("COMMAND INFO: %v, serving %v", got, top)
		}
		if r := p.xs.do(t, "COMMAND", "COUNT"); r.n != int64(len(top)) {
			t.Errorf("COMMAND COUNT: %v, serving %d", r, len(top))
		}
		docs := p.xs.do(t, "COMMAND", "DOCS")
		if docs.kind != "*%"[p.proto-2] || len(docs.kids) != 2*len(top) {
			t.Errorf("COMMAND DOCS: %d elements, serving %d commands", len(docs.kids), len(top))
		}
		for _, filter := range [][]string{
			{},
			{"FILTERBY", "ACLCAT", "stream"},
			{"filterby", "aclcat", "FAST"},
			{"FILTERBY", "ACLCAT", "@stream"},
			{"FILTERBY", "ACLCAT", "nosuch"},
			{"FILTERBY", "PATTERN", "X*"},
			{"FILTERBY", "PATTERN", "xgroup|*"},
			{"FILTERBY", "PATTERN", "*|[a-d]*"},
			{"FILTERBY", "MODULE", "stream"},
		} {
			args := append([]string{"COMMAND", "LIST"}, filter...)
			want := slices.DeleteFunc(names(p.real.do(t, args...)), func(n string) bool { return !known70(n) })
			got := slices.DeleteFunc(names(p.xs.do(t, args...)), func(n string) bool { return newerThan70[n] })
			if !slices.Equal(want, got) {
				t.Errorf("%q:\n  redis:   %v\n  xstream: %v", args, want, got)
			}
		}
		p.do("COMMAND", "LIST", "FILTERBY", "FOO", "x")
		p.do("COMMAND", "LIST", "FILTERBY", "PATTERN")
		p.do("COMMAND", "LIST", "FILTERBY", "PATTERN", "x", "y")
		p.do("COMMAND", "LIST", "x")
		p.do("COMMAND", "COUNT", "x")
		p.do("COMMAND", "FOO")

		want := p.real.do(t, "COMMAND", "HELP")
		skip := false
		want.kids = slices.DeleteFunc(want.kids, func(l *reply) bool {
			if !strings.HasPrefix(l.s, " ") {
				skip = strings.HasPrefix(l.s, "GETKEYS")
			}
			return skip
		})
		compare(t, []string{"COMMAND", "HELP"}, want, p.xs.do(t, "COMMAND", "HELP"))
	})
}

// go-redis reads COMMAND (its cluster client routes by it): it sees the
// read-only commands, the key positions and the ACL categories.
func TestCommandWithGoRedis(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: RunT(t).Addr()})
	defer rdb.Close()
	infos, err := rdb.Command(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != len(commands) {
		t.Fatalf("%d commands, serving %d", len(infos), len(commands))
	}
	for _, tc := range []struct {
		name     string
		readOnly bool
		first    int8
		acl      string
	}{
		{"xrange", true, 1, "@read"},
		{"xadd", false, 1, "@write"},
		{"xread", true, 0, "@blocking"},
		{"xreadgroup", false, 0, "@blocking"},
		{"xgroup", false, 0, "@slow"},
		{"xackdel", false, 1, "@write"},
	} {
		info := infos[tc.name]
		if info == nil || info.ReadOnly != tc.readOnly || info.FirstKeyPos != tc.first || !slices.Contains(info.ACLFlags, tc.acl) {
			t.Errorf("%s: %+v", tc.name, info)
		}
	}
}

// The command a connection looked up last is taken again for the same
// spelling only: another name of the same length, another case, a
// subcommand and an unknown name each find their own.
func TestLookupLast(t *testing.T) {
	srv := RunT(t)
	c := dialWire(t, srv.Addr())
	for _, step := range []struct {
		want string
		args []string
	}{
		{":0\r\n", []string{"XLEN", "s"}},
		{":0\r\n", []string{"XLEN", "s"}},
		{"+PONG\r\n", []string{"PING"}},
		{":0\r\n", []string{"xlen", "s"}},
		{":0\r\n", []string{"XlEn", "s"}},
		{"-ERR wrong number of arguments for 'xlen' command\r\n", []string{"XLEN"}},
		{"$4\r\nPING\r\n", []string{"ECHO", "PING"}},
		{"+PONG\r\n", []string{"PING"}},
		{"-ERR unknown command 'XLEM', with args beginning with: 's' \r\n", []string{"XLEM", "s"}},
		{"-ERR unknown subcommand 'NOPE'. Try CLIENT HELP.\r\n", []string{"CLIENT", "NOPE"}},
	} {
		expectWire(t, c, step.want, step.args...)
	}
	if got := string(c.do(t, "CLIENT", "ID")); got[0] != ':' {
		t.Fatalf("CLIENT ID after CLIENT NOPE: %q", got)
	}
}

// Every command and subcommand served that takes arguments has them in
// COMMAND DOCS, where redis-cli takes its hints from: those of
// Redis 7.0 as it gives them (TestDiffCommandInfo), the newer ones and
// XGROUPCFG from command_docs_newer.go.
func TestCommandDocsArguments(t *testing.T) {
	c := newClient(t, RunT(t).Addr())
	for _, name := range servedNames() {
		cmd := commandByName(name)
		least := 1 // the arguments of a command start after its name
		if strings.Contains(name, "|") {
			least = 2
		}
		if cmd.subs != nil || cmd.arity == least || cmd.arity == -least {
			continue // a container, or no argument
		}
		docs := c.do(t, "COMMAND", "DOCS", name)
		found := false
		if len(docs.kids) == 2 {
			mapFields(docs.kids[1], nil, func(n string, v *reply) { found = found || n == "arguments" && len(v.kids) > 0 })
		}
		if !found {
			t.Errorf("COMMAND DOCS %s (arity %d) has no arguments: %v", name, cmd.arity, docs)
		}
	}
}
