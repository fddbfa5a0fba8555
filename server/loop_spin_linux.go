//go:build linux

package server

import (
	"runtime"
	"syscall"
	"time"
)

// Spinning before a wait.
//
// When no event is ready, a loop whose last wait for events was short
// (under spinFor) polls again, without waiting, for up to spinFor before
// it waits in epoll_wait. Under a steady flow of requests from many
// clients the next one mostly comes within that time, and the loop
// serves it without putting its thread to sleep and waking it again: a
// context switch each way and, when the thread's CPU went idle
// meanwhile, a wake-up of that CPU, which on a virtual machine is an exit
// to the hypervisor. Under unpipelined requests from 50 clients
// (redis-benchmark -c 50) the server then made 0.019-0.096 context
// switches a request against 0.090-0.126 without the spin, and served
// 1.04x Redis's XADDs a second (BENCHMARKS.md, "redis-benchmark against
// redis-server").
//
// The rule is that a spin of spinFor would have caught the last event:
// a spin goes on while spins find events, and stops after a wait that
// lasted longer. So an idle server does not spin, and one whose requests
// come further apart than spinFor mostly does not (a single client's
// round trips over loopback take 50-70 µs on these machines:
// redis-benchmark -c 1 made 14,000-20,000 XADDs a second); at most, a
// loop spends spinFor of CPU before each wait that follows a short one.
// Between polls the loop's goroutine yields its processor
// (runtime.Gosched), so that goroutines of the process, clients in
// tests among them, run meanwhile even where GOMAXPROCS is 1.
const spinFor = 20 * time.Microsecond

// waiter waits for the events of an epoll instance, spinning as above.
// Only the goroutine running the loop uses it. Its functions are
// pollEvents and epoll_wait on the loop's descriptor, and the monotonic
// clock (from monoStart, slowlog.go); the tests replace them.
type waiter struct {
	poll  func(events []syscall.EpollEvent) (int, error) // the events ready, without waiting
	block func(events []syscall.EpollEvent) (int, error) // the events ready, waiting for one
	now   func() time.Duration                           // a monotonic clock
	spin  bool                                           // spin before the next wait
}

func newWaiter(epfd int) waiter {
	return waiter{
		poll:  func(events []syscall.EpollEvent) (int, error) { return pollEvents(epfd, events) },
		block: func(events []syscall.EpollEvent) (int, error) { return syscall.EpollWait(epfd, events, -1) },
		now:   func() time.Duration { return time.Since(monoStart) },
	}
}

// wait returns the events ready, waiting for one if none is. It looks
// first without waiting, as a raw system call (loop_sys_linux.go): when
// events are ready, as they mostly are with many busy clients, the loop's
// goroutine goes on without the runtime's bookkeeping of a blocking call,
// and the runtime's monitor does not see it in a system call (in a
// blocking one it may hand the goroutine's processor to another thread).
// Then it spins, when its last wait was short, and then waits. Errors,
// EINTR among them, are returned at once (run calls it again on EINTR).
func (w *waiter) wait(events []syscall.EpollEvent) (int, error) {
	if n, err := w.poll(events); n != 0 || err != nil {
		return n, err
	}
	if w.spin {
		start := w.now()
		for w.now()-start < spinFor {
			runtime.Gosched()
			if n, err := w.poll(events); n != 0 || err != nil {
				return n, err
			}
		}
	}
	start := w.now()
	n, err := w.block(events)
	w.spin = w.now()-start < spinFor
	return n, err
}
