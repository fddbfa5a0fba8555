package server

import (
	"errors"

	"github.com/xstreamgo/xstream"
)

// Commands that move keys: RENAME and RENAMENX.

func init() {
	register("rename", 3, func(c *conn, args [][]byte) {
		if _, ok := c.rename(args, true); ok {
			c.ok()
		}
	})
	register("renamenx", 3, func(c *conn, args [][]byte) {
		if renamed, ok := c.rename(args, false); ok {
			c.int(int64(b2i(renamed)))
		}
	})
}

// rename renames the key args[1] to args[2] in the connection's DB
// (xstream.DB.Rename): ok is false when it replied with an error.
func (c *conn) rename(args [][]byte, replace bool) (renamed, ok bool) {
	renamed, err := c.mustDB().Rename(string(args[1]), string(args[2]), replace)
	switch {
	case errors.Is(err, xstream.ErrNoStream):
		c.err(errNoKey)
		return false, false
	case err != nil:
		c.err("ERR " + err.Error())
		return false, false
	}
	return renamed, true
}
