package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/rvplay/rvplay/engine/api"
)

// Watch event types, exactly as the API sends them.
const (
	Added    = "ADDED"
	Modified = "MODIFIED"
	Deleted  = "DELETED"
	Bookmark = "BOOKMARK"
	Error    = "ERROR"
)

// InitialEventsEndAnnotation marks the bookmark that ends the initial
// events of a watch-list (sendInitialEvents=true) stream.
const InitialEventsEndAnnotation = "k8s.io/initial-events-end"

// Event is one watch event. For ERROR events Object is the Status and Err
// the corresponding *StatusError.
type Event struct {
	Type   string
	Object Object
	Err    error
}

// IsInitialEventsEnd reports the bookmark that closes a watch-list's
// initial state.
func (e Event) IsInitialEventsEnd() bool {
	return e.Type == Bookmark && e.Object.Annotations()[InitialEventsEndAnnotation] == "true"
}

// Watcher is an open watch stream. Events arrive on ResultChan in order;
// the channel closes when the server ends the stream (timeout, after an
// ERROR event) or after Stop.
type Watcher struct {
	ch     chan Event
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// ResultChan delivers the events.
func (w *Watcher) ResultChan() <-chan Event { return w.ch }

// Stop ends the watch and waits until its stream is released.
func (w *Watcher) Stop() {
	w.cancel()
	<-w.done
}

// Err is why the stream ended once ResultChan is closed: nil for a clean
// end of stream (or Stop), otherwise a decoding or transport error.
func (w *Watcher) Err() error {
	select {
	case <-w.done:
		return w.err
	default:
		return nil
	}
}

// Watch opens a watch (?watch=true) with the given options. An error
// answered before the stream starts (400, 422, HTTP 410…) is returned here;
// errors after admission arrive as an ERROR event.
func (rc ResourceClient) Watch(ctx context.Context, opts ListOptions) (*Watcher, error) {
	q := opts.Query()
	q.Set("watch", "true")
	wctx, cancel := context.WithCancel(ctx)
	resp := rc.c.Do(wctx, &api.Request{Method: "GET", Path: rc.r.Path(rc.ns, ""), Query: q})
	if resp.Status < 200 || resp.Status > 299 {
		body := resp.Body
		if resp.Stream != nil {
			resp.Stream.Close()
		}
		cancel()
		return nil, errorFromResponse("GET", resp.Status, body)
	}
	w := &Watcher{ch: make(chan Event), cancel: cancel, done: make(chan struct{})}
	go w.run(wctx, &frameReader{ctx: wctx, stream: resp.Stream, pending: resp.Body})
	return w, nil
}

func (w *Watcher) run(ctx context.Context, r *frameReader) {
	defer func() {
		if r.stream != nil {
			r.stream.Close()
		}
		close(w.ch)
		close(w.done)
	}()
	dec := json.NewDecoder(r)
	for {
		var raw struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&raw); err != nil {
			if !errors.Is(err, io.EOF) && ctx.Err() == nil {
				w.err = fmt.Errorf("decoding watch event: %w", err)
			}
			return
		}
		ev := Event{Type: raw.Type}
		obj, err := DecodeObject(raw.Object)
		if err != nil {
			w.err = fmt.Errorf("decoding watch event object: %w", err)
			return
		}
		ev.Object = obj
		if ev.Type == Error {
			var st Status
			_ = json.Unmarshal(raw.Object, &st)
			ev.Err = &StatusError{Status: st}
		}
		select {
		case w.ch <- ev:
		case <-ctx.Done():
			return
		}
	}
}

// frameReader presents an api.Stream's frames as one byte stream, so the
// JSON decoder copes with frames that split or join events.
type frameReader struct {
	ctx     context.Context
	stream  api.Stream
	pending []byte
}

func (r *frameReader) Read(p []byte) (int, error) {
	for len(r.pending) == 0 {
		if r.stream == nil {
			return 0, io.EOF
		}
		frame, err := r.stream.Next(r.ctx)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return 0, io.EOF
			}
			return 0, err
		}
		r.pending = bytes.Clone(frame)
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}
