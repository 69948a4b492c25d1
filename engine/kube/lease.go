package kube

import (
	"context"
	"sync"
	"time"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// EventTTL is kube-apiserver's --event-ttl default: an Event is put with
// an etcd lease that expires an hour after it is written, so that etcd
// deletes it then.
const EventTTL = 3600

// Objects with a TTL (Events: Resource.TTL) are put with an etcd lease, as
// kube-apiserver's etcd3 storage puts them: its lease manager grants a
// lease of the TTL plus a reuse window (5% of the TTL, at most 60 s:
// 3,660 s for an Event) and attaches to it every such object written
// within that window (up to 1,000), so that a burst of Events takes one
// lease and expires in one revision, each between TTL and TTL + 60 s
// after it was written. An update puts the object with a lease again (the
// lease manager's current one), as kube's TTL function answers on update
// too; a no-op update writes nothing and keeps the old lease. kube keeps
// one manager per resource's storage: core/v1 Events and (in the server
// build) events.k8s.io/v1 Events, the only resources with a TTL here, each
// have theirs, over the same keys.

const (
	leaseReuseSeconds = 60
	leaseReusePercent = 5
	leaseMaxObjects   = 1000
)

// leaseManager is kube's etcd3 leaseManager over the registry's store.
type leaseManager struct {
	mu       sync.Mutex
	id       int64
	expiry   time.Time
	attached int64
}

// lease returns the lease to put an object of r with (0: none).
func (reg *Registry) lease(ctx context.Context, r *Resource) (int64, error) {
	if r.TTL == 0 {
		return 0, nil
	}
	l := &reg.leases
	if r.conv != nil {
		l = &reg.convertedLeases
	}
	now := reg.clock.Now()
	ttl := r.TTL
	reuse := min(ttl*leaseReusePercent/100, leaseReuseSeconds)
	l.mu.Lock()
	defer l.mu.Unlock()
	valid := now.Add(time.Duration(ttl) * time.Second).Before(l.expiry)
	sufficient := now.Add(time.Duration(ttl+reuse) * time.Second).After(l.expiry)
	l.attached++
	if valid && sufficient && l.attached <= leaseMaxObjects {
		return l.id, nil
	}
	resp, err := reg.kv.LeaseGrant(ctx, &mvcc.LeaseGrantRequest{TTL: ttl + reuse})
	if err != nil {
		return 0, err
	}
	l.id, l.expiry, l.attached = resp.ID, now.Add(time.Duration(ttl+reuse)*time.Second), 1
	return l.id, nil
}
