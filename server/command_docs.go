package server

// COMMAND DOCS arguments and history, as Redis 7.0 gives them (redis-cli
// takes its argument hints and HELP from them). command_docs_data.go
// holds them, generated from redis-server 7.0.15's replies.

// docSpec is a command's history and arguments.
type docSpec struct {
	history [][2]string // version, what changed
	args    [][]docNode // each argument's fields, in Redis's order
}

// docNode is one field of an argument's description: a string, an
// integer, a set of flags or nested arguments.
type docNode struct {
	key   string
	str   string
	num   int64
	isNum bool
	flags []string
	args  [][]docNode
}

// docFields counts the history and arguments fields of cmd's entry.
func docFields(name string) int {
	d, ok := commandDocsData[name]
	if !ok {
		return 0
	}
	n := 0
	if len(d.history) > 0 {
		n++
	}
	if len(d.args) > 0 {
		n++
	}
	return n
}

// writeDocs writes the history and arguments of a command's COMMAND DOCS
// entry.
func (c *conn) writeDocs(name string) {
	d := commandDocsData[name]
	if len(d.history) > 0 {
		c.bulk("history")
		c.setLen(len(d.history))
		for _, h := range d.history {
			c.array(2)
			c.bulk(h[0])
			c.bulk(h[1])
		}
	}
	if len(d.args) > 0 {
		c.bulk("arguments")
		c.writeDocArgs(d.args)
	}
}

func (c *conn) writeDocArgs(args [][]docNode) {
	c.array(len(args))
	for _, a := range args {
		c.mapLen(len(a))
		for _, f := range a {
			c.bulk(f.key)
			switch {
			case f.isNum:
				c.int(f.num)
			case f.flags != nil:
				c.setLen(len(f.flags))
				for _, fl := range f.flags {
					c.simple(fl)
				}
			case f.args != nil:
				c.writeDocArgs(f.args)
			default:
				c.bulk(f.str)
			}
		}
	}
}
