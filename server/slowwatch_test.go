package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rvplay/rvplay/engine/session"
	"github.com/rvplay/rvplay/server/classroom"
)

// shrinkable keeps the connections it accepts by remote address, so that
// a test can give the server's end of one client's connection a small send
// buffer: a client that stops reading then fills it after a few events.
// (Small buffers on every connection would slow every client down, by
// delayed acknowledgements.)
type shrinkable struct {
	net.Listener
	mu    sync.Mutex
	conns map[string]*net.TCPConn
}

func (l *shrinkable) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		l.mu.Lock()
		l.conns[tc.RemoteAddr().String()] = tc
		l.mu.Unlock()
	}
	return c, err
}

// shrink gives the server's end of the connection from client a small
// send buffer.
func (l *shrinkable) shrink(t *testing.T, client net.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.conns[client.String()]
	if c == nil {
		t.Fatalf("no connection from %s", client)
	}
	c.SetWriteBuffer(4 << 10)
}

// slowObserver reports the streams closed for being slow.
type slowObserver struct{ closed chan string }

func (o slowObserver) FramesSent(*http.Request, int) {}
func (o slowObserver) Behind(*http.Request)          {}
func (o slowObserver) SlowClosed(r *http.Request)    { o.closed <- r.URL.Path }

type kubeEvent struct {
	Type   string `json:"type"`
	Object struct {
		Code     int `json:"code"`
		Metadata struct {
			Name            string `json:"name"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	} `json:"object"`
}

func (e kubeEvent) rv() int64 {
	rv, _ := strconv.ParseInt(e.Object.Metadata.ResourceVersion, 10, 64)
	return rv
}

// TestASlowWebSocketWatcherIsClosedAndNobodyElseWaits: on a session under
// write load, one WebSocket watcher reads every event as it comes and
// another stops reading. The slow one is closed the way kube-apiserver's
// watch cache closes a watcher whose buffer stays full (its stream ends: a
// normal close), while the writers and the fast watcher go on unhindered:
// every write succeeds and the fast watcher sees every event, once, in
// order. The slow client then watches again from the last resourceVersion
// it saw and gets exactly the rest; from a compacted one it gets 410 and
// lists again.
func TestASlowWebSocketWatcherIsClosedAndNobodyElseWaits(t *testing.T) {
	slow := slowObserver{closed: make(chan string, 4)}
	var opts classroom.Options
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	opts.HTTP.SendBuffer = 8
	opts.HTTP.SlowTimeout = 2 * time.Second
	opts.HTTP.WriteTimeout = 30 * time.Second
	opts.HTTP.Observe = slow
	// The store serves the watches (kube-apiserver's --watch-cache=false):
	// the watcher held here is the WebSocket's, and the re-watch from a
	// compacted resourceVersion at the end is etcd's 410 at once.
	settings := session.DefaultSettings()
	settings.WatchCache = false
	opts.Session.Settings = &settings
	sdb, err := openMemoryData(t)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := classroom.New(sdb, opts)
	if err != nil {
		t.Fatal(err)
	}
	reg.CreateOpen("load")
	srv := httptest.NewUnstartedServer(routes(reg, nil, operations{}))
	ln := &shrinkable{Listener: srv.Listener, conns: map[string]*net.TCPConn{}}
	srv.Listener = ln
	srv.Start()
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); reg.Close() })
	base := srv.URL + "/s/load"
	cms := base + "/api/v1/namespaces/default/configmaps"

	start := listRV(t, cms)
	dial := func(rv int64, small bool) *websocket.Conn {
		d := websocket.Dialer{}
		if small {
			d.ReadBufferSize = 1024
			d.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
				if tc, ok := c.(*net.TCPConn); ok {
					tc.SetReadBuffer(4 << 10)
				}
				return c, err
			}
		}
		c, _, err := d.Dial("ws"+strings.TrimPrefix(cms, "http")+"?watch=1&resourceVersion="+strconv.FormatInt(rv, 10), nil)
		if err != nil {
			t.Fatal(err)
		}
		if small {
			ln.shrink(t, c.LocalAddr())
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	fastConn, slowConn := dial(start, false), dial(start, true)

	const writers, perWriter = 4, 150
	data := strings.Repeat("x", 1024)
	fastSeen := make(chan []kubeEvent, 1)
	go func() {
		var evs []kubeEvent
		for len(evs) < writers*perWriter {
			_, m, err := fastConn.ReadMessage()
			if err != nil {
				t.Logf("the fast watcher's read: %v", err)
				break
			}
			// One event a message, ending in its newline, as
			// kube-apiserver's JSON encoder writes it.
			if !strings.HasSuffix(string(m), "}\n") || strings.Count(string(m), "\n") != 1 {
				t.Errorf("message %q is not one event and its newline", m)
				break
			}
			var e kubeEvent
			json.Unmarshal(m, &e)
			evs = append(evs, e)
		}
		fastSeen <- evs
	}()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				body := fmt.Sprintf(`{"metadata":{"name":"w%d-%03d"},"data":{"x":%q}}`, w, i, data)
				resp, err := http.Post(cms, "application/json", strings.NewReader(body))
				if err != nil {
					errs <- err
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 201 {
					errs <- fmt.Errorf("create w%d-%03d: %d", w, i, resp.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// The fast watcher saw every event, once, in order.
	var fast []kubeEvent
	select {
	case fast = <-fastSeen:
	case <-time.After(time.Minute):
		t.Fatal("the fast watcher did not get every event within a minute")
	}
	if len(fast) != writers*perWriter {
		t.Fatalf("the fast watcher saw %d events, want %d", len(fast), writers*perWriter)
	}
	names := map[string]bool{}
	for i, e := range fast {
		if e.Type != "ADDED" || names[e.Object.Metadata.Name] || i > 0 && e.rv() <= fast[i-1].rv() {
			t.Fatalf("fast watcher event %d: %+v (repeated or out of order)", i, e)
		}
		names[e.Object.Metadata.Name] = true
	}

	// The slow one was closed for being slow, not the fast one.
	select {
	case <-slow.closed:
	case <-time.After(time.Minute):
		t.Fatal("the slow watcher was not closed")
	}
	select {
	case p := <-slow.closed:
		t.Fatalf("a second stream closed for being slow: %s", p)
	default:
	}
	// It reads what reached it, then a normal close: its watch ended.
	var got []kubeEvent
	slowConn.SetReadDeadline(time.Now().Add(time.Minute))
	for {
		_, m, err := slowConn.ReadMessage()
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			if ce.Code != websocket.CloseNormalClosure {
				t.Fatalf("the slow watcher was closed with %d %q, want a normal close", ce.Code, ce.Text)
			}
			break
		}
		if err != nil {
			t.Fatalf("the slow watcher's connection broke: %v", err)
		}
		var e kubeEvent
		json.Unmarshal(m, &e)
		got = append(got, e)
	}
	if len(got) >= len(fast) {
		t.Fatalf("the slow watcher got all %d events: it was not behind", len(got))
	}
	for i, e := range got {
		if e != fast[i] {
			t.Fatalf("slow watcher event %d: %+v, want %+v", i, e, fast[i])
		}
	}
	t.Logf("the slow watcher took %d of %d events before it was closed", len(got), len(fast))

	// Watching again from the last resourceVersion it saw gives the rest.
	last := start
	if len(got) > 0 {
		last = got[len(got)-1].rv()
	}
	again := dial(last, false)
	again.SetReadDeadline(time.Now().Add(time.Minute))
	for i := len(got); i < len(fast); i++ {
		_, m, err := again.ReadMessage()
		if err != nil {
			t.Fatalf("re-watch, event %d: %v", i, err)
		}
		var e kubeEvent
		json.Unmarshal(m, &e)
		if e != fast[i] {
			t.Fatalf("re-watch, event %d: %+v, want %+v", i, e, fast[i])
		}
	}

	// Once its resourceVersion is compacted, a re-watch gets 410, and the
	// client lists again.
	post(t, base+"/v3/kv/compaction", fmt.Sprintf(`{"revision":"%d"}`, fast[len(fast)-1].rv()))
	gone := dial(last, false)
	gone.SetReadDeadline(time.Now().Add(time.Minute))
	_, m, err := gone.ReadMessage()
	var e kubeEvent
	if err != nil || json.Unmarshal(m, &e) != nil || e.Type != "ERROR" || e.Object.Code != 410 {
		t.Fatalf("watch from a compacted resourceVersion: %s %v", m, err)
	}
	if rv := listRV(t, cms); rv != fast[len(fast)-1].rv() {
		t.Fatalf("the relist is at %d, want %d", rv, fast[len(fast)-1].rv())
	}
}

// listRV lists url and returns the list's resourceVersion.
func listRV(t *testing.T, url string) int64 {
	t.Helper()
	a := get(t, url)
	var l struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(a.body), &l); err != nil || a.status != 200 {
		t.Fatalf("list: %d %s", a.status, a.body)
	}
	rv, _ := strconv.ParseInt(l.Metadata.ResourceVersion, 10, 64)
	return rv
}
