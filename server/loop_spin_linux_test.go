//go:build linux

package server

import (
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeEpoll is a waiter's epoll and clock for the tests: each poll takes
// pollTook of the clock and reports the next of ready (0 once they are
// used up), each wait takes blockTook and reports one event.
type fakeEpoll struct {
	t         time.Duration
	ready     []int
	pollErr   error
	pollTook  time.Duration
	blockTook time.Duration
	blockErr  error
	polls     int
	blocks    int
}

func (f *fakeEpoll) waiter() waiter {
	return waiter{
		poll: func([]syscall.EpollEvent) (int, error) {
			f.polls++
			f.t += f.pollTook
			if f.pollErr != nil {
				return -1, f.pollErr
			}
			if len(f.ready) == 0 {
				return 0, nil
			}
			n := f.ready[0]
			f.ready = f.ready[1:]
			return n, nil
		},
		block: func([]syscall.EpollEvent) (int, error) {
			f.blocks++
			f.t += f.blockTook
			if f.blockErr != nil {
				return -1, f.blockErr
			}
			return 1, nil
		},
		now: func() time.Duration { return f.t },
	}
}

// TestWaiterSpin: a waiter does not spin at first; after a wait shorter
// than spinFor it spins, and an event found by a poll of the spin is
// returned without a wait; a spin that finds nothing lasts spinFor, then
// waits; after a wait of spinFor or more it no longer spins.
func TestWaiterSpin(t *testing.T) {
	f := &fakeEpoll{pollTook: time.Microsecond, blockTook: 5 * time.Microsecond}
	w := f.waiter()
	events := make([]syscall.EpollEvent, 4)

	// Ready at once: one poll.
	f.ready = []int{3}
	n, err := w.wait(events)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	require.Equal(t, 1, f.polls)
	require.Zero(t, f.blocks)
	require.False(t, w.spin)

	// Nothing ready, no spin: one poll, then a short wait.
	f.polls = 0
	n, err = w.wait(events)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, 1, f.polls)
	require.Equal(t, 1, f.blocks)
	require.True(t, w.spin, "a wait of 5µs is shorter than spinFor")

	// Spinning: the third poll of the spin finds 2 events; no wait.
	f.polls, f.blocks = 0, 0
	f.ready = []int{0, 0, 0, 2}
	n, err = w.wait(events)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, 4, f.polls)
	require.Zero(t, f.blocks)
	require.True(t, w.spin, "a spin that finds events goes on")

	// A spin that finds nothing polls for spinFor, then waits; the
	// wait is long, and the spinning stops.
	f.polls, f.blocks = 0, 0
	f.blockTook = spinFor
	start := f.t
	n, err = w.wait(events)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, 1, f.blocks)
	require.Equal(t, 1+int(spinFor/f.pollTook), f.polls, "a first poll, then a spin of spinFor at 1µs a poll")
	require.Equal(t, 2*spinFor+f.pollTook, f.t-start)
	require.False(t, w.spin, "a wait of spinFor is not short")

	// Not spinning again: one poll and the wait.
	f.polls, f.blocks = 0, 0
	_, err = w.wait(events)
	require.NoError(t, err)
	require.Equal(t, 1, f.polls)
	require.Equal(t, 1, f.blocks)
}

// TestWaiterErrors: an error of a poll is returned at once, before a
// spin or a wait; so are the wait's errors, EINTR among them.
func TestWaiterErrors(t *testing.T) {
	events := make([]syscall.EpollEvent, 4)

	f := &fakeEpoll{pollErr: syscall.EBADF}
	w := f.waiter()
	w.spin = true
	n, err := w.wait(events)
	require.ErrorIs(t, err, syscall.EBADF)
	require.Equal(t, -1, n)
	require.Equal(t, 1, f.polls)
	require.Zero(t, f.blocks)

	f = &fakeEpoll{blockErr: syscall.EINTR}
	w = f.waiter()
	n, err = w.wait(events)
	require.ErrorIs(t, err, syscall.EINTR)
	require.Equal(t, -1, n)
	require.True(t, w.spin, "an interrupted wait was short")
}

// TestWaiterSpinYields: with GOMAXPROCS 1, a client goroutine of the
// process runs while the loop spins (the spin yields between polls), so
// its request is found by the spin's first polls, not by a wait (nor
// after the runtime preempted the spin, some 10 ms and thousands of polls
// later).
func TestWaiterSpinYields(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var p [2]int
	require.NoError(t, syscall.Pipe2(p[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC))
	defer syscall.Close(p[0])
	defer syscall.Close(p[1])
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	require.NoError(t, err)
	defer syscall.Close(epfd)
	require.NoError(t, syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, p[0], &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(p[0])}))

	w := newWaiter(epfd)
	polls, blocked := 0, 0
	poll, block := w.poll, w.block
	w.poll = func(events []syscall.EpollEvent) (int, error) { polls++; return poll(events) }
	w.block = func(events []syscall.EpollEvent) (int, error) { blocked++; return block(events) }
	// The clock stands still while the spin polls, so it spins until
	// the client has written.
	var clock time.Duration
	w.now = func() time.Duration { return clock }
	w.spin = true
	go syscall.Write(p[1], []byte{1})
	n, err := w.wait(make([]syscall.EpollEvent, 4))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Zero(t, blocked)
	require.LessOrEqual(t, polls, 3)
}
