package etcdgrpc

import (
	"context"
	"errors"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/session"
	"github.com/rvplay/rvplay/server/classroom"
)

// Registry serves the sessions of a classroom registry, and answers its
// refusals as etcd answers the like: no room to load one more session is
// etcd's shedding of load, a server shutting down is a stopped etcd.
func Registry(r *classroom.Registry) Sessions { return registry{r} }

type registry struct{ r *classroom.Registry }

func (g registry) Lookup(name string) (guarded, ok bool) {
	s, ok := g.r.Lookup(name)
	return s.Guarded, ok
}

func (g registry) Authenticate(name, password string) (api.Principal, bool) {
	return g.r.Authenticate(name, password)
}

func (g registry) Acquire(ctx context.Context, name string) (*session.Session, func(), error) {
	l, release, err := g.r.Acquire(ctx, name)
	switch {
	case err == nil:
		return l.Session(), release, nil
	case errors.Is(err, classroom.ErrNotFound):
		return nil, nil, ErrSessionGone
	case errors.Is(err, classroom.ErrTooManyLoaded):
		return nil, nil, mvcc.ErrTooManyRequests
	case errors.Is(err, classroom.ErrClosed):
		return nil, nil, mvcc.ErrStopped
	}
	return nil, nil, err
}
