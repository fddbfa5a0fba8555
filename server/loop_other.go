//go:build !linux

package server

import "net"

// loop is an event loop; there are none on this system, where each
// connection has its goroutine whatever Options.EventLoops says.
type loop struct{}

func (s *Server) startLoops() {}

func (s *Server) stopLoops() {}

// adopt returns nc: there are no event loops here.
func (s *Server) adopt(nc net.Conn) (*loop, net.Conn) { return nil, nc }

func (l *loop) add(c *conn) {}

func (c *conn) leaveLoop() {}

// deferOut reports false: a connection writes its replies itself.
func (c *conn) deferOut() bool { return false }

func (c *conn) pend() {}
