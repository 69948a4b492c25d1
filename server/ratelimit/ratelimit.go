// Package ratelimit holds a token bucket per client of the server, so that
// no client can take more than its share of it: a client may make Burst
// requests at once and Rate a second on average, and a request beyond that
// is refused with the time the client should wait (the server answers it
// 429 with Retry-After, in the protocol of the request).
//
// A client is whatever key the caller gives: the server's are a person of
// a guarded session, so that a class behind one NAT address does not share
// one bucket, or else a remote address (telemetry.Request.Client). The
// buckets are golang.org/x/time/rate's. A bucket that has filled up again
// is the same as a new one, so it is forgotten: the map holds only the
// clients that were active within the last Burst/Rate seconds.
package ratelimit

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Options configure a Limiter.
type Options struct {
	// Rate is how many requests a second a client may make on average;
	// <= 0: no limit.
	Rate float64
	// Burst is how many requests a client may make at once; <= 0: Rate
	// rounded up (at least 1).
	Burst int
	// MaxClients bounds the buckets held; clients beyond it (many
	// addresses at once) share one bucket until the others refill. Zero:
	// DefaultMaxClients.
	MaxClients int
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

// DefaultMaxClients is the default of Options.MaxClients: about 10 MB of
// buckets at most.
const DefaultMaxClients = 100_000

// overflow is the key of the bucket shared by clients beyond MaxClients.
const overflow = "\x00overflow"

// Limiter is the set of clients' buckets. It is safe for concurrent use.
type Limiter struct {
	opts Options

	mu        sync.Mutex
	clients   map[string]*rate.Limiter
	nextSweep int       // sweep the full buckets when the map reaches this size
	lastSweep time.Time // when the map was last swept
}

// New returns a Limiter.
func New(opts Options) *Limiter {
	if opts.Burst <= 0 {
		opts.Burst = max(1, int(opts.Rate+0.999))
	}
	if opts.MaxClients <= 0 {
		opts.MaxClients = DefaultMaxClients
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Limiter{opts: opts, clients: map[string]*rate.Limiter{}, nextSweep: min(minSweep, opts.MaxClients)}
}

// minSweep is the smallest map that is swept.
const minSweep = 1024

// Allow takes a request from client's bucket. When the bucket is empty it
// takes nothing and returns how long until it holds a request again.
func (l *Limiter) Allow(client string) (wait time.Duration, ok bool) {
	if l.opts.Rate <= 0 {
		return 0, true
	}
	now := l.opts.Now()
	res := l.bucket(client, now).ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d, false
	}
	return 0, true
}

// Clients is how many buckets are held.
func (l *Limiter) Clients() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.clients)
}

func (l *Limiter) bucket(client string, now time.Time) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b := l.clients[client]; b != nil {
		return b
	}
	// Sweep when the map has doubled since the last sweep, so that each
	// sweep's cost is paid for by as many insertions; at MaxClients, at
	// most once per refill time, as no bucket fills up faster.
	if n := len(l.clients); n >= l.nextSweep && (n < l.opts.MaxClients || now.Sub(l.lastSweep) >= l.refill()) {
		l.sweepLocked(now)
		l.lastSweep = now
		l.nextSweep = min(l.opts.MaxClients, max(minSweep, 2*len(l.clients)))
	}
	if len(l.clients) >= l.opts.MaxClients {
		client = overflow
		if b := l.clients[client]; b != nil {
			return b
		}
	}
	b := rate.NewLimiter(rate.Limit(l.opts.Rate), l.opts.Burst)
	l.clients[client] = b
	return b
}

// refill is how long an empty bucket takes to fill up.
func (l *Limiter) refill() time.Duration {
	return time.Duration(float64(l.opts.Burst) / l.opts.Rate * float64(time.Second))
}

// sweepLocked forgets the buckets that are full again: a new bucket for
// their client would be the same.
func (l *Limiter) sweepLocked(now time.Time) {
	for k, b := range l.clients {
		if b.TokensAt(now) >= float64(l.opts.Burst) {
			delete(l.clients, k)
		}
	}
}
