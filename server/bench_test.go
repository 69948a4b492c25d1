package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"testing"
)

// The Kubernetes layer's cost as a client sees it: a read-modify-write of
// one configmap through the REST API (GET, then PUT with its
// resourceVersion) against the same update one layer down through the
// session's etcd gateway (range, then a txn that puts only if mod_revision
// is unchanged), both over HTTP to the real server routing, on the memory
// backend and on a durable SQLite file. engine/api/kubeapi has the same
// pair in process, without HTTP.

func BenchmarkHTTPUpdate(b *testing.B) {
	for _, backend := range []string{"memory", "sqlite"} {
		b.Run(backend, func(b *testing.B) {
			b.Run("REST", func(b *testing.B) { benchHTTPUpdate(b, backend, restUpdate) })
			b.Run("EtcdGatewayCAS", func(b *testing.B) { benchHTTPUpdate(b, backend, gatewayCAS) })
		})
	}
}

type updateFunc func(b *testing.B, c *http.Client, base string, i int)

func benchHTTPUpdate(b *testing.B, backend string, update updateFunc) {
	path := ""
	if backend == "sqlite" {
		path = filepath.Join(b.TempDir(), "rvplay.db")
	}
	srv := startServer(b, path, "bench")
	base := srv.URL + "/s/bench"
	c := srv.Client()
	send(b, c, "POST", base+"/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"c"},"data":{"n":"0"}}`, http.StatusCreated)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		update(b, c, base, i)
	}
}

func restUpdate(b *testing.B, c *http.Client, base string, i int) {
	url := base + "/api/v1/namespaces/default/configmaps/c"
	var o map[string]any
	if err := json.Unmarshal(send(b, c, "GET", url, "", http.StatusOK), &o); err != nil {
		b.Fatal(err)
	}
	o["data"] = map[string]any{"n": fmt.Sprint(i)}
	body, _ := json.Marshal(o)
	send(b, c, "PUT", url, string(body), http.StatusOK)
}

var benchKey = base64.StdEncoding.EncodeToString([]byte("/registry/configmaps/default/c"))

func gatewayCAS(b *testing.B, c *http.Client, base string, i int) {
	var rr struct {
		Kvs []struct {
			Value       []byte `json:"value"`
			ModRevision string `json:"mod_revision"`
		} `json:"kvs"`
	}
	if err := json.Unmarshal(send(b, c, "POST", base+"/v3/kv/range", `{"key":"`+benchKey+`"}`, http.StatusOK), &rr); err != nil || len(rr.Kvs) != 1 {
		b.Fatal(err, rr)
	}
	var o map[string]any
	if err := json.Unmarshal(rr.Kvs[0].Value, &o); err != nil {
		b.Fatal(err)
	}
	o["data"] = map[string]any{"n": fmt.Sprint(i)}
	value, _ := json.Marshal(o)
	var tr struct {
		Succeeded bool `json:"succeeded"`
	}
	txn := `{"compare":[{"target":"MOD","key":"` + benchKey + `","mod_revision":"` + rr.Kvs[0].ModRevision + `"}],` +
		`"success":[{"request_put":{"key":"` + benchKey + `","value":"` + base64.StdEncoding.EncodeToString(value) + `"}}]}`
	if err := json.Unmarshal(send(b, c, "POST", base+"/v3/kv/txn", txn, http.StatusOK), &tr); err != nil || !tr.Succeeded {
		b.Fatal(err, tr)
	}
}

func send(b *testing.B, c *http.Client, method, url, body string, want int) []byte {
	req, err := http.NewRequest(method, url, bytes.NewReader([]byte(body)))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	if resp.StatusCode != want {
		b.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, out)
	}
	return out
}
