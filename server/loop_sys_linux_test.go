//go:build linux

package server

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLoopRawCalls: the raw read, write and poll of an event loop on a
// non-blocking pipe in an epoll instance: an empty pipe reads EAGAIN (-1)
// and polls no event; a written byte polls one event, on the pipe, and
// reads back; a closed descriptor fails with EBADF.
func TestLoopRawCalls(t *testing.T) {
	var p [2]int
	require.NoError(t, syscall.Pipe2(p[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC))
	defer syscall.Close(p[1])
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	require.NoError(t, err)
	defer syscall.Close(epfd)
	require.NoError(t, syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, p[0], &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(p[0])}))
	events := make([]syscall.EpollEvent, 4)
	buf := make([]byte, 8)

	n, err := rawRead(p[0], buf)
	require.Equal(t, -1, n)
	require.ErrorIs(t, err, syscall.EAGAIN)
	n, err = pollEvents(epfd, events)
	require.NoError(t, err)
	require.Equal(t, 0, n)

	n, err = rawWrite(p[1], []byte("xs"))
	require.NoError(t, err)
	require.Equal(t, 2, n)
	n, err = pollEvents(epfd, events)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, int32(p[0]), events[0].Fd)
	w := newWaiter(epfd)
	n, err = w.wait(events) // ready: does not wait
	require.NoError(t, err)
	require.Equal(t, 1, n)
	n, err = rawRead(p[0], buf)
	require.NoError(t, err)
	require.Equal(t, "xs", string(buf[:n]))
	n, err = rawRead(p[0], buf)
	require.Equal(t, -1, n)
	require.ErrorIs(t, err, syscall.EAGAIN)

	syscall.Close(p[0])
	n, err = rawRead(p[0], buf)
	require.Equal(t, -1, n)
	require.ErrorIs(t, err, syscall.EBADF)
	n, err = rawWrite(-1, buf)
	require.Equal(t, -1, n)
	require.ErrorIs(t, err, syscall.EBADF)
}
