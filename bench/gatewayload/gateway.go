package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Gateway is a Client of one etcd v3 JSON gateway.
type Gateway struct {
	Base string // e.g. http://127.0.0.1:2379 or http://127.0.0.1:8080/s/bench
	name string
	c    *http.Client
}

// NewGateway returns a client with enough idle connections for the load.
func NewGateway(name, base string, conns int) *Gateway {
	tr := &http.Transport{MaxIdleConns: conns * 2, MaxIdleConnsPerHost: conns * 2, DisableCompression: true}
	return &Gateway{name: name, Base: strings.TrimRight(base, "/"), c: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

func (g *Gateway) Name() string     { return g.name }
func (g *Gateway) Endpoint() string { return g.Base }
func (g *Gateway) Close() error     { g.c.CloseIdleConnections(); return nil }

func (g *Gateway) post(ctx context.Context, path string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, g.Base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hr.Header.Set("Content-Type", "application/json")
	res, err := g.c.Do(hr)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", g.name, path, res.StatusCode, raw)
	}
	if resp != nil {
		return json.Unmarshal(raw, resp)
	}
	return nil
}

// The few gateway shapes the load needs. Bytes travel as base64 and
// 64-bit integers as strings, as etcd's gateway writes them.
type kv struct {
	Key         []byte `json:"key"`
	Value       []byte `json:"value"`
	ModRevision int64  `json:"mod_revision,string"`
}

type rangeResp struct {
	Kvs []kv `json:"kvs"`
}

type txnResp struct {
	Succeeded bool `json:"succeeded"`
}

type putReq struct {
	Key   []byte `json:"key"`
	Value []byte `json:"value,omitempty"`
}

func (g *Gateway) Put(ctx context.Context, key, value []byte) error {
	return g.post(ctx, "/v3/kv/put", putReq{Key: key, Value: value}, nil)
}

func (g *Gateway) Get(ctx context.Context, key []byte) (int64, error) {
	var rr rangeResp
	if err := g.post(ctx, "/v3/kv/range", map[string]any{"key": key}, &rr); err != nil {
		return 0, err
	}
	if len(rr.Kvs) != 1 {
		return 0, nil
	}
	return rr.Kvs[0].ModRevision, nil
}

func (g *Gateway) PutIfUnchanged(ctx context.Context, key []byte, modRev int64, value []byte) (bool, error) {
	var tr txnResp
	err := g.post(ctx, "/v3/kv/txn", map[string]any{
		"compare": []any{map[string]any{"key": key, "target": "MOD", "result": "EQUAL", "mod_revision": strconv.FormatInt(modRev, 10)}},
		"success": []any{map[string]any{"request_put": putReq{Key: key, Value: value}}},
		"failure": []any{map[string]any{"request_range": map[string]any{"key": key}}},
	}, &tr)
	return tr.Succeeded, err
}

func (g *Gateway) PutAll(ctx context.Context, keys [][]byte, value []byte) error {
	var ops []any
	for _, k := range keys {
		ops = append(ops, map[string]any{"request_put": putReq{Key: k, Value: value}})
	}
	return g.post(ctx, "/v3/kv/txn", map[string]any{"success": ops}, nil)
}

// Watch holds one HTTP stream, as every gateway watcher does.
func (g *Gateway) Watch(ctx context.Context, prefix []byte, created func(error), event func(value []byte)) {
	end := prefixEnd(prefix)
	body, _ := json.Marshal(map[string]any{"create_request": map[string]any{"key": prefix, "range_end": end}})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.Base+"/v3/watch", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	// Watch streams need their own client: no overall timeout.
	resp, err := (&http.Client{Transport: g.c.Transport}).Do(req)
	if err != nil {
		created(err)
		return
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	isCreated := false
	for {
		var m struct {
			Result struct {
				Created bool `json:"created"`
				Events  []struct {
					Kv kv `json:"kv"`
				} `json:"events"`
			} `json:"result"`
		}
		if err := dec.Decode(&m); err != nil {
			if !isCreated {
				created(fmt.Errorf("watch: %v", err))
			}
			return
		}
		if m.Result.Created && !isCreated {
			isCreated = true
			created(nil)
		}
		for _, e := range m.Result.Events {
			event(e.Kv.Value)
		}
	}
}
