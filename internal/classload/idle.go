package classload

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// IdleReport is what idle sessions cost a server.
type IdleReport struct {
	Sessions int
	// The server's resident memory, live heap (after a collection) and
	// goroutines: before any session, once every session was created
	// (never used), and once each had been used (a write) and unloaded
	// again for being idle.
	Before, Created, Idle Footprint
}

// Footprint is what the server process holds at one moment.
type Footprint struct {
	RSS, Heap  int64
	Goroutines int
}

// PerSession is what each idle session adds to before, by both measures.
func (r *IdleReport) PerSession(at Footprint) (rss, heap int64) {
	n := int64(r.Sessions)
	return (at.RSS - r.Before.RSS) / n, (at.Heap - r.Before.Heap) / n
}

// Print writes the report for a person.
func (r *IdleReport) Print(out io.Writer) {
	line := func(what string, f Footprint) {
		rss, heap := r.PerSession(f)
		fmt.Fprintf(out, "  %-8s RSS %s, heap %s, %d goroutines: %.1f KiB RSS and %.1f KiB heap per session\n",
			what, mib(f.RSS), mib(f.Heap), f.Goroutines, float64(rss)/1024, float64(heap)/1024)
	}
	fmt.Fprintf(out, "%d idle sessions on one server\n", r.Sessions)
	fmt.Fprintf(out, "  %-8s RSS %s, heap %s, %d goroutines\n", "before", mib(r.Before.RSS), mib(r.Before.Heap), r.Before.Goroutines)
	line("created", r.Created)
	line("idle", r.Idle)
}

// IdleSessions creates n guarded sessions on srv, as n teachers would,
// writes once in each (which loads it), and waits until the server has
// unloaded them all for being idle: srv must run with a short
// --session-unload-after and room for n sessions (--max-sessions).
func IdleSessions(ctx context.Context, srv *Server, n int) (*IdleReport, error) {
	c := newClient(1)
	rep := &IdleReport{Sessions: n}
	var err error
	if rep.Before, err = footprint(srv); err != nil {
		return nil, err
	}
	classes := make([]Class, n)
	for i := range n {
		var created struct{ ID, TeacherToken string }
		if err := c.json(ctx, http.MethodPost, srv.URL()+"/sessions", "", []byte(`{}`), http.StatusCreated, &created); err != nil {
			return nil, fmt.Errorf("creating session %d: %w", i, err)
		}
		classes[i] = Class{Base: srv.URL(), ID: created.ID, TeacherToken: created.TeacherToken, c: c}
	}
	if rep.Created, err = footprint(srv); err != nil {
		return nil, err
	}
	for _, cl := range classes {
		body := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"idle"},"data":{"lesson":"1"}}`)
		if err := c.json(ctx, http.MethodPost, cl.URL(collectionPath), cl.TeacherToken, body, http.StatusCreated, nil); err != nil {
			return nil, fmt.Errorf("writing in %s: %w", cl.ID, err)
		}
	}
	c.closeIdle()
	if !waitFor(ctx, 5*time.Minute, 250*time.Millisecond, func() bool {
		m, err := metrics(srv.URL())
		return err == nil && m["rvplay_sessions_loaded"] == 0
	}) {
		return nil, fmt.Errorf("the server did not unload its idle sessions (is --session-unload-after short?)")
	}
	if rep.Idle, err = footprint(srv); err != nil {
		return nil, err
	}
	return rep, nil
}

// footprint reads what srv holds once its goroutines have settled.
func footprint(srv *Server) (Footprint, error) {
	var f Footprint
	var err error
	if f.Goroutines, err = settledGoroutines(srv, -1, leftoverTimeout); err != nil {
		return f, err
	}
	if f.Heap, err = srv.process().HeapInuse(); err != nil {
		return f, err
	}
	if f.RSS, _, err = srv.process().Memory(); err != nil {
		return f, err
	}
	return f, nil
}
