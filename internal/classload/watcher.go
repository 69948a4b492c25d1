package classload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// event is one watch event a watcher received.
type event struct {
	rv int64
	// When it arrived, in Unix nanoseconds: at the watcher's socket (the
	// kernel's stamp, stamp_linux.go), and when the watcher's goroutine
	// had it, after its wait for a core.
	arrived, recv int64
	typ           string
	name          string
}

// segment is what a watcher saw from one resourceVersion on without
// listing again: the events of every stream it watched, resumed one after
// another from the last resourceVersion it knew.
type segment struct {
	// from is the resourceVersion it starts after: its list's.
	from int64
	// listed is the list it starts with: each object's resourceVersion.
	listed map[string]int64
	events []event
	// to is the last resourceVersion the watcher knew in it (an event's
	// or a bookmark's).
	to int64
}

// watcher is a student watching the shared namespace's ConfigMaps over a
// WebSocket, as the lab's reflector does: list, watch from the list's
// resourceVersion with bookmarks, resume from the last resourceVersion
// when a stream ends, list again after a 410.
type watcher struct {
	cl      *Class
	student Student
	dialer  *websocket.Dialer

	segments []*segment
	// rv is the last resourceVersion the watcher knows, for whoever waits
	// for it to catch up.
	rv atomic.Int64
	// connected is when its last stream was established (Unix nanoseconds).
	connected atomic.Int64

	// How its streams ended.
	closedByServer int // a normal close: a slow watcher's, or a timeout's
	broken         int // the connection broke: the server died
	expired        int // a 410: it listed again
	streams        int
	problems       []string

	events eventReader

	mu     sync.Mutex
	conn   *websocket.Conn
	asleep chan struct{} // non-nil while asleep: closed to wake it
}

func newWatcher(cl *Class, st Student) *watcher {
	return &watcher{cl: cl, student: st, dialer: &websocket.Dialer{HandshakeTimeout: 30 * time.Second, NetDialContext: dialStamped}}
}

// How a stream ended.
type streamEnd int

const (
	endStopped streamEnd = iota
	endAsleep
	endExpired
	endClosedByServer
	endBroken
)

// run lists and watches until ctx ends.
func (w *watcher) run(ctx context.Context) {
	stop := context.AfterFunc(ctx, w.hangUp)
	defer stop()
	list := true
	for ctx.Err() == nil {
		if !w.awake(ctx) {
			return
		}
		if list {
			if err := w.list(ctx); err != nil {
				sleep(ctx, retryInterval)
				continue
			}
			list = false
		}
		conn, err := w.dial(ctx)
		if err != nil {
			sleep(ctx, retryInterval)
			continue
		}
		switch w.read(ctx, conn) {
		case endExpired:
			w.expired++
			list = true
		case endClosedByServer:
			w.closedByServer++
		case endBroken:
			w.broken++
		}
	}
}

