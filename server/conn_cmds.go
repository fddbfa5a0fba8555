package server

import (
	"crypto/subtle"
	"fmt"
	"sort"
	"strings"
)

// redisVersion is the Redis version the server reports (HELLO, INFO):
// the one whose replies it matches.
const redisVersion = "7.0.15"

// Commands about the connection.

func init() {
	register("ping", -1, func(c *conn, args [][]byte) {
		switch len(args) {
		case 1:
			c.simple("PONG")
		case 2:
			c.bulkBytes(args[1])
		default:
			c.err("ERR wrong number of arguments for 'ping' command")
		}
	})
	register("echo", 2, func(c *conn, args [][]byte) { c.bulkBytes(args[1]) })
	register("quit", -1, func(c *conn, args [][]byte) {
		c.ok()
		c.quit = true
	}).noAuth = true
	register("auth", -2, auth).noAuth = true
	register("hello", -1, hello).noAuth = true
	register("client|id", 2, func(c *conn, args [][]byte) { c.int(c.clientID) })
	register("client|getname", 2, func(c *conn, args [][]byte) {
		if c.name == "" {
			c.null()
		} else {
			c.bulk(c.name)
		}
	})
	register("client|setname", 3, func(c *conn, args [][]byte) {
		if !validClientName(args[2]) {
			c.err("ERR Client names cannot contain spaces, newlines or special characters.")
			return
		}
		c.name = string(args[2])
		c.ok()
	})
	register("client|setinfo", 4, func(c *conn, args [][]byte) {
		if !is(args[2], "lib-name") && !is(args[2], "lib-ver") {
			c.err(fmt.Sprintf("ERR Unrecognized option '%s'", args[2]))
			return
		}
		c.ok()
	})
	register("command", -1, commandCmd)
	register("command|count", 2, func(c *conn, args [][]byte) { c.int(int64(len(commands))) })
	register("command|info", -2, func(c *conn, args [][]byte) {
		c.array(len(args) - 2)
		for _, a := range args[2:] {
			if cmd := commands[strings.ToLower(string(a))]; cmd != nil {
				c.commandInfo(cmd)
			} else {
				c.null()
			}
		}
	})
	register("command|docs", -2, func(c *conn, args [][]byte) { c.mapLen(0) })
	register("command|list", -2, func(c *conn, args [][]byte) {
		names := commandNames()
		c.array(len(names))
		for _, n := range names {
			c.bulk(n)
		}
	})
}

func validClientName(b []byte) bool {
	for _, ch := range b {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}

func (c *conn) checkPassword(user, pass string) bool {
	if user != "default" {
		return false
	}
	if c.srv.opts.Password == "" {
		return true
	}
	return subtle.ConstantTimeCompare([]byte(pass), []byte(c.srv.opts.Password)) == 1
}

func auth(c *conn, args [][]byte) {
	if len(args) > 3 {
		c.err(errSyntax)
		return
	}
	user, pass := "default", string(args[len(args)-1])
	if len(args) == 3 {
		user = string(args[1])
	} else if c.srv.opts.Password == "" {
		c.err("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
		return
	}
	if !c.checkPassword(user, pass) {
		c.err("WRONGPASS invalid username-password pair or user is disabled.")
		return
	}
	c.authed = true
	c.ok()
}

// hello answers HELLO, switching the connection to the protocol asked
// for (2 or 3) before the reply, which is a map in RESP3.
func hello(c *conn, args [][]byte) {
	ver := int64(0)
	if len(args) >= 2 {
		var ok bool
		ver, ok = parseLL(args[1])
		if !ok {
			c.err("ERR Protocol version is not an integer or out of range")
			return
		}
		if ver < 2 || ver > 3 {
			c.err("NOPROTO unsupported protocol version")
			return
		}
	}
	var user, pass, name []byte
	authGiven := false
	for i := 2; i < len(args); i++ {
		more := len(args) - 1 - i
		switch {
		case is(args[i], "auth") && more >= 2:
			user, pass, authGiven = args[i+1], args[i+2], true
			i += 2
		case is(args[i], "setname") && more >= 1:
			name = args[i+1]
			if !validClientName(name) {
				c.err("ERR Client names cannot contain spaces, newlines or special characters.")
				return
			}
			i++
		default:
			c.err(fmt.Sprintf("ERR Syntax error in HELLO option '%s'", args[i]))
			return
		}
	}
	if authGiven {
		if !c.checkPassword(string(user), string(pass)) {
			c.err("WRONGPASS invalid username-password pair or user is disabled.")
			return
		}
		c.authed = true
	}
	if !c.authed {
		c.err("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	if name != nil {
		c.name = string(name)
	}
	if ver != 0 {
		c.resp = int(ver)
	}
	c.mapLen(7)
	c.bulk("server")
	c.bulk("redis")
	c.bulk("version")
	c.bulk(redisVersion)
	c.bulk("proto")
	c.int(int64(c.resp))
	c.bulk("id")
	c.int(c.clientID)
	c.bulk("mode")
	c.bulk("standalone")
	c.bulk("role")
	c.bulk("master")
	c.bulk("modules")
	c.array(0)
}

func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func commandCmd(c *conn, args [][]byte) {
	names := commandNames()
	c.array(len(names))
	for _, n := range names {
		c.commandInfo(commands[n])
	}
}

// commandInfo writes a command's COMMAND reply in Redis 7's shape: name,
// arity, flags, first key, last key, key step, ACL categories, tips, key
// specs, subcommands.
func (c *conn) commandInfo(cmd *command) {
	c.array(10)
	c.bulk(cmd.name)
	c.int(int64(cmd.arity))
	c.setLen(0) // flags
	first := int64(0)
	if strings.HasPrefix(cmd.name, "x") && cmd.name != "xread" && cmd.name != "xreadgroup" && cmd.subs == nil {
		first = 1
	}
	c.int(first)
	c.int(first)
	c.int(first)
	c.setLen(0) // ACL categories
	c.setLen(0) // tips
	c.array(0)  // key specs
	subs := make([]string, 0, len(cmd.subs))
	for n := range cmd.subs {
		subs = append(subs, n)
	}
	sort.Strings(subs)
	c.setLen(len(subs))
	for _, n := range subs {
		c.commandInfo(cmd.subs[n])
	}
}
