//go:build js && wasm

package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"syscall/js"
	"testing"

	"github.com/rvplay/rvplay/engine/api"
)

// await settles a JS Promise from a test goroutine (never from a callback).
func await(t *testing.T, p js.Value) (js.Value, error) {
	t.Helper()
	type result struct {
		v   js.Value
		err error
	}
	ch := make(chan result, 1)
	onOK := js.FuncOf(func(this js.Value, args []js.Value) any { ch <- result{v: args[0]}; return nil })
	onErr := js.FuncOf(func(this js.Value, args []js.Value) any {
		ch <- result{err: errors.New(args[0].Get("message").String())}
		return nil
	})
	defer onOK.Release()
	defer onErr.Release()
	p.Call("then", onOK, onErr)
	r := <-ch
	return r.v, r.err
}

type frameStream struct {
	frames []string
	block  bool
}

func (s *frameStream) Next(ctx context.Context) ([]byte, error) {
	if len(s.frames) > 0 {
		f := s.frames[0]
		s.frames = s.frames[1:]
		return []byte(f), nil
	}
	if s.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return nil, api.EOF
}
func (s *frameStream) Close() {}

// echo answers with what it received, and streams for /stream paths.
var echo = api.HandlerFunc(func(ctx context.Context, r *api.Request) *api.Response {
	switch r.Path {
	case "/stream":
		return &api.Response{Status: 200, Header: api.Header{"Content-Type": {"application/json"}},
			Stream: &frameStream{frames: []string{"{\"n\":1}\n", "{\"n\":2}\n", "{\"n\":3}\n"}}}
	case "/forever":
		return &api.Response{Status: 200, Header: api.Header{}, Stream: &frameStream{frames: []string{"{}\n"}, block: true}}
	}
	body, _ := json.Marshal(map[string]any{"method": r.Method, "path": r.Path, "query": r.Query,
		"accept": r.Header.Get("Accept"), "body": string(r.Body)})
	return &api.Response{Status: 201, Header: api.Header{"Content-Type": {"application/json"}}, Body: body}
})

func installEcho(t *testing.T) js.Value {
	b := newBridge(func() (api.Handler, error) { return echo, nil })
	if err := b.reset(); err != nil {
		t.Fatal(err)
	}
	return b.install("rvplayTest")
}

func obj(m map[string]any) js.Value { return js.ValueOf(m) }

func TestRequestResolvesWithStatusHeadersAndBody(t *testing.T) {
	ns := installEcho(t)
	v, err := await(t, ns.Call("request", obj(map[string]any{
		"method": "post", "path": "/api/v1/namespaces/default/configmaps?dryRun=All",
		"query": map[string]any{"fieldManager": "lab"}, "headers": map[string]any{"accept": "application/json"},
		"body": `{"kind":"ConfigMap"}`,
	})))
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Get("status").Int(); got != 201 {
		t.Fatalf("status = %d", got)
	}
	if got := v.Get("headers").Get("content-type").String(); got != "application/json" {
		t.Fatalf("content-type = %q", got)
	}
	var echoed struct {
		Method, Path, Accept, Body string
		Query                      map[string][]string
	}
	if err := json.Unmarshal([]byte(v.Get("body").String()), &echoed); err != nil {
		t.Fatal(err)
	}
	if echoed.Method != "POST" || echoed.Path != "/api/v1/namespaces/default/configmaps" ||
		echoed.Accept != "application/json" || echoed.Body != `{"kind":"ConfigMap"}` ||
		echoed.Query["dryRun"][0] != "All" || echoed.Query["fieldManager"][0] != "lab" {
		t.Fatalf("handler saw %+v", echoed)
	}
}

func TestRequestWithoutPathIsRejected(t *testing.T) {
	ns := installEcho(t)
	_, err := await(t, ns.Call("request", obj(map[string]any{"method": "GET"})))
	if err == nil || !strings.Contains(err.Error(), "path") {
		t.Fatalf("err = %v", err)
	}
}

type watchEvent struct{ kind, data, reason string }

