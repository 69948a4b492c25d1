package classload

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync/atomic"
	"time"
)

// Class is a guarded session and the students who joined it.
type Class struct {
	// Base is the server's URL (http://127.0.0.1:40123); the session's
	// APIs are under Base + "/s/" + ID.
	Base         string
	ID           string
	JoinCode     string
	TeacherToken string
	Students     []Student

	c *client
}

// Student is one person of the class and the token they joined with.
type Student struct {
	Name, ID, Token, Namespace string
}

// NewClass creates a guarded session on the server at base and joins n
// students to it, as a teacher and a class would: POST /sessions, then
// POST /s/<id>/join with the join code, one student after another.
func NewClass(ctx context.Context, base string, n int) (*Class, error) {
	c := newClient(n)
	var created struct {
		ID, JoinCode, TeacherToken string
	}
	if err := c.json(ctx, http.MethodPost, base+"/sessions", "", []byte(`{}`), http.StatusCreated, &created); err != nil {
		return nil, fmt.Errorf("creating the session: %w", err)
	}
	cl := &Class{Base: base, ID: created.ID, JoinCode: created.JoinCode, TeacherToken: created.TeacherToken, c: c}
	for i := range n {
		name := fmt.Sprintf("student %03d", i)
		body, _ := json.Marshal(map[string]string{"code": cl.JoinCode, "name": name})
		var joined struct{ Token, ID, Namespace string }
		if err := c.json(ctx, http.MethodPost, cl.URL("/join"), "", body, http.StatusCreated, &joined); err != nil {
			return nil, fmt.Errorf("joining %s: %w", name, err)
		}
		cl.Students = append(cl.Students, Student{Name: name, ID: joined.ID, Token: joined.Token, Namespace: joined.Namespace})
	}
	return cl, nil
}

// URL is the URL of path within the session ("/api/v1/...").
func (cl *Class) URL(path string) string { return cl.Base + "/s/" + cl.ID + path }

// client is the HTTP client of every request but the watches, with
// connections enough for every writer.
type client struct {
	http *http.Client
	// rateLimited counts the 429s the server answered (each waited for
	// and retried).
	rateLimited atomic.Int64
}

func newClient(conns int) *client {
	tr := &http.Transport{MaxIdleConns: conns + 8, MaxIdleConnsPerHost: conns + 8, DisableCompression: true,
		DialContext: dialStamped}
	return &client{http: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

// closeIdle closes the connections kept for reuse, so that the server
// holds nothing for this client any more.
func (c *client) closeIdle() { c.http.CloseIdleConnections() }

// do sends one request with token as its bearer token (none if empty) and
// returns the answer. A 429 is waited out (its Retry-After) and the request
// sent again, as client-go does: the server did nothing with it.
func (c *client) do(ctx context.Context, method, url, token string, body []byte) (int, []byte, error) {
	status, b, _, err := c.send(ctx, method, url, token, body)
	return status, b, err
}

// send is do that also says when the answer arrived at the client's
// socket (Unix nanoseconds): only meaningful on a client of one
// goroutine, whose connections no other request takes meanwhile.
func (c *client) send(ctx context.Context, method, url, token string, body []byte) (int, []byte, int64, error) {
	var conn net.Conn
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { conn = i.Conn }})
	for {
		req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
		if err != nil {
			return 0, nil, 0, err
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Accept", "application/json")
		req.Header.Set("User-Agent", userAgent)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.http.Do(req)
		if err != nil {
			return 0, nil, 0, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return 0, nil, 0, err
		}
		if resp.StatusCode != http.StatusTooManyRequests {
			return resp.StatusCode, b, receivedAt(conn), nil
		}
		c.rateLimited.Add(1)
		if err := sleep(ctx, retryAfter(resp.Header)); err != nil {
			return 0, nil, 0, err
		}
	}
}

// json sends a request and decodes its answer into out, which must come
// with status want.
func (c *client) json(ctx context.Context, method, url, token string, body []byte, want int, out any) error {
	status, b, err := c.do(ctx, method, url, token, body)
	if err != nil {
		return err
	}
	if status != want {
		return fmt.Errorf("%s %s: %d %s", method, url, status, bytes.TrimSpace(b))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}

// userAgent names the load in the server's logs and record, and is the
// field manager of its writes.
const userAgent = "classload/rvplay-bench"

// retryAfter is the wait a 429 asks for: its Retry-After in seconds, or a
// second.
func retryAfter(h http.Header) time.Duration {
	if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return time.Second
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
