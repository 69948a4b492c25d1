package api

import (
	"context"
	"sync"
)

// Limiter counts units of a resource that one party holds (a client's
// watchers, say) against a cap. Transports attach one to a request's context
// (WithWatchLimiter) and the protocols take a unit for every watcher they
// create on that request's behalf, so a cap holds across the etcd gateway and
// the Kubernetes API alike.
type Limiter interface {
	// Acquire takes one unit and reports whether it could: false when the
	// cap is reached (nothing was taken).
	Acquire() bool
	// Release gives back a unit taken by Acquire.
	Release()
}

// Counter is a Limiter with a fixed cap. Its zero value has no cap.
type Counter struct {
	max int // <= 0: no cap

	mu   sync.Mutex
	held int
}

// NewCounter returns a Limiter allowing at most max units at once; max <= 0
// means no cap.
func NewCounter(max int) *Counter { return &Counter{max: max} }

// Acquire takes a unit if fewer than the cap are held.
func (c *Counter) Acquire() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.max > 0 && c.held >= c.max {
		return false
	}
	c.held++
	return true
}

// Release gives a unit back.
func (c *Counter) Release() {
	c.mu.Lock()
	if c.held > 0 {
		c.held--
	}
	c.mu.Unlock()
}

// Held is how many units are taken now.
func (c *Counter) Held() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held
}

type watchLimiterKey struct{}

// WithWatchLimiter returns ctx carrying l, the limiter of the client the
// request comes from: every watcher created for it takes a unit.
func WithWatchLimiter(ctx context.Context, l Limiter) context.Context {
	return context.WithValue(ctx, watchLimiterKey{}, l)
}

// IsWatchLimiterKey reports whether key is the context key of a request's
// watch limiter, whose value is a Limiter (WithWatchLimiter): a transport
// that makes a request's context itself may answer it from its own Value
// method, and make the limiter only when a watch asks for it (most
// requests never watch).
func IsWatchLimiterKey(key any) bool { return key == (watchLimiterKey{}) }

// WatchLimiter is the limiter ctx carries, or one without a cap.
func WatchLimiter(ctx context.Context) Limiter {
	if l, ok := ctx.Value(watchLimiterKey{}).(Limiter); ok && l != nil {
		return l
	}
	return unlimited{}
}

type unlimited struct{}

func (unlimited) Acquire() bool { return true }
func (unlimited) Release()      {}
