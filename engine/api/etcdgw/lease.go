package etcdgw

import (
	"context"
	"encoding/base64"
	"errors"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// The Lease service's paths, as etcd 3.4's gateway binds them (the
// revoke, timetolive and leases calls also under /v3/kv/lease/, their
// older place): what `etcdctl lease grant|revoke|keep-alive|timetolive|
// list` and curl use against the JSON API. The keep-alive is a stream in
// gRPC; through the gateway one body carries one request, so the answer
// is that stream's one message, as the gateway frames a stream's
// messages: {"result":{...}} and a newline.

var leaseRoutes = map[string]func(g *Gateway, ctx context.Context, body []byte) *api.Response{
	"/v3/lease/grant":         (*Gateway).serveLeaseGrant,
	"/v3/lease/revoke":        (*Gateway).serveLeaseRevoke,
	"/v3/kv/lease/revoke":     (*Gateway).serveLeaseRevoke,
	"/v3/lease/keepalive":     (*Gateway).serveLeaseKeepAlive,
	"/v3/lease/timetolive":    (*Gateway).serveLeaseTimeToLive,
	"/v3/kv/lease/timetolive": (*Gateway).serveLeaseTimeToLive,
	"/v3/lease/leases":        (*Gateway).serveLeaseLeases,
	"/v3/kv/lease/leases":     (*Gateway).serveLeaseLeases,
}

func decodeLeaseGrant(raw []byte, r *mvcc.LeaseGrantRequest) error {
	return decodeMessage(raw, []field{
		{"TTL", "TTL", int64Into(&r.TTL)},
		{"ID", "ID", int64Into(&r.ID)},
	}, nil)
}

// decodeLeaseID decodes LeaseRevokeRequest and LeaseKeepAliveRequest,
// whose one field is the lease's ID.
func decodeLeaseID(raw []byte, id *int64) error {
	return decodeMessage(raw, []field{{"ID", "ID", int64Into(id)}}, nil)
}

func decodeLeaseTimeToLive(raw []byte, id *int64, keys *bool) error {
	return decodeMessage(raw, []field{
		{"ID", "ID", int64Into(id)},
		{"keys", "keys", boolInto(keys)},
	}, nil)
}

func (g *Gateway) serveLeaseGrant(ctx context.Context, body []byte) *api.Response {
	var r mvcc.LeaseGrantRequest
	if err := decodeBody(body, func(raw []byte) error { return decodeLeaseGrant(raw, &r) }); err != nil {
		return decodeError(err)
	}
	out, err := g.LeaseGrant(ctx, &r)
	if err != nil {
		return grpcError(err)
	}
	o := obj{b: []byte{'{'}}
	o.header(g.Header(out.Header.Revision))
	o.int("ID", out.ID)
	o.int("TTL", out.TTL)
	return ok(append(o.b, '}'), out.Header.Revision)
}

func (g *Gateway) serveLeaseRevoke(ctx context.Context, body []byte) *api.Response {
	var id int64
	if err := decodeBody(body, func(raw []byte) error { return decodeLeaseID(raw, &id) }); err != nil {
		return decodeError(err)
	}
	h, err := g.LeaseRevoke(ctx, id)
	if err != nil {
		return grpcError(err)
	}
	o := obj{b: []byte{'{'}}
	o.header(g.Header(h.Revision))
	return ok(append(o.b, '}'), h.Revision)
}

// serveLeaseKeepAlive renews the lease and answers its TTL: 0 for a
// lease that is unknown or expired, not an error, as etcd does.
func (g *Gateway) serveLeaseKeepAlive(ctx context.Context, body []byte) *api.Response {
	var id int64
	if err := decodeBody(body, func(raw []byte) error { return decodeLeaseID(raw, &id) }); err != nil {
		return decodeError(err)
	}
	ttl, err := g.store.LeaseRenew(ctx, id)
	if errors.Is(err, mvcc.ErrLeaseNotFound) {
		ttl, err = 0, nil
	}
	if err != nil {
		return grpcError(err)
	}
	rev := g.store.Rev()
	o := obj{b: []byte(`{"result":{`)}
	o.header(g.Header(rev))
	o.int("ID", id)
	o.int("TTL", ttl)
	return ok(append(o.b, "}}\n"...), rev)
}

// serveLeaseTimeToLive answers an unknown lease with TTL -1, not an
// error, as etcd does.
func (g *Gateway) serveLeaseTimeToLive(ctx context.Context, body []byte) *api.Response {
	var id int64
	var keys bool
	if err := decodeBody(body, func(raw []byte) error { return decodeLeaseTimeToLive(raw, &id, &keys) }); err != nil {
		return decodeError(err)
	}
	out, err := g.store.LeaseTimeToLive(ctx, id, keys)
	if errors.Is(err, mvcc.ErrLeaseNotFound) {
		out, err = &mvcc.LeaseTimeToLiveResponse{Header: mvcc.ResponseHeader{Revision: g.store.Rev()}, ID: id, TTL: -1}, nil
	}
	if err != nil {
		return grpcError(err)
	}
	o := obj{b: []byte{'{'}}
	o.header(g.Header(out.Header.Revision))
	o.int("ID", out.ID)
	o.int("TTL", out.TTL)
	o.int("grantedTTL", out.GrantedTTL)
	if len(out.Keys) > 0 {
		o.name("keys")
		o.b = append(o.b, '[')
		for i, k := range out.Keys {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			o.b = append(o.b, '"')
			o.b = base64.StdEncoding.AppendEncode(o.b, k)
			o.b = append(o.b, '"')
		}
		o.b = append(o.b, ']')
	}
	return ok(append(o.b, '}'), out.Header.Revision)
}

func (g *Gateway) serveLeaseLeases(ctx context.Context, body []byte) *api.Response {
	if err := decodeBody(body, decodeEmpty); err != nil {
		return decodeError(err)
	}
	h, ids := g.store.Leases(ctx)
	o := obj{b: []byte{'{'}}
	o.header(g.Header(h.Revision))
	if len(ids) > 0 {
		o.name("leases")
		o.b = append(o.b, '[')
		for i, id := range ids {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			m := obj{b: append(o.b, '{')}
			m.int("ID", id)
			o.b = append(m.b, '}')
		}
		o.b = append(o.b, ']')
	}
	return ok(append(o.b, '}'), h.Revision)
}