// collect starts a watch and returns a channel of its events.
func collect(ns js.Value, path string) (chan watchEvent, js.Value, js.Func) {
	ch := make(chan watchEvent, 16)
	cb := js.FuncOf(func(this js.Value, args []js.Value) any {
		e := args[0]
		ev := watchEvent{kind: e.Get("kind").String()}
		if d := e.Get("data"); d.Type() == js.TypeString {
			ev.data = d.String()
		}
		if r := e.Get("reason"); r.Type() == js.TypeString {
			ev.reason = r.String()
		}
		ch <- ev
		return nil
	})
	cancel := ns.Call("watch", obj(map[string]any{"path": path}), cb)
	return ch, cancel, cb
}

func TestWatchDeliversEveryFrameInOrderThenEnd(t *testing.T) {
	ns := installEcho(t)
	ch, _, cb := collect(ns, "/stream")
	defer cb.Release()
	want := []watchEvent{{kind: "open"}, {kind: "frame", data: "{\"n\":1}\n"}, {kind: "frame", data: "{\"n\":2}\n"},
		{kind: "frame", data: "{\"n\":3}\n"}, {kind: "end", reason: "eof"}}
	for i, w := range want {
		if got := <-ch; got != w {
			t.Fatalf("event %d = %+v, want %+v", i, got, w)
		}
	}
}

func TestWatchCancelEndsTheStream(t *testing.T) {
	ns := installEcho(t)
	ch, cancel, cb := collect(ns, "/forever")
	defer cb.Release()
	if e := <-ch; e.kind != "open" {
		t.Fatalf("first event %+v", e)
	}
	if e := <-ch; e.kind != "frame" {
		t.Fatalf("second event %+v", e)
	}
	cancel.Invoke()
	if e := <-ch; e.kind != "end" || e.reason != "canceled" {
		t.Fatalf("after cancel: %+v", e)
	}
	cancel.Invoke() // a second cancel, after the end, is a no-op
}

func TestResetEndsOpenWatches(t *testing.T) {
	b := newBridge(func() (api.Handler, error) { return echo, nil })
	if err := b.reset(); err != nil {
		t.Fatal(err)
	}
	ns := b.install("rvplayTest2")
	ch, _, cb := collect(ns, "/forever")
	defer cb.Release()
	<-ch
	<-ch
	if _, err := await(t, ns.Call("reset")); err != nil {
		t.Fatal(err)
	}
	if e := <-ch; e.kind != "end" {
		t.Fatalf("after reset: %+v", e)
	}
}

// The real offline session: the etcd gateway answers through the bridge.
func TestOfflineSessionSpeaksTheEtcdGateway(t *testing.T) {
	b := newBridge(newMemorySession)
	if err := b.reset(); err != nil {
		t.Fatal(err)
	}
	ns := b.install("rvplayOffline")
	put := `{"key":"` + b64("k1") + `","value":"` + b64("v1") + `"}`
	v, err := await(t, ns.Call("request", obj(map[string]any{"method": "POST", "path": "/v3/kv/put", "body": put})))
	if err != nil {
		t.Fatal(err)
	}
	if v.Get("status").Int() != 200 {
		t.Fatalf("put: %d %s", v.Get("status").Int(), v.Get("body").String())
	}
	v, err = await(t, ns.Call("request", obj(map[string]any{"method": "POST", "path": "/v3/kv/range",
		"body": `{"key":"` + b64("k1") + `"}`})))
	if err != nil {
		t.Fatal(err)
	}
	var rr struct {
		Header struct{ Revision string }
		Kvs    []struct {
			Key         string
			ModRevision string `json:"mod_revision"`
		}
	}
	body := v.Get("body").String()
	if err := json.Unmarshal([]byte(body), &rr); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if rr.Header.Revision != "2" || len(rr.Kvs) != 1 || rr.Kvs[0].ModRevision != "2" {
		t.Fatalf("range: %s", body)
	}
}

func TestBenchRunsTheEngineWorkloadInThePage(t *testing.T) {
	ns := installEcho(t)
	v, err := await(t, ns.Call("bench", 1))
	if err != nil {
		t.Fatal(err)
	}
	if v.Get("ops").Int() == 0 || v.Get("nsPerOp").Float() <= 0 {
		t.Fatalf("bench: ops=%v ns/op=%v", v.Get("ops"), v.Get("nsPerOp"))
	}
}

func b64(s string) string {
	return js.Global().Call("btoa", s).String()
}
