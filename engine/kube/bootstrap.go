package kube

import (
	"context"
	"errors"
)

// Bootstrap creates the system namespaces, as kube-apiserver does when it
// starts; it is idempotent and cheap once done. The registry calls it before
// every operation, and the REST layer before any Kubernetes request
// (discovery included), so that a session used only through the etcd
// gateway stays an empty etcd while one used as a cluster has them before
// its first answer.
func (reg *Registry) Bootstrap(ctx context.Context) error { return reg.bootstrap(ctx) }

func (reg *Registry) bootstrap(ctx context.Context) error {
	if reg.booted.Load() {
		return nil
	}
	reg.bootMu.Lock()
	defer reg.bootMu.Unlock()
	if reg.booted.Load() {
		return nil
	}
	// The caches start first, as kube-apiserver's do before its
	// post-start hooks create the namespaces: their windows hold what the
	// session writes from here on.
	reg.startCaches()
	ns := Lookup("", "v1", "namespaces")
	for _, name := range reg.systemNS {
		o := Object{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}
		if _, err := reg.create(ctx, ns, "", o, WriteOptions{FieldManager: "kube-apiserver"}); err != nil {
			var se *StatusError
			if errors.As(err, &se) && se.Status.Reason == ReasonAlreadyExists {
				continue
			}
			return err
		}
	}
	reg.booted.Store(true)
	return nil
}
