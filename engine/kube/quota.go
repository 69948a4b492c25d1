package kube

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// A write the store refuses for one of its bounds (mvcc.QuotaError: the
// session's bytes or keys, the server's memory budget, or the NOSPACE
// alarm) reads on the Kubernetes API as kube-apiserver's ResourceQuota
// admission words a write beyond a ResourceQuota: 403 Forbidden,
//
//	configmaps "x" is forbidden: exceeded quota: quota-backend-bytes, requested: storage=1236, used: storage=64Mi, limited: storage=64Mi
//
// with the bound named by its flag and its figures in a resource of its
// own: storage (bytes of retained records, --quota-backend-bytes, also
// while the NOSPACE alarm is raised), count/keys (keys in the session,
// --max-keys-per-session) and memory (bytes of the server's key indexes,
// --memory-budget). kube-apiserver itself would relay etcd's
// "etcdserver: mvcc: database space exceeded" as a 500; a quota's 403 is
// what a Kubernetes client knows how to read as "you may not add this".

// quotaWording is how each bound reads.
var quotaWording = map[mvcc.Quota]struct {
	name, resource string
	bytes          bool
}{
	mvcc.QuotaBackendBytes: {"quota-backend-bytes", "storage", true},
	mvcc.QuotaKeys:         {"max-keys-per-session", "count/keys", false},
	mvcc.QuotaMemory:       {"memory-budget", "memory", true},
}

// quotaExceeded words err as ResourceQuota admission's refusal of a write
// of resource r named name when the store refused it for a bound, and
// returns any other error as it is.
func quotaExceeded(r *Resource, name string, err error) error {
	var qe *mvcc.QuotaError
	if !errors.As(err, &qe) {
		return err
	}
	w := quotaWording[qe.Quota]
	f := func(v int64) string { return w.resource + "=" + quantity(v, w.bytes) }
	return NewForbidden(r.Group, r.Resource, name, fmt.Sprintf("exceeded quota: %s, requested: %s, used: %s, limited: %s",
		w.name, f(qe.Requested), f(qe.Used), f(qe.Limit)))
}

// quantity is an integer as resource.Quantity prints it: bytes (binary
// SI) from 1024 up in the largest of Ki, Mi, Gi... that divides them, or
// bare; counts, and bytes under 1024, in decimal SI (k, M, G...).
func quantity(v int64, bytes bool) string {
	if bytes && (v >= 1024 || v <= -1024) {
		n, i := v, 0
		for n%1024 == 0 && i < 6 {
			n /= 1024
			i++
		}
		return strconv.FormatInt(n, 10) + []string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}[i]
	}
	n, i := v, 0
	for n != 0 && n%1000 == 0 && i < 6 {
		n /= 1000
		i++
	}
	return strconv.FormatInt(n, 10) + []string{"", "k", "M", "G", "T", "P", "E"}[i]
}
