// Package jsconsole runs the lab's console (web/static/js/console.js, the
// one implementation of kubectl and etcdctl the lab has) under Node against
// an api.Handler in this process, for Go tests: the golden comparisons with
// the real tools (test/consolediff) and the lessons' replays
// (engine/lesson/lessontest). The console's transport sends messages to
// this process (host.mjs), which answers each request and watch from the
// handler, as the engine in the page answers the lab: natively over the
// pipes of a Node process (link_native.go), under WebAssembly in the Node
// the test itself runs in (link_js.go).
//
// It is test tooling: it needs Node (node on PATH) and the repository's
// sources; product code must not import it.
package jsconsole

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/rvplay/rvplay/engine/api"
)

// ErrNoNode is returned by Start when there is no node to run the console.
var ErrNoNode = errors.New("jsconsole: node is not on PATH (Debian's nodejs package; scripts/ensure-deps.sh installs it)")

// Options configure a Console.
type Options struct {
	// Now is the clock the console reads (describe's ages). Zero: the wall
	// clock.
	Now time.Time
}

// Output is where one command's output goes.
type Output struct {
	Stdout, Stderr io.Writer
	// Streaming is called when the command becomes a stream (a watch).
	Streaming func()
	// EditorText is the lab editor's text, what `-f -` reads without a
	// heredoc.
	EditorText string
	// Edit is the editor kubectl edit opens: it returns what the learner
	// saved, or false to cancel. Nil cancels.
	Edit func(text string) (string, bool)
	// Now, if set, is the time the console reads during this command (a
	// test's fake clock); else the console's own.
	Now time.Time
}

// Console is one console (one page) running under Node.
type Console struct {
	h    api.Handler
	link link

	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	nextID  int
	runs    map[int]*run
	watches map[int]context.CancelFunc
}

type run struct {
	out       Output
	exit      chan int
	streaming sync.Once
}

// link carries the messages between this process and host.mjs.
type link interface {
	// send delivers one message to the console (never re-entering this
	// package from inside the call).
	send(msg []byte)
	// close ends the console; no message comes after it returns.
	close() error
}

// hostModule is host.mjs's path.
func hostModule() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "host.mjs")
}

func newConsole(h api.Handler) *Console {
	c := &Console{h: h, runs: map[int]*run{}, watches: map[int]context.CancelFunc{}}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c
}

// Close ends the console and its watches.
func (c *Console) Close() error {
	c.cancel()
	return c.link.close()
}

func (c *Console) send(m map[string]any) {
	b, _ := json.Marshal(m)
	c.link.send(b)
}

