package kubeapi_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/session"
)

func do(t *testing.T, s *session.Session, method, path, body string) (int, map[string]any) {
	t.Helper()
	req := &api.Request{Method: method, Path: path, Header: api.Header{"Content-Type": {"application/json"}, "User-Agent": {"test/1"}}, Body: []byte(body)}
	if i := strings.IndexByte(path, '?'); i >= 0 {
		req.Path = path[:i]
	}
	resp := s.Serve(context.Background(), req)
	var m map[string]any
	json.Unmarshal(resp.Body, &m)
	return resp.Status, m
}

// The same write seen from both sides: metadata.resourceVersion is the
// key's mod_revision in the etcd gateway.
func TestResourceVersionIsTheKeysModRevisionThroughTheGateway(t *testing.T) {
	s, err := session.New("t", mvcc.NewMemoryBackend(), session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	code, cm := do(t, s, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"x"},"data":{"a":"b"}}`)
	if code != 201 {
		t.Fatalf("%d %v", code, cm)
	}
	key := base64.StdEncoding.EncodeToString([]byte("/registry/configmaps/default/x"))
	code, rr := do(t, s, "POST", "/v3/kv/range", `{"key":"`+key+`"}`)
	if code != 200 {
		t.Fatalf("%d %v", code, rr)
	}
	kv := rr["kvs"].([]any)[0].(map[string]any)
	rv := cm["metadata"].(map[string]any)["resourceVersion"]
	if kv["mod_revision"] != rv {
		t.Fatalf("mod_revision %v, resourceVersion %v", kv["mod_revision"], rv)
	}
	value, _ := base64.StdEncoding.DecodeString(kv["value"].(string))
	if !strings.HasPrefix(string(value), `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x","namespace":"default","uid":`) ||
		strings.Contains(string(value), "resourceVersion") {
		t.Fatalf("stored %s", value)
	}
}

// Concurrent read-modify-write clients: every conditional update either
// wins or gets 409, no update is lost, and resourceVersions only grow.
func TestConcurrentConditionalUpdatesLoseNothing(t *testing.T) {
	s, err := session.New("t", mvcc.NewMemoryBackend(), session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	do(t, s, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"counter"},"data":{"n":"0"}}`)
	const clients, increments = 4, 25
	var wg sync.WaitGroup
	var mu sync.Mutex
	conflicts := 0
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < increments; {
				_, cur := do(t, s, "GET", "/api/v1/namespaces/default/configmaps/counter", "")
				var n int
				fmt.Sscan(cur["data"].(map[string]any)["n"].(string), &n)
				cur["data"] = map[string]any{"n": fmt.Sprint(n + 1)}
				b, _ := json.Marshal(cur)
				code, _ := do(t, s, "PUT", "/api/v1/namespaces/default/configmaps/counter", string(b))
				switch code {
				case 200:
					i++
				case 409:
					mu.Lock()
					conflicts++
					mu.Unlock()
				default:
					t.Errorf("PUT: %d", code)
					return
				}
			}
		}()
	}
	wg.Wait()
	_, cur := do(t, s, "GET", "/api/v1/namespaces/default/configmaps/counter", "")
	if got := cur["data"].(map[string]any)["n"]; got != fmt.Sprint(clients*increments) {
		t.Fatalf("counter %v after %d increments (%d conflicts)", got, clients*increments, conflicts)
	}
}
