package kubeapi

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/kube"
)

// serveWatch starts a watch that counts against the client's watchers (the
// limiter its transport put in ctx): past its cap, kube's 429.
func (h *Handler) serveWatch(ctx context.Context, rq *request, lo kube.ListOptions) *api.Response {
	client := api.WatchLimiter(ctx)
	if !client.Acquire() {
		return statusResponse(kube.NewTooManyRequests())
	}
	w, err := h.reg.Watch(ctx, rq.res, rq.ns, lo)
	if err != nil {
		client.Release()
		return statusResponse(err)
	}
	var stream api.Stream = w
	if v := tableVersion(rq.Header.Get("Accept")); v != "" {
		stream = &tableStream{Watch: w, r: rq.res, version: v, include: rq.Query.Get("includeObject"), h: h}
	}
	return &api.Response{Status: 200, Header: api.Header{
		"Content-Type":  {"application/json"},
		"Cache-Control": {"no-cache, private"},
	}, Stream: &countedStream{Stream: stream, client: client}}
}

// countedStream gives the client's unit back when the watch is closed.
type countedStream struct {
	api.Stream
	client api.Limiter
	once   sync.Once
}

func (c *countedStream) Close() {
	c.Stream.Close()
	c.once.Do(c.client.Release)
}

// tableStream turns the objects of watch events into one-row Tables for
// clients that asked for Tables (kubectl get -w).
type tableStream struct {
	*kube.Watch
	r       *kube.Resource
	version string
	include string
	h       *Handler
}

func (t *tableStream) Next(ctx context.Context) ([]byte, error) {
	b, err := t.Watch.Next(ctx)
	if err != nil {
		return b, err
	}
	var ev struct {
		Type   string          `json:"type"`
		Object json.RawMessage `json:"object"`
	}
	if json.Unmarshal(b, &ev) != nil || ev.Type == kube.Bookmark || ev.Type == kube.Error {
		return b, nil
	}
	o, err := kube.DecodeObject(ev.Object)
	if err != nil {
		return b, nil
	}
	tbl := t.r.Table([]kube.Object{o}, kube.ListMeta{ResourceVersion: kube.ResourceVersion(o)}, t.version, t.include, t.h.reg.Clock().Now())
	out := make([]byte, 0, len(tbl)+32)
	out = append(out, `{"type":"`...)
	out = append(out, ev.Type...)
	out = append(out, `","object":`...)
	out = append(out, tbl...)
	return append(out, "}\n"...), nil
}
