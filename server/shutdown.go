package main

import (
	"context"
	"net/http"
	"sync"

	"github.com/rvplay/rvplay/server/telemetry"
)

// inFlight counts the requests in progress that are not watches, so that a
// shutdown lets every write that has begun finish (and be acknowledged)
// before the sessions close. Watches are not waited for: closing the
// sessions ends them, each in its protocol's way.
type inFlight struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to zero; nil while n == 0
}

// track serves next, counting the requests that are not watches. Inside
// telemetry's Handler, it reads the names that gave the request.
func (f *inFlight) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if protocol, verb := telemetry.Names(r); verb == "WATCH" || protocol == telemetry.ProtocolEtcd && verb == "watch" {
			next.ServeHTTP(w, r)
			return
		}
		f.mu.Lock()
		f.n++
		f.mu.Unlock()
		defer f.done()
		next.ServeHTTP(w, r)
	})
}

func (f *inFlight) done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n--; f.n == 0 && f.idle != nil {
		close(f.idle)
		f.idle = nil
	}
}

// wait returns when no request is in flight, or when ctx ends.
func (f *inFlight) wait(ctx context.Context) error {
	f.mu.Lock()
	if f.n == 0 {
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
