package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rvplay/rvplay/internal/classload"
	"github.com/rvplay/rvplay/internal/rvplaytest"
)

// buildServer is the server binary, built once for the package's tests
// (rvplaytest.ServerBinary; TestMain runs them through rvplaytest.RunTests).
func buildServer(t *testing.T) string {
	t.Helper()
	return rvplaytest.ServerBinary(t)
}

// startProcess starts the server binary on the SQLite file db, serving
// session (none if empty), with flags added to its command line: a server
// a test restarts on the same file, stops with a signal of its own
// choosing or kills. It is killed when the test ends, and its output is
// shown if the test failed.
func startProcess(t *testing.T, bin, db, session string, flags ...string) *rvplaytest.Server {
	t.Helper()
	p, err := rvplaytest.StartBinary(bin, db, session, flags...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("rvplay output:\n%s", p.Log())
		}
	})
	return p
}

type ack struct {
	key, value string
	rev        int64
}

type event struct {
	rev        int64
	typ        string
	key, value string
}

// collectWatch reads a watch stream and sends the events of each response
// in order; the channel closes when the stream breaks (the server was killed).
func collectWatch(t *testing.T, url string, start int64) (<-chan []event, func()) {
	t.Helper()
	body := fmt.Sprintf(`{"create_request":{"key":"AA==","range_end":"AA==","start_revision":"%d"}}`, start)
	resp, err := http.Post(url+"/v3/watch", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan []event, 1<<16)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var f struct {
				Result struct {
					Events []struct {
						Type string `json:"type"`
						Kv   struct {
							Key         []byte `json:"key"`
							ModRevision string `json:"mod_revision"`
							Value       []byte `json:"value"`
						} `json:"kv"`
					} `json:"events"`
				} `json:"result"`
			}
			if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
				return // a torn last line: the process died mid-write
			}
			var evs []event
			for _, e := range f.Result.Events {
				rev, _ := strconv.ParseInt(e.Kv.ModRevision, 10, 64)
				evs = append(evs, event{rev, e.Type, string(e.Kv.Key), string(e.Kv.Value)})
			}
			if len(evs) > 0 {
				ch <- evs
			}
		}
	}()
	return ch, func() { resp.Body.Close() }
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// TestAcknowledgedWritesSurviveSIGKILL is issue 2's crash-safety proof:
// clients write concurrently through the gateway of a server process on a
// SQLite file; the process is SIGKILLed mid-flight and restarted on the same
// file. Every acknowledged write must be there, the revisions must have no
// gap, and a watch resumed from the last revision seen before the crash + 1
// must neither lose nor repeat an event.
func TestAcknowledgedWritesSurviveSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the server binary")
	}
	bin := buildServer(t)
	db := tempDB(t)
	p := startProcess(t, bin, db, "crash")
	base := p.URL + "/s/crash"

	events, stopWatch := collectWatch(t, base, 1)
	defer stopWatch()

	const writers = 8
	var (
		mu    sync.Mutex
		acked []ack
		wg    sync.WaitGroup
	)
	enough := make(chan struct{})
	var enoughOnce sync.Once
	client := &http.Client{Timeout: 30 * time.Second}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				key, value := fmt.Sprintf("w%d/%05d", w, i), fmt.Sprintf("v%d.%d", w, i)
				var body string
				if i%5 == 4 {
					// A txn with two writes: one revision, both or neither.
					body = fmt.Sprintf(`{"success":[{"request_put":{"key":%q,"value":%q}},{"request_put":{"key":%q,"value":%q}}]}`,
						b64(key), b64(value), b64(key+"+"), b64(value))
				} else {
					body = fmt.Sprintf(`{"key":%q,"value":%q}`, b64(key), b64(value))
				}
				path := "/v3/kv/put"
				if i%5 == 4 {
					path = "/v3/kv/txn"
				}
				resp, err := client.Post(base+path, "application/json", strings.NewReader(body))
				if err != nil {
					return // the server is gone
				}
				var r struct {
					Header struct {
						Revision string `json:"revision"`
					} `json:"header"`
				}
				err = json.NewDecoder(resp.Body).Decode(&r)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 {
					return
				}
				rev, _ := strconv.ParseInt(r.Header.Revision, 10, 64)
				mu.Lock()
				acked = append(acked, ack{key, value, rev})
				if i%5 == 4 {
					acked = append(acked, ack{key + "+", value, rev})
				}
				if len(acked) >= 600 {
					enoughOnce.Do(func() { close(enough) })
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
	p.Kill() // SIGKILL while the writers are still writing
	wg.Wait()

	// What the watch saw before the crash.
	var before []event
	for evs := range events {
		before = append(before, evs...)
	}
	mu.Lock()
	t.Logf("%d writes acknowledged, %d events watched before SIGKILL", len(acked), len(before))
	mu.Unlock()

	p2 := startProcess(t, bin, db, "")
	base = p2.URL + "/s/crash"

	// The whole history after the restart, from a fresh watch.
	cur := currentRevision(t, base)
	all := readEvents(t, base, 2, cur)
	byRev := map[int64][]event{}
	for _, e := range all {
		byRev[e.rev] = append(byRev[e.rev], e)
	}
	for rev := int64(2); rev <= cur; rev++ {
		if len(byRev[rev]) == 0 {
			t.Fatalf("revision %d missing: the sequence has a gap (current %d)", rev, cur)
		}
	}
	// Every acknowledged write, with its value and revision.
	kvs := rangeAll(t, base)
	for _, a := range acked {
		got, ok := kvs[a.key]
		if !ok {
			t.Fatalf("acknowledged write %s@%d lost", a.key, a.rev)
		}
		if got.value != a.value || got.rev != a.rev {
			t.Fatalf("acknowledged write %s@%d=%q reads back as @%d=%q", a.key, a.rev, a.value, got.rev, got.value)
		}
	}
	// Every event seen before the crash is in the history, as it was.
	i := 0
	for _, e := range before {
		for i < len(all) && all[i].rev < e.rev {
			i++
		}
		if i >= len(all) || all[i] != e {
			t.Fatalf("event %+v seen before the crash is not in the history after it", e)
		}
		i++
	}
	// Resuming from the last revision seen + 1 gives exactly the rest.
	last := int64(1)
	if len(before) > 0 {
		last = before[len(before)-1].rev
	}
	resumed := readEvents(t, base, last+1, cur)
	joined := append(append([]event(nil), before...), resumed...)
	if len(joined) != len(all) {
		t.Fatalf("before (%d) + resumed (%d) events != history (%d): lost or repeated events", len(before), len(resumed), len(all))
	}
	for i := range all {
		if joined[i] != all[i] {
			t.Fatalf("event %d: before+resumed has %+v, history %+v", i, joined[i], all[i])
		}
	}
}

