package main

import (
	"net/http"
	"sync"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/server/telemetry"
)

// clientWatchers caps the watchers of each client, across every session of
// the server and both protocols: one api.Limiter per client. A client is
// telemetry.Request.Client: a person of a guarded session (so that a class
// behind one NAT address is not capped as one client), or else a remote
// address. A client holding no watcher has no entry, so the map stays as
// small as the set of clients watching. It also counts the watchers open
// by protocol, for the metrics.
type clientWatchers struct {
	max int // <= 0: no cap

	mu         sync.Mutex
	clients    map[string]*clientCount
	byProtocol map[string]int
}

func newClientWatchers(max int) *clientWatchers {
	return &clientWatchers{max: max, clients: map[string]*clientCount{}, byProtocol: map[string]int{}}
}

// limiter is the limiter of r's client.
func (c *clientWatchers) limiter(r *http.Request) api.Limiter {
	return &clientCount{c: c, client: telemetry.ClientOf(r), protocol: protocolOf(r)}
}

// limiterFor is the limiter of client (a person, "<session>/<id>", or an
// address) on a transport other than HTTP.
func (c *clientWatchers) limiterFor(client, protocol string) api.Limiter {
	return &clientCount{c: c, client: client, protocol: protocol}
}

// held is how many watchers client holds now.
func (c *clientWatchers) held(client string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.clients[client]; n != nil {
		return n.held
	}
	return 0
}

// open is how many watchers are open now, by protocol.
func (c *clientWatchers) open() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.byProtocol))
	for p, n := range c.byProtocol {
		out[p] = n
	}
	return out
}

// clientCount is one client's count; the entry in the map exists while
// held > 0.
type clientCount struct {
	c                *clientWatchers
	client, protocol string
	held             int // in the entry of the map, guarded by c.mu
}

func (n *clientCount) Acquire() bool {
	c := n.c
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.clients[n.client]
	if e == nil {
		e = &clientCount{c: c, client: n.client}
		c.clients[n.client] = e
	}
	if c.max > 0 && e.held >= c.max {
		if e.held == 0 {
			delete(c.clients, n.client)
		}
		return false
	}
	e.held++
	c.byProtocol[n.protocol]++
	return true
}

func (n *clientCount) Release() {
	c := n.c
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.clients[n.client]
	if e == nil {
		return
	}
	if e.held--; e.held <= 0 {
		delete(c.clients, n.client)
	}
	if c.byProtocol[n.protocol]--; c.byProtocol[n.protocol] <= 0 {
		delete(c.byProtocol, n.protocol)
	}
}
