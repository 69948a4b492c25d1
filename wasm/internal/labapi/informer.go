package labapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/rvplay/rvplay/engine/client"
)

// labInformer is one informer of a client: a Reflector filling a Store,
// which the page starts, stops, disconnects and resumes.
type labInformer struct {
	id  string
	inf *client.Informer

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// InformerState is what every informer operation answers.
type InformerState struct {
	ID              string `json:"informer"`
	Resource        string `json:"resource"`
	Namespace       string `json:"namespace,omitempty"`
	Running         bool   `json:"running"`
	Disconnected    bool   `json:"disconnected"`
	Synced          bool   `json:"synced"`
	WatchList       bool   `json:"watchList"`
	Bookmarks       bool   `json:"bookmarks"`
	ResourceVersion string `json:"resourceVersion"`
	Items           int    `json:"items"`
	// Objects is the store's contents, for the "store" operation.
	Objects []json.RawMessage `json:"objects,omitempty"`
}

func (c *labClient) createInformer(ctx context.Context, req *Request) (any, error) {
	if req.Informer == "" {
		return nil, errors.New("rvplay clients: an informer needs an id")
	}
	m, ns, err := c.target(ctx, req)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	_, exists := c.informers[req.Informer]
	c.mu.Unlock()
	if exists {
		return nil, fmt.Errorf("rvplay clients: client %q already has an informer %q (remove it first)", c.id, req.Informer)
	}
	inf := client.NewInformer(c.c.Resource(m.Resource).Namespace(ns))
	r := inf.Reflector
	r.Clock = c.hub.clock
	r.Rand = c.hub.rand
	r.LabelSelector, r.FieldSelector = req.LabelSelector, req.FieldSelector
	if req.WatchList != nil {
		r.WatchList = *req.WatchList
	}
	if req.Bookmarks != nil {
		r.Bookmarks = *req.Bookmarks
	}
	id := req.Informer
	r.OnStep = func(s client.Step) { c.reflectorStep(id, s) }
	li := &labInformer{id: id, inf: inf}
	c.mu.Lock()
	c.informers[id] = li
	c.mu.Unlock()
	return li.state(false), nil
}

func (c *labClient) informerOp(req *Request) (any, error) {
	c.mu.Lock()
	li := c.informers[req.Informer]
	if li != nil && req.Op == "remove" {
		delete(c.informers, req.Informer)
	}
	c.mu.Unlock()
	if li == nil {
		return nil, fmt.Errorf("rvplay clients: client %q has no informer %q", c.id, req.Informer)
	}
	r := li.inf.Reflector
	switch req.Op {
	case "start":
		li.start()
	case "stop", "remove":
		li.stop()
	case "disconnect":
		r.Disconnect()
	case "resume":
		r.Resume()
	case "configure":
		if req.WatchList != nil {
			r.SetWatchList(*req.WatchList)
		}
		if req.Bookmarks != nil {
			r.SetBookmarks(*req.Bookmarks)
		}
	case "store":
		return li.state(true), nil
	}
	return li.state(false), nil
}

// start runs the reflector in the background; a running one is left alone.
func (li *labInformer) start() {
	li.mu.Lock()
	defer li.mu.Unlock()
	if li.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	li.cancel, li.done = cancel, done
	li.inf.Reflector.Resume() // a stopped informer starts connected
	go func() {
		defer close(done)
		li.inf.Run(ctx)
	}()
}

// stop ends the reflector and waits until it has let go of its watch.
func (li *labInformer) stop() {
	li.mu.Lock()
	cancel, done := li.cancel, li.done
	li.cancel, li.done = nil, nil
	li.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

func (li *labInformer) state(withObjects bool) InformerState {
	r := li.inf.Reflector
	li.mu.Lock()
	running := li.cancel != nil
	li.mu.Unlock()
	watchList, bookmarks := r.Modes()
	st := InformerState{ID: li.id, Resource: r.Client.Resource().String(), Namespace: r.Client.NamespaceName(),
		Running: running, Disconnected: r.Disconnected(), Synced: li.inf.HasSynced(),
		WatchList: watchList, Bookmarks: bookmarks,
		ResourceVersion: li.inf.Store.ResourceVersion(), Items: li.inf.Store.Len()}
	if withObjects {
		objs := li.inf.Store.List()
		st.Objects = make([]json.RawMessage, 0, len(objs))
		for _, o := range objs {
			st.Objects = append(st.Objects, o.JSON())
		}
	}
	return st
}