// TestClassResumesAfterSIGKILL is issue 12's crash proof at the size of a
// small class (bench/classload runs the 200 students): 20 students
// of a guarded session watch the shared namespace over WebSockets with
// their tokens, 5 of them write there, and the server is SIGKILLed
// halfway through 10 s of writes and restarted on the same file and
// address. Every acknowledged write must be in the session's history,
// every watcher must resume from its last resourceVersion (or, for the 2
// who slept through the crash and whose revision the teacher compacted,
// list again after a 410) and see exactly the history from there: no
// event lost, repeated or out of order.
func TestClassResumesAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the server binary")
	}
	srv, err := classload.StartServer(buildServer(t), tempDB(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	cfg := classload.DefaultConfig()
	cfg.Students, cfg.Writers, cfg.Duration = 20, 5, 10*time.Second
	rep, err := classload.Run(context.Background(), srv, cfg.WithCrash())
	if err != nil {
		t.Fatalf("%v\n%s", err, srv.Log())
	}
	var out strings.Builder
	rep.Print(&out)
	t.Log(out.String())
	if n := len(rep.Problems); n > 0 {
		t.Errorf("%d problems (the report above lists them), the first: %s", n, rep.Problems[0])
	}
	// The sleepers' lists are checked with the problems; an awake watcher
	// far enough behind lists again too.
	if c := rep.Crash; c.Lost != 0 || c.Relisted < 2 || c.Resumed+c.Relisted != 20 {
		t.Errorf("%d acknowledged writes lost, %d watchers resumed and %d listed again; want none lost, and all 20 back, at least the 2 sleepers by a list",
			c.Lost, c.Resumed, c.Relisted)
	}
}

func currentRevision(t *testing.T, base string) int64 {
	t.Helper()
	a := post(t, base+"/v3/kv/range", `{"key":"AA==","count_only":true}`)
	var r struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	if err := json.Unmarshal([]byte(a.body), &r); err != nil {
		t.Fatal(err)
	}
	rev, _ := strconv.ParseInt(r.Header.Revision, 10, 64)
	return rev
}

type kvAt struct {
	value string
	rev   int64
}

func rangeAll(t *testing.T, base string) map[string]kvAt {
	t.Helper()
	a := post(t, base+"/v3/kv/range", `{"key":"AA==","range_end":"AA=="}`)
	var r struct {
		Kvs []struct {
			Key         []byte `json:"key"`
			Value       []byte `json:"value"`
			ModRevision string `json:"mod_revision"`
		} `json:"kvs"`
	}
	if err := json.Unmarshal([]byte(a.body), &r); err != nil {
		t.Fatal(err)
	}
	out := map[string]kvAt{}
	for _, kv := range r.Kvs {
		rev, _ := strconv.ParseInt(kv.ModRevision, 10, 64)
		out[string(kv.Key)] = kvAt{string(kv.Value), rev}
	}
	return out
}

// readEvents watches from start until it has seen revision upTo (a
// revision's events come in one response).
func readEvents(t *testing.T, base string, start, upTo int64) []event {
	t.Helper()
	if start > upTo {
		return nil
	}
	var out []event
	ch, stop := collectWatch(t, base, start)
	defer stop()
	timeout := time.After(time.Minute)
	for {
		select {
		case evs, ok := <-ch:
			if !ok {
				t.Fatal("watch ended early")
			}
			out = append(out, evs...)
			if evs[len(evs)-1].rev >= upTo {
				return out
			}
		case <-timeout:
			t.Fatalf("watch from %d did not reach %d", start, upTo)
		}
	}
}
