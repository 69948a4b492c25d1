package session

import (
	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/api/etcdgw"
	"github.com/rvplay/rvplay/engine/api/kubeapi"
)

// Refuse answers a request a transport refused before a session saw it, in
// the protocol of its path (relative to a session's base URL, or a path of
// the server's own): etcd's error body on the gateway's paths, a Kubernetes
// Status everywhere else.
func Refuse(path string, r api.Refusal) *api.Response {
	if IsEtcdPath(path) {
		return etcdgw.Refuse(r)
	}
	return kubeapi.Refuse(r)
}
