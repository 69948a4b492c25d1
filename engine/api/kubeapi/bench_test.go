package kubeapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/api/etcdgw"
	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// eventRV finds the object's resourceVersion in a watch event line
// without decoding it, so that 500 watchers cost the client little.
func eventRV(line []byte) string {
	const k = `"resourceVersion":"`
	i := bytes.Index(line, []byte(k))
	if i < 0 {
		return ""
	}
	rest := line[i+len(k):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}

// cpuTimer reports process CPU time per op beside ns/op.
func cpuTimer(b *testing.B) func() {
	start := processCPU()
	return func() {
		if start > 0 && b.N > 0 {
			b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func benchFixture(b *testing.B) *fixture {
	st, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	h := New(Options{Store: st})
	b.Cleanup(h.Registry().Close)
	return &fixture{h: h, store: st}
}

// BenchmarkRESTUpdate is a client's read-modify-write through the
// Kubernetes API: GET the configmap, PUT it back changed with its
// resourceVersion (an optimistic-concurrency update).
func BenchmarkRESTUpdate(b *testing.B) {
	f := benchFixture(b)
	f.do("POST", "/api/v1/namespaces/default/configmaps", "application/json", []byte(`{"metadata":{"name":"c"},"data":{"n":"0"}}`))
	b.ReportAllocs()
	b.ResetTimer()
	defer cpuTimer(b)()
	for i := 0; i < b.N; i++ {
		g := f.do("GET", "/api/v1/namespaces/default/configmaps/c", "", nil)
		var o map[string]any
		json.Unmarshal(g.Body, &o)
		o["data"] = map[string]any{"n": fmt.Sprint(i)}
		body, _ := json.Marshal(o)
		if r := f.do("PUT", "/api/v1/namespaces/default/configmaps/c", "application/json", body); r.Status != 200 {
			b.Fatalf("%d %s", r.Status, r.Body)
		}
	}
}

// BenchmarkEtcdGatewayCAS is the same read-modify-write one layer down,
// through the session's etcd gateway: range the key, then a txn that
// puts only if mod_revision is unchanged.
func BenchmarkEtcdGatewayCAS(b *testing.B) {
	st, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	gw := etcdgw.NewWithOptions(st, etcdgw.Options{ClusterID: 1, MemberID: 1})
	key := base64.StdEncoding.EncodeToString([]byte("/registry/configmaps/default/c"))
	do := func(path, body string) []byte {
		r := gw.Serve(context.Background(), &api.Request{Method: "POST", Path: path, Header: api.Header{"Content-Type": {"application/json"}}, Body: []byte(body)})
		if r.Status != 200 {
			b.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
		return r.Body
	}
	value := base64.StdEncoding.EncodeToString([]byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","namespace":"default"},"data":{"n":"0"}}`))
	do("/v3/kv/put", `{"key":"`+key+`","value":"`+value+`"}`)
	b.ReportAllocs()
	b.ResetTimer()
	defer cpuTimer(b)()
	for i := 0; i < b.N; i++ {
		var rr struct {
			Kvs []struct {
				ModRevision string `json:"mod_revision"`
			} `json:"kvs"`
		}
		json.Unmarshal(do("/v3/kv/range", `{"key":"`+key+`"}`), &rr)
		var tr struct {
			Succeeded bool `json:"succeeded"`
		}
		json.Unmarshal(do("/v3/kv/txn", `{"compare":[{"target":"MOD","key":"`+key+`","mod_revision":"`+rr.Kvs[0].ModRevision+`"}],"success":[{"request_put":{"key":"`+key+`","value":"`+value+`"}}]}`), &tr)
		if !tr.Succeeded {
			b.Fatal("cas failed")
		}
	}
}

// BenchmarkListPaged lists 10,000 configmaps in pages of 500 (one op = the
// whole list, 20 requests).
func BenchmarkListPaged(b *testing.B) {
	f := benchFixture(b)
	ctx := context.Background()
	cmr := kube.Lookup("", "v1", "configmaps")
	for i := 0; i < 10000; i++ {
		o := kube.Object{"metadata": map[string]any{"name": fmt.Sprintf("cm-%05d", i)}, "data": map[string]any{"k": "v"}}
		if _, err := f.h.Registry().Create(ctx, cmr, "default", o, kube.WriteOptions{FieldManager: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	defer cpuTimer(b)()
	for i := 0; i < b.N; i++ {
		cont, n := "", 0
		for {
			r := f.do("GET", "/api/v1/namespaces/default/configmaps?limit=500&continue="+cont, "", nil)
			var l struct {
				Metadata struct {
					Continue string `json:"continue"`
				} `json:"metadata"`
				Items []json.RawMessage `json:"items"`
			}
			if err := json.Unmarshal(r.Body, &l); err != nil || r.Status != 200 {
				b.Fatalf("%d %v", r.Status, err)
			}
			n += len(l.Items)
			if cont = l.Metadata.Continue; cont == "" {
				break
			}
		}
		if n != 10000 {
			b.Fatalf("listed %d", n)
		}
	}
}

// BenchmarkWatchFanOut has 500 watchers on configmaps; each op is one
// update, done when every watcher has received its event. It reports the
// per-watcher delivery latency (p50, p99).
func BenchmarkWatchFanOut(b *testing.B) {
	const watchers = 500
	f := benchFixture(b)
	f.do("POST", "/api/v1/namespaces/default/configmaps", "application/json", []byte(`{"metadata":{"name":"c"},"data":{"n":"0"}}`))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type delivery struct {
		rv string
		at time.Time
	}
	got := make(chan delivery, watchers*64)
	var wg sync.WaitGroup
	for i := 0; i < watchers; i++ {
		r := f.do("GET", fmt.Sprintf("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=%d", f.store.Rev()), "", nil)
		if r.Stream == nil {
			b.Fatalf("%d %s", r.Status, r.Body)
		}
		wg.Add(1)
		go func(s api.Stream) {
			defer wg.Done()
			defer s.Close()
			for {
				line, err := s.Next(ctx)
				if err != nil {
					return
				}
				got <- delivery{eventRV(line), time.Now()}
			}
		}(r.Stream)
	}
	lat := make([]time.Duration, 0, b.N*watchers)
	b.ResetTimer()
	stopCPU := cpuTimer(b)
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r := f.do("PUT", "/api/v1/namespaces/default/configmaps/c", "application/json", []byte(fmt.Sprintf(`{"metadata":{"name":"c"},"data":{"n":"%d"}}`, i+1)))
		if r.Status != 200 {
			b.Fatalf("%d %s", r.Status, r.Body)
		}
		var o map[string]any
		json.Unmarshal(r.Body, &o)
		rv := kube.ResourceVersion(o)
		for n := 0; n < watchers; {
			d := <-got
			if d.rv == rv {
				lat = append(lat, d.at.Sub(start))
				n++
			}
		}
	}
	stopCPU()
	b.StopTimer()
	cancel()
	wg.Wait()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
}

// BenchmarkWatchFanOutPaced is the scenario: 500 watchers, writes
// at 200/s (one op = one write), delivery latency measured from the start
// of each write to its arrival at each watcher.
func BenchmarkWatchFanOutPaced(b *testing.B) {
	const watchers, perSecond = 500, 200
	f := benchFixture(b)
	f.do("POST", "/api/v1/namespaces/default/configmaps", "application/json", []byte(`{"metadata":{"name":"c"},"data":{"n":"0"}}`))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	started := map[string]time.Time{}
	lat := make([]time.Duration, 0, b.N*watchers)
	var pending sync.WaitGroup
	var wg sync.WaitGroup
	for i := 0; i < watchers; i++ {
		r := f.do("GET", fmt.Sprintf("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=%d", f.store.Rev()), "", nil)
		wg.Add(1)
		go func(s api.Stream) {
			defer wg.Done()
			defer s.Close()
			for {
				line, err := s.Next(ctx)
				if err != nil {
					return
				}
				now := time.Now()
				rv := eventRV(line)
				mu.Lock()
				if t0, ok := started[rv]; ok {
					lat = append(lat, now.Sub(t0))
					pending.Done()
				}
				mu.Unlock()
			}
		}(r.Stream)
	}
	tick := time.NewTicker(time.Second / perSecond)
	defer tick.Stop()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		<-tick.C
		pending.Add(watchers)
		// the only writer: the write takes the next revision
		mu.Lock()
		started[fmt.Sprint(f.store.Rev()+1)] = time.Now()
		mu.Unlock()
		if r := f.do("PUT", "/api/v1/namespaces/default/configmaps/c", "application/json", []byte(fmt.Sprintf(`{"metadata":{"name":"c"},"data":{"n":"%d"}}`, i+1))); r.Status != 200 {
			b.Fatalf("%d %s", r.Status, r.Body)
		}
	}
	pending.Wait()
	b.StopTimer()
	cancel()
	wg.Wait()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
}
