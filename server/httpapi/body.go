package httpapi

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/rvplay/rvplay/engine/api"
)

// BodyBudget bounds the memory that request bodies hold while they are
// read, across every adapter that shares it (one per server). A body
// reserves its buffer as the buffer grows with what arrives, and gives it
// back once its handler has answered. A body that finds the budget spent
// waits a little for others to give memory back, then is refused (429):
// a few hundred clients that declare large bodies and send them slowly
// hold at most the budget, not what they declared.
type BodyBudget struct {
	max  int64
	wait time.Duration

	mu   sync.Mutex
	held int64
	// freed, made by the first reservation that has to wait, is closed
	// when memory is given back (and made again by the next one to wait):
	// while nobody waits, a release costs no channel.
	freed chan struct{}
	// waiting and changed, if set, are called when a reservation starts to
	// wait and after the memory held changes (tests).
	waiting func()
	changed func(held int64)
}

// NewBodyBudget returns a budget of max bytes; a body that cannot have its
// memory waits at most wait for it.
func NewBodyBudget(max int64, wait time.Duration) *BodyBudget {
	return &BodyBudget{max: max, wait: wait}
}

// Held is the memory reserved now.
func (b *BodyBudget) Held() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}

// reserve takes n bytes, waiting up to the budget's wait for them.
func (b *BodyBudget) reserve(ctx context.Context, n int64) bool {
	var timeout <-chan time.Time
	for {
		b.mu.Lock()
		if b.held+n <= b.max {
			b.held += n
			held, changed := b.held, b.changed
			b.mu.Unlock()
			if changed != nil {
				changed(held)
			}
			return true
		}
		if n > b.max || b.wait <= 0 {
			b.mu.Unlock()
			return false
		}
		if b.freed == nil {
			b.freed = make(chan struct{})
		}
		freed := b.freed
		waiting := b.waiting
		b.mu.Unlock()
		if timeout == nil {
			t := time.NewTimer(b.wait)
			defer t.Stop()
			timeout = t.C
			if waiting != nil {
				waiting()
			}
		}
		select {
		case <-freed:
		case <-timeout:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

func (b *BodyBudget) release(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.held -= n
	if b.freed != nil {
		close(b.freed)
		b.freed = nil
	}
	held, changed := b.held, b.changed
	b.mu.Unlock()
	if changed != nil {
		changed(held)
	}
}

// minBodyBuffer is the first buffer of a body; it doubles as data arrives.
const minBodyBuffer = 4 << 10

// body is a request body being read: its bytes and the memory it reserved.
type body struct {
	data     []byte
	budget   *BodyBudget
	reserved int64
}

func (b *body) release() {
	if b.budget != nil {
		b.budget.release(b.reserved)
	}
	b.reserved = 0
}

// readBody reads r's body into b incrementally, at most limit bytes, under
// the read deadline timeout (set here if setDeadline, else already set by
// BodyDeadline): its buffer grows with what arrives (never to a declared
// length before the bytes are there), each growth reserved from budget
// (nil: none). It answers what to refuse the request with, if anything;
// the caller releases the body (refused or not) once the request is
// answered.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, timeout time.Duration, setDeadline bool, budget *BodyBudget, b *body) (refused *api.Refusal) {
	rc := http.NewResponseController(w)
	defer func() {
		if refused == nil {
			// The connection's reader outlives the body (net/http watches
			// it for the client going away while a stream is served).
			rc.SetReadDeadline(time.Time{})
		} else {
			// The connection closes after the refusal; what net/http would
			// still read of the body to reuse it must not wait for a
			// client that stopped sending.
			rc.SetReadDeadline(time.Now())
		}
	}()
	if r.ContentLength > limit {
		return &api.Refusal{Kind: api.BodyTooLarge, Limit: limit}
	}
	if setDeadline {
		rc.SetReadDeadline(time.Now().Add(timeout))
	}
	// What the buffer may grow to: one byte more than allowed (or than
	// declared), so that reading that byte shows the body is too long.
	most := limit + 1
	if n := r.ContentLength; n >= 0 && n < limit {
		most = n + 1
	}
	b.budget = budget
	for {
		if len(b.data) == cap(b.data) {
			if int64(len(b.data)) >= most {
				return &api.Refusal{Kind: api.BodyTooLarge, Limit: limit}
			}
			size := min(max(2*int64(cap(b.data)), minBodyBuffer), most)
			if budget != nil {
				if !budget.reserve(r.Context(), size-int64(cap(b.data))) {
					return &api.Refusal{Kind: api.Busy}
				}
				b.reserved += size - int64(cap(b.data))
			}
			grown := make([]byte, len(b.data), size)
			copy(grown, b.data)
			b.data = grown
		}
		n, err := r.Body.Read(b.data[len(b.data):cap(b.data)])
		b.data = b.data[:len(b.data)+n]
		if int64(len(b.data)) > limit {
			return &api.Refusal{Kind: api.BodyTooLarge, Limit: limit}
		}
		switch {
		case err == io.EOF:
			return nil
		case err == nil:
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return &api.Refusal{Kind: api.BodyTimeout, Detail: timeout.String()}
		}
		return &api.Refusal{Kind: api.BodyBroken, Detail: err.Error()}
	}
}

// BodyDeadline gives every request that has a body timeout to send it,
// for handlers that read bodies themselves (the server's own paths: POST
// /sessions, /join): without it a client that never finishes its body
// holds a goroutine and a connection forever. The adapter sets the same
// deadline itself (unless told BodyDeadline did: Options.BodyDeadlineSet)
// and lifts it once the body is in, for the streams that follow.
func BodyDeadline(next http.Handler, timeout time.Duration) http.Handler {
	return bodyDeadline{next: next, timeout: timeout}
}

// bodyDeadline is a type of its own, not a closure: a closure would be
// inlined into the caller's package, where its ResponseController was
// found to escape, an allocation on every request.
type bodyDeadline struct {
	next    http.Handler
	timeout time.Duration
}

func (h bodyDeadline) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 {
		http.NewResponseController(w).SetReadDeadline(time.Now().Add(h.timeout))
	}
	h.next.ServeHTTP(w, r)
}
