package main

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/rvplay/rvplay/server/telemetry"
)

// inFlight counts the requests in progress that are not watches, so that a
// shutdown lets every write that has begun finish (and be acknowledged)
// before the sessions close. Watches are not waited for: closing the
// sessions ends them, each in its protocol's way. The count is an atomic
// one, taken twice on every request; the lock is only for a shutdown's
// wait and the request that ends it.
type inFlight struct {
	n    atomic.Int64
	mu   sync.Mutex
	idle chan struct{} // closed when n drops to zero; nil while nobody waits
}

// track serves next, counting the requests that are not watches. Inside
// telemetry's Handler, it reads the names that gave the request.
func (f *inFlight) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if protocol, verb := telemetry.Names(r); verb == "WATCH" || protocol == telemetry.ProtocolEtcd && verb == "watch" {
			next.ServeHTTP(w, r)
			return
		}
		f.n.Add(1)
		defer f.done()
		next.ServeHTTP(w, r)
	})
}

func (f *inFlight) done() {
	if f.n.Add(-1) != 0 {
		return
	}
	// The last one out wakes a waiting shutdown, unless another request
	// began meanwhile (its own done will).
	f.mu.Lock()
	if f.idle != nil && f.n.Load() == 0 {
		close(f.idle)
		f.idle = nil
	}
	f.mu.Unlock()
}

// wait returns when no request is in flight, or when ctx ends.
func (f *inFlight) wait(ctx context.Context) error {
	f.mu.Lock()
	if f.n.Load() == 0 {
		f.mu.Unlock()
		return nil
	}
	if f.idle == nil {
		f.idle = make(chan struct{})
	}
	idle := f.idle
	f.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