// list reads the collection and starts a segment at its resourceVersion.
func (w *watcher) list(ctx context.Context) error {
	status, b, err := w.cl.c.do(ctx, http.MethodGet, w.cl.URL(collectionPath), w.student.Token, nil)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("list: %d %s", status, b)
	}
	var l struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []struct {
			Metadata struct {
				Name            string `json:"name"`
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	rv, err := strconv.ParseInt(l.Metadata.ResourceVersion, 10, 64)
	if err != nil {
		return err
	}
	seg := &segment{from: rv, to: rv, listed: map[string]int64{}}
	for _, it := range l.Items {
		irv, _ := strconv.ParseInt(it.Metadata.ResourceVersion, 10, 64)
		seg.listed[it.Metadata.Name] = irv
	}
	w.segments = append(w.segments, seg)
	w.rv.Store(rv)
	return nil
}

// dial opens a watch from the watcher's resourceVersion, waiting out a
// 429's Retry-After.
func (w *watcher) dial(ctx context.Context) (*websocket.Conn, error) {
	u := "ws" + strings.TrimPrefix(w.cl.URL(collectionPath), "http") +
		"?watch=true&allowWatchBookmarks=true&resourceVersion=" + strconv.FormatInt(w.rv.Load(), 10)
	h := http.Header{"Authorization": {"Bearer " + w.student.Token}, "User-Agent": {userAgent}}
	conn, resp, err := w.dialer.DialContext(ctx, u, h)
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusTooManyRequests {
			w.cl.c.rateLimited.Add(1)
			sleep(ctx, retryAfter(resp.Header))
		}
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.asleep != nil || ctx.Err() != nil {
		conn.Close()
		return nil, errors.New("hung up")
	}
	w.conn = conn
	w.streams++
	w.connected.Store(time.Now().UnixNano())
	return conn, nil
}

// read records the events of one stream until it ends.
func (w *watcher) read(ctx context.Context, conn *websocket.Conn) streamEnd {
	defer conn.Close()
	seg := w.segments[len(w.segments)-1]
	names := map[string]string{}
	for {
		msg, err := w.events.next(conn)
		now, arrived := time.Now().UnixNano(), receivedAt(conn.NetConn())
		if err != nil {
			w.mu.Lock()
			asleep := w.asleep != nil
			w.conn = nil
			w.mu.Unlock()
			var ce *websocket.CloseError
			switch {
			case ctx.Err() != nil:
				return endStopped
			case asleep:
				return endAsleep
			case errors.As(err, &ce) && ce.Code == websocket.CloseNormalClosure:
				return endClosedByServer
			}
			return endBroken
		}
		var m watchEvent
		if err := w.events.decode(msg, &m); err != nil {
			w.problems = append(w.problems, fmt.Sprintf("undecodable watch event %q: %v", msg, err))
			return endBroken
		}
		if m.Type == "ERROR" {
			if m.Object.Code == http.StatusGone {
				return endExpired
			}
			w.problems = append(w.problems, fmt.Sprintf("watch error from %d: %d %s", w.rv.Load(), m.Object.Code, m.Object.Message))
			return endBroken
		}
		rv, err := strconv.ParseInt(m.Object.Metadata.ResourceVersion, 10, 64)
		if err != nil {
			w.problems = append(w.problems, fmt.Sprintf("%s event without a resourceVersion: %q", m.Type, msg))
			return endBroken
		}
		if m.Type != "BOOKMARK" {
			name, ok := names[m.Object.Metadata.Name]
			if !ok {
				name = m.Object.Metadata.Name
				names[name] = name
			}
			seg.events = append(seg.events, event{rv: rv, arrived: arrived, recv: now, typ: eventTypes[m.Type], name: name})
		}
		seg.to = rv
		w.rv.Store(rv)
	}
}

// eventTypes interns the event types (and keeps an unknown one empty,
// which the checks then report).
var eventTypes = map[string]string{"ADDED": "ADDED", "MODIFIED": "MODIFIED", "DELETED": "DELETED"}

// sleep closes the watcher's stream and keeps it from watching until
// wake: a student whose laptop slept.
func (w *watcher) sleep() {
	w.mu.Lock()
	if w.asleep == nil {
		w.asleep = make(chan struct{})
	}
	w.mu.Unlock()
	w.hangUp()
}

func (w *watcher) wake() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.asleep != nil {
		close(w.asleep)
		w.asleep = nil
	}
}

// awake waits while the watcher sleeps; false if ctx ends meanwhile.
func (w *watcher) awake(ctx context.Context) bool {
	w.mu.Lock()
	ch := w.asleep
	w.mu.Unlock()
	if ch == nil {
		return true
	}
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// hangUp closes the watcher's stream as a client that leaves does: a
// close message, then the connection.
func (w *watcher) hangUp() {
	w.mu.Lock()
	conn := w.conn
	w.mu.Unlock()
	if conn == nil {
		return
	}
	conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	conn.Close()
}
