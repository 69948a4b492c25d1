package main

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/metadata"
)

// GRPC is a Client of one etcd gRPC endpoint through one clientv3 client:
// every request multiplexed on one HTTP/2 connection.
type GRPC struct {
	name     string
	endpoint string
	c        *clientv3.Client
	streams  atomic.Int64

	// putsOneByOne: the server takes no txn of several puts (kine serves
	// only the txn shapes kube-apiserver sends), so PutAll puts each key.
	putsOneByOne bool
}

// NewGRPC connects clientv3 to endpoint (host:port).
func NewGRPC(name, endpoint string) (*GRPC, error) {
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{endpoint},
		DialTimeout: 10 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, err
	}
	return &GRPC{name: name, endpoint: endpoint, c: c}, nil
}

func (g *GRPC) Name() string     { return g.name }
func (g *GRPC) Endpoint() string { return "grpc://" + g.endpoint }
func (g *GRPC) Close() error     { return g.c.Close() }

func (g *GRPC) Put(ctx context.Context, key, value []byte) error {
	_, err := g.c.Put(ctx, string(key), string(value))
	return err
}

func (g *GRPC) Get(ctx context.Context, key []byte) (int64, error) {
	r, err := g.c.Get(ctx, string(key))
	if err != nil || len(r.Kvs) != 1 {
		return 0, err
	}
	return r.Kvs[0].ModRevision, nil
}

func (g *GRPC) PutIfUnchanged(ctx context.Context, key []byte, modRev int64, value []byte) (bool, error) {
	k := string(key)
	r, err := g.c.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(k), "=", modRev)).
		Then(clientv3.OpPut(k, string(value))).
		Else(clientv3.OpGet(k)).
		Commit()
	if err != nil {
		return false, err
	}
	return r.Succeeded, nil
}

func (g *GRPC) PutAll(ctx context.Context, keys [][]byte, value []byte) error {
	if g.putsOneByOne {
		for _, k := range keys {
			if err := g.Put(ctx, k, value); err != nil {
				return err
			}
		}
		return nil
	}
	ops := make([]clientv3.Op, len(keys))
	for i, k := range keys {
		ops[i] = clientv3.OpPut(string(k), string(value))
	}
	_, err := g.c.Txn(ctx).Then(ops...).Commit()
	return err
}

// Watch opens a gRPC Watch stream of its own: clientv3 multiplexes the
// watches of contexts with equal metadata onto one stream, so each watcher
// carries its own, as independent watching processes would have.
func (g *GRPC) Watch(ctx context.Context, prefix []byte, created func(error), event func(value []byte)) {
	ctx = metadata.AppendToOutgoingContext(ctx, "bench-watcher", strconv.FormatInt(g.streams.Add(1), 10))
	ch := g.c.Watch(ctx, string(prefix), clientv3.WithPrefix(), clientv3.WithCreatedNotify())
	isCreated := false
	for r := range ch {
		if err := r.Err(); err != nil {
			if !isCreated {
				created(err)
			}
			return
		}
		if r.Created && !isCreated {
			isCreated = true
			created(nil)
		}
		for _, e := range r.Events {
			event(e.Kv.Value)
		}
	}
	if !isCreated {
		created(fmt.Errorf("watch ended before it was created: %v", ctx.Err()))
	}
}
