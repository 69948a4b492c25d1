package stress

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Attack 1: watchers from revision 1 over a large history. Issue 10 saw
// three such watches on a session holding ~500 MB of history push the
// server to 19 GB, and 20 over 20 MB take it from 40 MB to 1.8 GB: each
// read its whole history into memory. A class of 200 opening the lab on a
// busy session does this without meaning to. Now catch-up reads a page at
// a time, --max-watch-catchups at once, so what a watcher holds does not
// depend on the history's size.
func TestAttack01WatchersFromRevisionOne(t *testing.T) {
	history := scaled(32<<20, 256<<20) // bytes of values written
	watchers := scaled(20, 200)
	readers := scaled(10, 20) // the others never read
	a := startAttack(t, "01 watchers from revision 1", Bounds{
		// A watcher catching up holds one page of history (1 MiB) while
		// its response is encoded and written (base64 makes it 1.4 MiB of
		// JSON, in a buffer grown by doubling), whatever the history's
		// size: 4 MiB live.
		Live:       int64(watchers) * 4 << 20,
		RssAnon:    64 << 20,
		Goroutines: 4*watchers + 32,
	}, fmt.Sprint("--quota-backend-bytes=", 2*history+64<<20))
	events := fillHistory(t, a.Attack, history)
	a.begin()

	watch := fmt.Sprintf(`{"create_request":{"key":%q,"range_end":%q,"start_revision":"1"}}`, b64("\x00"), b64("\x00"))
	var wg sync.WaitGroup
	var caughtUp atomic.Int64
	errs := make(chan error, watchers)
	var bodies []io.Closer
	for i := range watchers {
		resp, err := attacker.Post(a.Attack+"/v3/watch", "application/json", strings.NewReader(watch))
		if err != nil {
			t.Fatalf("watcher %d: %v", i, err)
		}
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("watcher %d: %d %s", i, resp.StatusCode, b)
		}
		bodies = append(bodies, resp.Body)
		if i%(watchers/readers) != 0 {
			continue // never read: its answers wait in the server
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := readEvents(resp.Body, events)
			if err != nil {
				errs <- fmt.Errorf("watcher %d: %v after %d of %d events", i, err, n, events)
				return
			}
			caughtUp.Add(1)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	a.note("%d watchers (%d reading) over %s of history (%d events): %d caught up; %.0f KiB per watcher at the peak",
		watchers, readers, mib(int64(history)), events, caughtUp.Load(), float64(a.mon.peakSoFar().RssAnon-a.base.RssAnon)/float64(watchers)/1024)
	for _, b := range bodies {
		b.Close()
	}
	a.end()
	a.settle(15*time.Second, 8)
}

// fillHistory writes bytes of 4 KiB values into base, overwriting 64 keys
// in txns of 16 puts from four writers (so that the history is long while
// the live keys are few), and returns the number of events written.
func fillHistory(t *testing.T, base string, bytes int) int {
	t.Helper()
	const value, perTxn, writers = 4 << 10, 16, 4
	txns := bytes / (value * perTxn)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := repeatBytes(byte('a'+w), value)
			for i := w; i < txns; i += writers {
				pairs := make([][2]string, perTxn)
				for j := range pairs {
					pairs[j] = [2]string{fmt.Sprintf("history/%d/%02d", w, j), v}
				}
				if status, b, err := post(attacker, base+"/v3/kv/txn", putsTxn(pairs)); err != nil || status != 200 {
					errs <- fmt.Errorf("txn %d: %d %s %v", i, status, b, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return txns * perTxn
}

// watchResponse is the part of a /v3/watch line the attacks read.
type watchResponse struct {
	Result struct {
		WatchID      string `json:"watch_id"`
		Created      bool   `json:"created"`
		Canceled     bool   `json:"canceled"`
		CancelReason string `json:"cancel_reason"`
		Events       []struct {
			Kv struct {
				ModRevision string `json:"mod_revision"`
			} `json:"kv"`
		} `json:"events"`
	} `json:"result"`
	Error json.RawMessage `json:"error"`
}

// readEvents reads a watch stream until want events came. It counts them
// rather than decoding them: a response is one line, and each of its
// events has one mod_revision (the header has none), so that the test's
// own CPU goes to reading, not to decoding values.
func readEvents(r io.Reader, want int) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	modRevision := []byte(`"mod_revision"`)
	n := 0
	for n < want && sc.Scan() {
		line := sc.Bytes()
		if bytes.HasPrefix(line, []byte(`{"error"`)) || bytes.Contains(line, []byte(`"canceled":true`)) {
			return n, fmt.Errorf("stream ended: %.300s", line)
		}
		n += bytes.Count(line, modRevision)
	}
	if n < want {
		return n, fmt.Errorf("stream ended: %v", sc.Err())
	}
	return n, nil
}

// Attack 2: one /v3/watch body with tens of thousands of create_requests
// (issue 10: 58,000 made 58,000 watchers and 116k goroutines, +0.9 GB),
// and more streams and Kubernetes watches from the same client. Watchers
// are capped per stream, per client and per session and cost no goroutine
// of their own; past a cap etcd's watch is created and canceled with
// "etcdserver: too many requests", and kube's is a 429 with Retry-After.
func TestAttack02ManyWatchersPerClient(t *testing.T) {
	creates := scaled(20000, 58000)
	streams := scaled(4, 20) // more streams of 1,000 creates each
	kubeWatches := scaled(20, 100)
	const perStream, perClient = 1000, 2000 // the server's defaults
	a := startAttack(t, "02 many watchers per client", Bounds{
		RssAnon:    64 << 20,
		Goroutines: 4*(1+streams+kubeWatches) + 32,
	})
	a.begin()

	var bodies []io.Closer
	defer func() {
		for _, b := range bodies {
			b.Close()
		}
	}()
	open := func(n int) (created, refused int) {
		var body strings.Builder
		for i := range n {
			fmt.Fprintf(&body, `{"create_request":{"key":%q}}`+"\n", b64(fmt.Sprintf("w/%d", i)))
		}
		resp, err := attacker.Post(a.Attack+"/v3/watch", "application/json", strings.NewReader(body.String()))
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, resp.Body)
		dec := json.NewDecoder(resp.Body)
		for created+refused < n {
			var w watchResponse
			if err := dec.Decode(&w); err != nil {
				t.Fatalf("after %d created and %d refused of %d: %v", created, refused, n, err)
			}
			switch {
			case w.Result.Created && w.Result.Canceled && w.Result.WatchID == "-1":
				if w.Result.CancelReason != "etcdserver: too many requests" {
					t.Fatalf("refused with %q", w.Result.CancelReason)
				}
				refused++
			case w.Result.Created:
				created++
			}
		}
		return created, refused
	}
	created, refused := open(creates)
	if created != perStream || refused != creates-perStream {
		t.Errorf("one body of %d creates: %d created, %d refused; want %d created", creates, created, refused, perStream)
	}
	total := created
	for range streams {
		c, _ := open(perStream)
		total += c
	}
	if total != perClient {
		t.Errorf("%d watchers created in %d streams of one client, want its cap %d", total, 1+streams, perClient)
	}
	// The client's Kubernetes watches are past its cap too.
	for i := range kubeWatches {
		resp, err := attacker.Get(a.Attack + "/api/v1/namespaces/default/configmaps?watch=1")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		st := decodeStatus(b)
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" || st.Reason != "TooManyRequests" {
			t.Fatalf("kube watch %d past the client's cap: %d Retry-After %q %s", i, resp.StatusCode, resp.Header.Get("Retry-After"), b)
		}
	}
	// The watchers are held, unread, while their keys change (a txn of 16
	// puts every 10 ms: the session's own history stays small beside what
	// the watchers could hold).
	writes, errs := repeatFor(scaled(3*time.Second, 15*time.Second), 1, func(_, n int) error {
		time.Sleep(10 * time.Millisecond)
		pairs := make([][2]string, 16)
		for j := range pairs {
			pairs[j] = [2]string{fmt.Sprintf("w/%d", (16*n+j)%perStream), fmt.Sprint("change ", n)}
		}
		if status, b, err := post(attacker, a.Attack+"/v3/kv/txn", putsTxn(pairs)); err != nil || status != 200 {
			return fmt.Errorf("%d %s %v", status, b, err)
		}
		return nil
	})
	for _, err := range errs {
		t.Errorf("writing the watched keys: %v", err)
	}
	a.note("%d creates in one body, %d more streams of %d, %d kube watches: %d watchers made, the rest refused; %d txns of 16 puts to their keys while they were held unread",
		creates, streams, perStream, kubeWatches, total, writes)
	a.end()
}
