package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestSIGTERMUnderWriteLoadLosesNothing: writers put etcd keys and create
// ConfigMaps as fast as they can; the server gets SIGTERM. It fails /readyz
// first, then stops accepting, lets the writes in flight finish, ends every
// watch in its protocol's way (a Kubernetes watch's stream ends, chunked
// or WebSocket, so that its client watches again; an etcd watch gets
// etcd's "transport is closing"), closes the database and exits 0. After a
// restart on the same file every acknowledged write is there.
func TestSIGTERMUnderWriteLoadLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server binary")
	}
	bin := buildServer(t)
	db := tempDB(t)
	p := startProcess(t, bin, db, "demo", "--shutdown-delay-duration", "3s")
	base := p.URL + "/s/demo"

	etcdWatch := openWatch(t, base+"/v3/watch", `{"create_request":{"key":"AA==","range_end":"AA=="}}`)
	etcdWatch.next() // created
	// The watch is read as it goes, as a client does: one that stops
	// reading is a slow client, whose stream the server may cut.
	etcdLast := make(chan string, 1)
	go func() {
		var last string
		for l := range etcdWatch.lines {
			last = l
		}
		etcdLast <- last
	}()
	kubeResp, err := http.Get(base + "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=1")
	if err != nil || kubeResp.StatusCode != 200 {
		t.Fatalf("kube watch: %v %v", kubeResp, err)
	}
	defer kubeResp.Body.Close()
	kubeEnd := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, kubeResp.Body)
		kubeEnd <- err
	}()
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	wsEnd := make(chan error, 1)
	go func() {
		for {
			if _, _, err := ws.ReadMessage(); err != nil {
				wsEnd <- err
				return
			}
		}
	}()

	type write struct {
		etcd bool
		key  string
	}
	var (
		mu    sync.Mutex
		acked []write
		wg    sync.WaitGroup
	)
	enough := make(chan struct{})
	var once sync.Once
	client := &http.Client{Timeout: 30 * time.Second}
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				var resp *http.Response
				var err error
				wr := write{etcd: w%2 == 0, key: fmt.Sprintf("w%d-%d", w, i)}
				if wr.etcd {
					resp, err = client.Post(base+"/v3/kv/put", "application/json",
						strings.NewReader(fmt.Sprintf(`{"key":%q,"value":"dg=="}`, b64(wr.key))))
				} else {
					resp, err = client.Post(base+"/api/v1/namespaces/default/configmaps", "application/json",
						strings.NewReader(fmt.Sprintf(`{"metadata":{"name":%q}}`, wr.key)))
				}
				if err != nil {
					return // the server is gone
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 && resp.StatusCode != 201 {
					if resp.StatusCode >= 500 {
						continue // refused while shutting down: not acknowledged
					}
					t.Errorf("write %s: %d", wr.key, resp.StatusCode)
					return
				}
				mu.Lock()
				acked = append(acked, wr)
				if len(acked) >= 300 {
					once.Do(func() { close(enough) })
				}
				mu.Unlock()
			}
		}()
	}
	select {
	case <-enough:
	case <-time.After(2 * time.Minute):
		t.Fatal("writers made too little progress")
	}
	p.Signal(syscall.SIGTERM)

	// Not ready any more, while still serving for the delay.
	for {
		a, err := http.Get(p.URL + "/readyz")
		if err != nil {
			t.Fatalf("/readyz refused before it failed: %v", err)
		}
		body, _ := io.ReadAll(a.Body)
		a.Body.Close()
		if a.StatusCode == 500 {
			if !strings.Contains(string(body), "[-]shutdown failed: reason withheld\n") {
				t.Fatalf("/readyz: %s", body)
			}
			break
		}
	}
	select {
	case <-p.Exited():
	case <-time.After(30 * time.Second):
		t.Fatal("no exit within 30s of SIGTERM")
	}
	if err := p.ExitErr(); err != nil {
		t.Fatalf("exit: %v, want exit code 0", err)
	}
	wg.Wait()

	// Every watch was told.
	if last := <-etcdLast; last != `{"error":{"grpc_code":14,"http_code":503,"message":"transport is closing","http_status":"Service Unavailable"}}` {
		t.Fatalf("the etcd watch's last line: %s", last)
	}
	if err := <-kubeEnd; err != nil {
		t.Fatalf("the chunked kube watch did not end cleanly: %v", err)
	}
	var ce *websocket.CloseError
	if err := <-wsEnd; !errors.As(err, &ce) || ce.Code != websocket.CloseNormalClosure {
		t.Fatalf("the WebSocket kube watch ended with %v, want a normal close", err)
	}

	// Every acknowledged write survived.
	p2 := startProcess(t, bin, db, "")
	base = p2.URL + "/s/demo"
	kvs := rangeAll(t, base)
	names := configMapNames(t, base)
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d writes acknowledged before the process exited", len(acked))
	for _, w := range acked {
		if w.etcd {
			if _, ok := kvs[w.key]; !ok {
				t.Fatalf("acknowledged etcd put %s lost", w.key)
			}
		} else if !names[w.key] {
			t.Fatalf("acknowledged ConfigMap %s lost", w.key)
		}
	}
}

func configMapNames(t *testing.T, base string) map[string]bool {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/namespaces/default/configmaps")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, it := range list.Items {
		names[it.Metadata.Name] = true
	}
	return names
}

// BenchmarkInFlightTrack is the in-flight count's cost on every request
// that is not a watch, with as many requests at once as there are
// processors.
func BenchmarkInFlightTrack(b *testing.B) {
	var f inFlight
	h := f.track(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	b.RunParallel(func(pb *testing.PB) {
		r, _ := http.NewRequest("POST", "/s/bench/v3/kv/put", nil)
		for pb.Next() {
			h.ServeHTTP(nil, r)
		}
	})
}
