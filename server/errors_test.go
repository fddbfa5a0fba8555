package server

import (
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream"
)

// fail writes a reply text as it is, a core error that has one Redis
// wording in that wording even when wrapped, and any other error as ERR
// and its message.
func TestFailReplies(t *testing.T) {
	srv := New(Options{})
	defer srv.cancel()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{replyError(errSyntax), "-ERR syntax error\r\n"},
		{fmt.Errorf("wrapped: %w", replyError("NOGROUP x")), "-NOGROUP x\r\n"},
		{fmt.Errorf("create: %w", xstream.ErrGroupExists), "-BUSYGROUP Consumer Group name already exists\r\n"},
		{xstream.ErrStreamExhausted, "-ERR The stream has exhausted the last possible ID, unable to add more items\r\n"},
		{errors.New("bad\r\nthing"), "-ERR bad  thing\r\n"},
	} {
		c := newConn(srv, a)
		c.fail(tc.err)
		require.Equal(t, tc.want, string(c.out), "%v", tc.err)
		require.EqualValues(t, 1, c.errs)
	}
}
