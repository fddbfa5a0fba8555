package server

import (
	"crypto/subtle"
	"fmt"
)

// RedisVersion is the version of Redis whose replies the server gives,
// and which it reports (HELLO, INFO).
const RedisVersion = "7.0.15"

const redisVersion = RedisVersion

// Commands about the connection.

func init() {
	register("ping", -1, func(c *conn, args [][]byte) {
		if c.subscribed() && len(args) <= 2 { // RESP2's Pub/Sub context
			c.array(2)
			c.bulk("pong")
			if len(args) == 2 {
				c.bulkBytes(args[1])
			} else {
				c.bulk("")
			}
			return
		}
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
		c.public.changed(c)
		c.ok()
	})
	register("client|setinfo", 4, func(c *conn, args [][]byte) {
		if !is(args[2], "lib-name") && !is(args[2], "lib-ver") {
			c.err(fmt.Sprintf("ERR Unrecognized option '%s'", args[2]))
			return
		}
		c.ok()
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
	c.public.changed(c)
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
