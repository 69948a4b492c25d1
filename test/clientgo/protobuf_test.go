package clientgo

import (
	"net/http"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Typed clientsets prefer protobuf since client-go 0.32 when ContentType
// is unset: request bodies are protobuf, Accept lists protobuf then JSON.
// rvplay accepts the protobuf bodies and answers JSON, so a default
// rest.Config works too.
func TestTypedClientWithDefaultProtobufContentType(t *testing.T) {
	base := startServer(t)
	ensureNamespace(t, clientset(t, base), "proto")
	var mu sync.Mutex
	var sent []string
	cfg := &rest.Config{Host: base}
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			sent = append(sent, r.Method+" "+r.Header.Get("Content-Type"))
			mu.Unlock()
			return rt.RoundTrip(r)
		})
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	cms := cs.CoreV1().ConfigMaps("proto")
	created, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Data: map[string]string{"a": "b"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.Data["a"] != "b" || created.ResourceVersion == "" {
		t.Fatalf("created %+v", created)
	}
	created.Data["a"] = "c"
	if _, err := cms.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update: %v", err)
	}
	if _, err := cms.Update(ctx, created, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("stale update: want Conflict, got %v", err)
	}
	if err := cms.Delete(ctx, "p", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	var proto bool
	for _, s := range sent {
		if s == "POST application/vnd.kubernetes.protobuf" {
			proto = true
		}
	}
	if !proto {
		t.Fatalf("client-go did not send protobuf (requests %q): the test no longer checks what it says", sent)
	}
}
