package main

import (
	"net"
	"net/http"
	"sync"

	"github.com/rvplay/rvplay/engine/api"
)

// clientWatchers caps the watchers of each client, across every session of
// the server and both protocols: one api.Limiter per remote address. An
// address holding no watcher has no entry, so the map stays as small as
// the set of clients watching.
type clientWatchers struct {
	max int // <= 0: no cap

	mu      sync.Mutex
	clients map[string]*clientCount
}

func newClientWatchers(max int) *clientWatchers {
	return &clientWatchers{max: max, clients: map[string]*clientCount{}}
}

// limiter is the limiter of r's client.
func (c *clientWatchers) limiter(r *http.Request) api.Limiter {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return &clientCount{c: c, addr: host}
}

// held is how many watchers addr holds now.
func (c *clientWatchers) held(addr string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.clients[addr]; n != nil {
		return n.held
	}
	return 0
}

// clientCount is one address's count; the entry in the map exists while
// held > 0.
type clientCount struct {
	c    *clientWatchers
	addr string
	held int // in the entry of the map, guarded by c.mu
}

func (n *clientCount) Acquire() bool {
	c := n.c
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.clients[n.addr]
	if e == nil {
		e = &clientCount{c: c, addr: n.addr}
		c.clients[n.addr] = e
	}
	if c.max > 0 && e.held >= c.max {
		return false
	}
	e.held++
	return true
}

func (n *clientCount) Release() {
	c := n.c
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.clients[n.addr]
	if e == nil {
		return
	}
	if e.held--; e.held <= 0 {
		delete(c.clients, n.addr)
	}
}