type message struct {
	ID      int               `json:"id"`
	Type    string            `json:"type"`
	Stream  string            `json:"stream"`
	Text    string            `json:"text"`
	Code    int               `json:"code"`
	RID     int               `json:"rid"`
	WID     int               `json:"wid"`
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Query   string            `json:"query"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

// receive handles one message from the console.
func (c *Console) receive(b []byte) {
	var m message
	if err := json.Unmarshal(b, &m); err != nil {
		return
	}
	switch m.Type {
	case "request":
		go c.request(m)
	case "watch":
		c.watch(m)
	case "unwatch":
		c.mu.Lock()
		if cancel := c.watches[m.WID]; cancel != nil {
			cancel()
		}
		c.mu.Unlock()
	default:
		c.mu.Lock()
		rn := c.runs[m.ID]
		c.mu.Unlock()
		if rn != nil {
			c.toRun(rn, m)
		}
	}
}

// ended is called once the console is gone: every command still waiting
// ends.
func (c *Console) ended() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, rn := range c.runs {
		rn.exit <- 255
		delete(c.runs, id)
	}
}

func (c *Console) toRun(rn *run, m message) {
	switch m.Type {
	case "output":
		w := rn.out.Stdout
		if m.Stream == "stderr" {
			w = rn.out.Stderr
		}
		if w != nil {
			_, _ = io.WriteString(w, m.Text)
		}
	case "streaming":
		rn.streaming.Do(func() {
			if rn.out.Streaming != nil {
				rn.out.Streaming()
			}
		})
	case "edit":
		if rn.out.Edit == nil {
			c.send(map[string]any{"op": "edited", "id": m.ID, "text": nil})
			return
		}
		go func() {
			text, ok := rn.out.Edit(m.Text)
			if !ok {
				c.send(map[string]any{"op": "edited", "id": m.ID, "text": nil})
				return
			}
			c.send(map[string]any{"op": "edited", "id": m.ID, "text": text})
		}()
	case "exit":
		c.mu.Lock()
		delete(c.runs, m.ID)
		c.mu.Unlock()
		rn.exit <- m.Code
	}
}

func (c *Console) apiRequest(m message) *api.Request {
	q, _ := url.ParseQuery(m.Query)
	h := api.Header{}
	for k, v := range m.Headers {
		h.Set(k, v)
	}
	return &api.Request{Method: m.Method, Path: m.Path, Query: q, Header: h, Body: []byte(m.Body)}
}

func (c *Console) request(m message) {
	resp := c.h.Serve(c.ctx, c.apiRequest(m))
	body := resp.Body
	if resp.Stream != nil {
		for {
			f, err := resp.Stream.Next(c.ctx)
			if err != nil {
				break
			}
			body = append(body, f...)
		}
		resp.Stream.Close()
	}
	headers := map[string]string{}
	for k, v := range resp.Header {
		headers[k] = strings.Join(v, ", ")
	}
	c.send(map[string]any{"op": "response", "rid": m.RID, "status": resp.Status, "headers": headers, "body": string(body)})
}

func (c *Console) watch(m message) {
	ctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	c.watches[m.WID] = cancel
	c.mu.Unlock()
	go func() {
		defer func() {
			cancel()
			c.mu.Lock()
			delete(c.watches, m.WID)
			c.mu.Unlock()
		}()
		resp := c.h.Serve(ctx, c.apiRequest(m))
		c.send(map[string]any{"op": "open", "wid": m.WID, "status": resp.Status, "body": string(resp.Body)})
		if resp.Stream == nil {
			c.send(map[string]any{"op": "end", "wid": m.WID, "reason": "eof"})
			return
		}
		defer resp.Stream.Close()
		var pending string
		for {
			f, err := resp.Stream.Next(ctx)
			if err != nil {
				reason := "eof"
				if ctx.Err() != nil {
					reason = "canceled"
				}
				c.send(map[string]any{"op": "end", "wid": m.WID, "reason": reason})
				return
			}
			// Frames are JSON lines; the page's transports hand the console one
			// line per frame.
			pending += string(f)
			for {
				i := strings.IndexByte(pending, '\n')
				if i < 0 {
					break
				}
				if line := strings.TrimSpace(pending[:i]); line != "" {
					c.send(map[string]any{"op": "frame", "wid": m.WID, "data": line})
				}
				pending = pending[i+1:]
			}
		}
	}()
}

// Run runs one input and returns its exit status. When ctx ends it sends
// Ctrl+C and waits for the command to end.
func (c *Console) Run(ctx context.Context, input string, out Output) int {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	rn := &run{out: out, exit: make(chan int, 1)}
	c.runs[id] = rn
	c.mu.Unlock()
	msg := map[string]any{"op": "run", "id": id, "input": input, "editorText": out.EditorText}
	if !out.Now.IsZero() {
		msg["now"] = out.Now.UTC().Format(time.RFC3339Nano)
	}
	c.send(msg)
	select {
	case code := <-rn.exit:
		return code
	case <-ctx.Done():
		c.send(map[string]any{"op": "cancel", "id": id})
		return <-rn.exit
	}
}

// RunString runs one input at time now (zero: the console's clock) and
// returns what it printed (stdout, then stderr) and its status.
func (c *Console) RunString(ctx context.Context, input, editorText string, now time.Time) (string, int) {
	var out, errOut strings.Builder
	code := c.Run(ctx, input, Output{Stdout: &out, Stderr: &errOut, EditorText: editorText, Now: now})
	return out.String() + errOut.String(), code
}
