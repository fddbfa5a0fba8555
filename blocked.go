package xstream

// Blocked returns the number of calls waiting on the stream: Read (and
// DB.Read) and ReadGroup calls blocked until an entry arrives. A call is
// counted from the moment an Add would wake it. It serves monitoring (Redis
// reports blocked_clients) and tests that must know a reader waits before
// they add. O(1).
func (s *Stream) Blocked() int {
	s.mu.RLock()
	defer s.runlock()
	return len(s.waiters.ws) + len(s.gwaiters)
}
