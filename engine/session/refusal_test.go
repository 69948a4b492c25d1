package session

import (
	"encoding/json"
	"testing"

	"github.com/rvplay/rvplay/engine/api"
)

// Every refusal is answered in the protocol of its path: etcd's error
// body (gRPC code and etcd's message) on the gateway's paths, a
// Kubernetes Status (code and reason) elsewhere, with Retry-After where
// the client should come back.
func TestRefusalsAreAnsweredInThePathsProtocol(t *testing.T) {
	for _, c := range []struct {
		r          api.Refusal
		etcdStatus int
		etcdCode   int
		etcdMsg    string
		kubeCode   int
		kubeReason string
		retryAfter string
	}{
		{api.Refusal{Kind: api.Unauthenticated}, 401, 16, "etcdserver: invalid auth token", 401, "Unauthorized", ""},
		{api.Refusal{Kind: api.Forbidden, Detail: `User "u" cannot put path "/x"`}, 403, 7, "etcdserver: permission denied", 403, "Forbidden", ""},
		{api.Refusal{Kind: api.TooManyRequests, RetryAfter: 3}, 429, 8, "etcdserver: too many requests", 429, "TooManyRequests", "3"},
		{api.Refusal{Kind: api.Stopped, Detail: "closing"}, 503, 14, "etcdserver: server stopped", 503, "ServiceUnavailable", ""},
		{api.Refusal{Kind: api.Failed, Detail: "disk on fire"}, 503, 14, "disk on fire", 500, "InternalError", ""},
	} {
		etcd := Refuse("/v3/kv/put", c.r)
		var e struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(etcd.Body, &e); err != nil || etcd.Status != c.etcdStatus || e.Code != c.etcdCode || e.Message != c.etcdMsg {
			t.Errorf("%v on etcd: %d %s", c.r, etcd.Status, etcd.Body)
		}
		kube := Refuse("/api/v1/namespaces", c.r)
		var st struct {
			Kind   string `json:"kind"`
			Code   int    `json:"code"`
			Reason string `json:"reason"`
		}
		if err := json.Unmarshal(kube.Body, &st); err != nil || st.Kind != "Status" || kube.Status != c.kubeCode || st.Code != c.kubeCode || st.Reason != c.kubeReason {
			t.Errorf("%v on Kubernetes: %d %s", c.r, kube.Status, kube.Body)
		}
		for name, resp := range map[string]*api.Response{"etcd": etcd, "Kubernetes": kube} {
			if got := resp.Header.Get("Retry-After"); got != c.retryAfter {
				t.Errorf("%v on %s: Retry-After %q, want %q", c.r, name, got, c.retryAfter)
			}
		}
	}
}
