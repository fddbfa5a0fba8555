package server

import (
	"errors"
	"strings"
	"syscall"

	"github.com/xstreamgo/xstream"
)

// Redis's common error replies.
const (
	errSyntax    = "ERR syntax error"
	errNotInt    = "ERR value is not an integer or out of range"
	errInvalidID = "ERR Invalid stream ID specified as stream command argument"
	errNoKey     = "ERR no such key"
)

// XNACK's errors, as Redis 8.8's xnackCommand writes them. Most of its
// texts begin with "ERR ", to which addReplyError adds its own "-ERR "
// prefix: they reach the client as "-ERR ERR ...", reproduced here.
const (
	errNackMode      = "ERR ERR mode must be SILENT, FAIL, or FATAL"
	errNackNumIDs    = "ERR numids must be a positive integer"
	errNackMismatch  = "ERR ERR number of IDs doesn't match numids"
	errNackRetry     = "ERR ERR Invalid RETRYCOUNT value, must be >= 0"
	errNackNoIDs     = "ERR ERR syntax error, expected IDS keyword"
	errNackOptionFmt = "ERR ERR Unrecognized XNACK option '%s'"
)

// XADD's errors of IDMP and IDMPAUTO, as Redis's
// streamParseAddOrTrimArgsOrReply writes them.
const (
	errIdmpTwice     = "ERR syntax error, IDMP/IDMPAUTO specified multiple times"
	errIdmpNoPid     = "ERR syntax error, IDMP requires a non-empty producer ID"
	errIdmpNoIid     = "ERR syntax error, IDMP requires a non-empty idempotent ID"
	errIdmpAutoNoPid = "ERR syntax error, IDMPAUTO requires a non-empty producer ID"
	errIdmpWithID    = "ERR syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs"
)

// XCFGSET's errors, as Redis's xcfgsetCommand writes them.
const (
	errCfgNoParam       = "ERR At least one parameter must be specified"
	errCfgDuration      = "ERR IDMP-DURATION must be between 1 and 86400 seconds"
	errCfgMaxSize       = "ERR IDMP-MAXSIZE must be between 1 and 10000 entries"
	errCfgDurationTwice = "ERR IDMP-DURATION specified multiple times"
	errCfgMaxSizeTwice  = "ERR IDMP-MAXSIZE specified multiple times"
)

// replyError is the text of an error reply, as a command's parse step
// returns it for the command to write with fail.
type replyError string

func (e replyError) Error() string { return string(e) }

// coreReplies are the replies Redis gives for the core's errors that mean
// the same in every command. A command whose Redis text differs (XSETID's
// ID too small, XREADGROUP's missing group) checks for it before fail.
var coreReplies = [...]struct {
	err  error
	text string
}{
	{xstream.ErrStreamExhausted, "ERR The stream has exhausted the last possible ID, unable to add more items"},
	{xstream.ErrGroupExists, "BUSYGROUP Consumer Group name already exists"},
}

// fail writes the error reply for err: a replyError as it is, a core error
// as Redis words it (coreReplies), any other error as "ERR " and its
// message.
func (c *conn) fail(err error) {
	var r replyError
	if errors.As(err, &r) {
		c.err(string(r))
		return
	}
	if errors.Is(err, xstream.ErrLogFailed) {
		c.err(misconf(err))
		return
	}
	for _, m := range coreReplies {
		if errors.Is(err, m.err) {
			c.err(m.text)
			return
		}
	}
	c.err("ERR " + err.Error())
}

// misconf is Redis's MISCONF reply for err, an error of a DB's log: the
// error of the system call that failed, worded as strerror words it ("No
// space left on device"), as redis-server replies when it cannot write
// its AOF; without one, err's message.
func misconf(err error) string {
	msg := err.Error()
	var errno syscall.Errno
	if errors.As(err, &errno) {
		msg = errno.Error()
		if msg != "" {
			msg = strings.ToUpper(msg[:1]) + msg[1:]
		}
	}
	return "MISCONF Errors writing to the AOF file: " + msg
}
