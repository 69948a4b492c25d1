package session

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"net/url"
	"runtime"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/clock"
	"github.com/rvplay/rvplay/engine/mvcc"
)

var epoch = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

func student(id string) context.Context {
	return api.WithPrincipal(context.Background(), api.Principal{ID: id, Name: id, Role: api.RoleStudent})
}

func serveAs(ctx context.Context, s *Session, method, path, body string, header ...string) *api.Response {
	req := &api.Request{Method: method, Path: path, Body: []byte(body), Header: api.Header{}}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if p, q, ok := strings.Cut(path, "?"); ok {
		req.Path = p
		req.Query = parseQuery(q)
	}
	return s.Serve(ctx, req)
}

func TestSettingsAreReadAndPatchedAsJSONDurations(t *testing.T) {
	s := open(t, "t", Options{})
	r := serve(s, "GET", "/rvplay/v1/settings", "")
	if r.Status != 200 || strings.TrimSpace(string(r.Body)) != `{"bookmarkInterval":"10s","compactionInterval":"5m0s","watchCacheDelay":"0s","controllers":"running","watchCache":"on","podReadyDelay":"1s"}` {
		t.Fatalf("defaults: %d %s", r.Status, r.Body)
	}
	r = serveAs(context.Background(), s, "PATCH", "/rvplay/v1/settings", `{"compactionInterval":"30s","watchCacheDelay":2}`,
		"Content-Type", "application/merge-patch+json")
	if r.Status != 200 || strings.TrimSpace(string(r.Body)) != `{"bookmarkInterval":"10s","compactionInterval":"30s","watchCacheDelay":"2s","controllers":"running","watchCache":"on","podReadyDelay":"1s"}` {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	if got := s.Settings(); got.CompactionInterval != 30*time.Second || got.WatchCacheDelay != 2*time.Second {
		t.Fatalf("Settings() = %+v", got)
	}
	if s.registry.WatchCacheDelay() != 2*time.Second {
		t.Fatal("the watch cache's lag is in effect at once")
	}
	for body, msg := range map[string]string{
		`{"bookmarkInterval":"1ms"}`:     "bookmarkInterval: must be at least 1s",
		`{"bookmarkInterval":"0s"}`:      "bookmarkInterval: must be at least 1s",
		`{"compactionInterval":"-1s"}`:   "compactionInterval: must not be negative",
		`{"compactionInterval":"soon"}`:  `compactionInterval: "soon" is not a duration`,
		`{"watchCacheDelay":"48h"}`:      "watchCacheDelay: must be at most 24h0m0s",
		`{"bookmarks":"5s"}`:             `unknown setting "bookmarks"`,
		`["bookmarkInterval"]`:           "settings must be a JSON object",
		`{"bookmarkInterval":true}`:      "bookmarkInterval: true is not a duration",
		`{"compactionInterval":"500ms"}`: "compactionInterval: must be at least 1s (or 0s: off)",
		`{"controllers":"stopped"}`:      `controllers: "stopped" is neither "running" nor "paused"`,
		`{"watchCache":true}`:            `watchCache: neither "on" nor "off"`,
		`{"watchCache":"yes"}`:           `watchCache: "yes" is neither "on" nor "off"`,
	} {
		r := serve(s, "PATCH", "/rvplay/v1/settings", body)
		var st struct {
			Kind, Reason, Message string
			Code                  int
		}
		json.Unmarshal(r.Body, &st)
		if r.Status != 422 || st.Kind != "Status" || st.Reason != "Invalid" || st.Code != 422 || !strings.Contains(st.Message, msg) {
			t.Errorf("%s: %d %s, want 422 saying %q", body, r.Status, r.Body, msg)
		}
	}
	if got := s.Settings(); got.CompactionInterval != 30*time.Second {
		t.Fatalf("a refused patch changes nothing: %+v", got)
	}
	if r := serve(s, "DELETE", "/rvplay/v1/settings", ``); r.Status != 405 || r.Header.Get("Allow") != "GET, PATCH, PUT" {
		t.Fatalf("DELETE: %d %v", r.Status, r.Header)
	}
	// PUT is PATCH, for clients that cannot send one.
	if r := serve(s, "PUT", "/rvplay/v1/settings", `{"bookmarkInterval":"3s"}`); r.Status != 200 || s.Settings().CompactionInterval != 30*time.Second || s.Settings().BookmarkInterval != 3*time.Second {
		t.Fatalf("PUT: %d %s", r.Status, r.Body)
	}
	if r := serveAs(context.Background(), s, "PATCH", "/rvplay/v1/settings", `{}`, "Content-Type", "text/plain"); r.Status != 415 {
		t.Fatalf("text/plain: %d", r.Status)
	}
	if r := serve(s, "GET", "/rvplay/v1/nothing", ""); r.Status != 404 {
		t.Fatalf("unknown control path: %d", r.Status)
	}
}

// On a guarded session only the teacher changes the settings; students
// read them.
func TestOnlyTheTeacherChangesTheSettings(t *testing.T) {
	s := open(t, "t", Options{})
	if r := serveAs(student("ada"), s, "GET", "/rvplay/v1/settings", ""); r.Status != 200 {
		t.Fatalf("a student reads: %d", r.Status)
	}
	r := serveAs(student("ada"), s, "PATCH", "/rvplay/v1/settings", `{"compactionInterval":"5s"}`)
	if r.Status != 403 || !strings.Contains(string(r.Body), `"reason":"Forbidden"`) {
		t.Fatalf("a student writes: %d %s", r.Status, r.Body)
	}
	if s.Settings().CompactionInterval != DefaultCompactionInterval {
		t.Fatal("the student's change took effect")
	}
	if r := serveAs(api.WithPrincipal(context.Background(), api.Principal{ID: "teacher", Role: api.RoleTeacher}), s,
		"PATCH", "/rvplay/v1/settings", `{"compactionInterval":"5s"}`); r.Status != 200 {
		t.Fatalf("the teacher writes: %d %s", r.Status, r.Body)
	}
}

func TestTheBookmarkIntervalSettingPacesBookmarks(t *testing.T) {
	clock := clock.NewFake(epoch)
	s := open(t, "t", Options{Clock: clock, NoControllers: true})
	if r := serve(s, "PATCH", "/rvplay/v1/settings", `{"bookmarkInterval":"2s"}`); r.Status != 200 {
		t.Fatal(r.Status)
	}
	w := serveAs(context.Background(), s, "GET", "/api/v1/namespaces/default/configmaps?watch=true&allowWatchBookmarks=true", "")
	if w.Stream == nil {
		t.Fatalf("watch: %d %s", w.Status, w.Body)
	}
	defer w.Stream.Close()
	// The watch armed its bookmark timer before it answered: 2s from now.
	clock.Step(2 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f, err := w.Stream.Next(ctx)
	if err != nil || !strings.HasPrefix(string(f), `{"type":"BOOKMARK"`) {
		t.Fatalf("2s into an idle watch: %s %v", f, err)
	}
}

// Automatic compaction as kube-apiserver does it: each tick writes
// compact_rev_key and compacts to the revision the previous tick saw.
func TestAutomaticCompactionKeepsOneIntervalOfHistory(t *testing.T) {
	clock := clock.NewFake(epoch)
	s := open(t, "t", Options{Clock: clock, NoControllers: true})
	compacted := make(chan int64, 4)
	s.compactor.compacted = func(rev int64) { compacted <- rev }
	put := func(k string) int64 {
		t.Helper()
		r, err := s.Store.Put(context.Background(), &mvcc.PutRequest{Key: []byte(k), Value: []byte("v")})
		if err != nil {
			t.Fatal(err)
		}
		return r.Header.Revision
	}
	a := put("a")
	armed := clock.TimerCreated()
	if _, err := s.UpdateSettings(func(st Settings) (Settings, error) { st.CompactionInterval = 10 * time.Second; return st, nil }); err != nil {
		t.Fatal(err)
	}
	<-armed
	armed = clock.TimerCreated()
	clock.Step(10 * time.Second) // first tick: compact_rev_key = 0 at a+1, no compaction
	<-armed
	kv := getKey(t, s, CompactRevKey)
	if string(kv.Value) != "0" || kv.ModRevision != a+1 || kv.Version != 1 {
		t.Fatalf("first tick: %+v", kv)
	}
	if s.Store.CompactRev() > 0 {
		t.Fatal("kube-apiserver does not compact on its first tick")
	}
	put("b") // a+2
	armed = clock.TimerCreated()
	clock.Step(10 * time.Second) // second tick: compact_rev_key = a+1 at a+3, compact at a+1
	if rev := <-compacted; rev != a+1 {
		t.Fatalf("compacted at %d, want the first tick's revision %d", rev, a+1)
	}
	<-armed
	if kv := getKey(t, s, CompactRevKey); string(kv.Value) != strconv.FormatInt(a+1, 10) || kv.Version != 2 {
		t.Fatalf("second tick: %+v", kv)
	}
	if _, err := s.Store.Range(context.Background(), &mvcc.RangeRequest{Key: []byte("a"), Revision: a}); err != mvcc.ErrCompacted {
		t.Fatalf("a read at revision %d: %v", a, err)
	}

	// Turned off, it stops.
	if _, err := s.UpdateSettings(func(st Settings) (Settings, error) { st.CompactionInterval = 0; return st, nil }); err != nil {
		t.Fatal(err)
	}
	rev := s.Store.Rev()
	clock.Step(time.Hour)
	if s.Store.Rev() != rev {
		t.Fatal("compaction off writes nothing")
	}
}

// A new session compacts every 5 minutes, as kube-apiserver's
// --etcd-compaction-interval does: the first tick records the revision,
// the next compacts to it.
func TestAutomaticCompactionIsKubeApiserversFiveMinutes(t *testing.T) {
	clock := clock.NewFake(epoch)
	armed := clock.TimerCreated()
	s := open(t, "t", Options{Clock: clock, NoControllers: true})
	if got := s.Settings().CompactionInterval; got != 5*time.Minute {
		t.Fatalf("a new session compacts every %v", got)
	}
	<-armed
	r, err := s.Store.Put(context.Background(), &mvcc.PutRequest{Key: []byte("a"), Value: []byte("v")})
	if err != nil {
		t.Fatal(err)
	}
	a := r.Header.Revision
	armed = clock.TimerCreated()
	clock.Step(5 * time.Minute)
	<-armed
	if kv := getKey(t, s, CompactRevKey); kv.ModRevision != a+1 || s.Store.CompactRev() > 0 {
		t.Fatalf("5 minutes in: %+v, compacted at %d", kv, s.Store.CompactRev())
	}
	compacted := make(chan int64, 1)
	s.compactor.compacted = func(rev int64) { compacted <- rev }
	clock.Step(5 * time.Minute)
	if got := <-compacted; got != a+1 {
		t.Fatalf("10 minutes in: compacted at %d, want the first tick's %d", got, a+1)
	}
}

// watchCacheOff are the default settings but the watch cache: the
// etcd-level read path of kube-apiserver's --watch-cache=false.
func watchCacheOff() *Settings {
	s := DefaultSettings()
	s.WatchCache = false
	return &s
}

func getKey(t *testing.T, s *Session, key string) *mvcc.KeyValue {
	t.Helper()
	r, err := s.Store.Range(context.Background(), &mvcc.RangeRequest{Key: []byte(key)})
	if err != nil || len(r.Kvs) != 1 {
		t.Fatalf("%s: %v %v", key, r, err)
	}
	return r.Kvs[0]
}

func parseQuery(q string) map[string][]string {
	v, _ := url.ParseQuery(q)
	return v
}

// The watch cache is a session setting, on by default. Off, the store
// serves each watch, and a start at a compacted revision is etcd's 410.
// Turned on, the cache lists the store then and its window starts there: an
// older start is "too old resource version: N (M)", a start in it is
// served; turned off again, the watches it served end (their clients
// watch again, from the store).
func TestTheWatchCacheSettingChoosesWhoServesWatches(t *testing.T) {
	clock := clock.NewFake(epoch)
	s := open(t, "t", Options{Clock: clock, NoControllers: true, Settings: watchCacheOff()})
	serve(s, "POST", cmPath, `{"metadata":{"name":"a"}}`)
	a, _ := strconv.ParseInt(last(t, s).RV, 10, 64)
	serve(s, "POST", cmPath, `{"metadata":{"name":"b"}}`)
	if _, err := s.Store.Compact(context.Background(), &mvcc.CompactionRequest{Revision: s.Store.Rev()}); err != nil {
		t.Fatal(err)
	}
	watch := func(rv int64) *api.Response {
		t.Helper()
		w := serveAs(context.Background(), s, "GET", cmPath+"?watch=true&resourceVersion="+strconv.FormatInt(rv, 10), "")
		if w.Stream == nil {
			t.Fatalf("watch: %d %s", w.Status, w.Body)
		}
		t.Cleanup(w.Stream.Close)
		return w
	}
	nextLine := func(w *api.Response) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		f, err := w.Stream.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return string(f)
	}
	if l := nextLine(watch(a - 1)); !strings.Contains(l, `"code":410`) || !strings.Contains(l, "The resourceVersion for the provided watch is too old.") {
		t.Fatalf("off: %s", l)
	}

	if r := serve(s, "PATCH", "/rvplay/v1/settings", `{"watchCache":"on"}`); r.Status != 200 || !strings.Contains(string(r.Body), `"watchCache":"on"`) {
		t.Fatalf("on: %d %s", r.Status, r.Body)
	}
	head := s.Store.Rev()
	if l := nextLine(watch(a - 1)); !strings.Contains(l, `"code":410`) || !strings.Contains(l, fmt.Sprintf("too old resource version: %d (%d)", a-1, head)) {
		t.Fatalf("on, before the window: %s", l)
	}
	w := watch(head)
	serve(s, "POST", cmPath, `{"metadata":{"name":"c"}}`)
	if l := nextLine(w); !strings.HasPrefix(l, `{"type":"ADDED"`) || !strings.Contains(l, `"name":"c"`) {
		t.Fatalf("on, in the window: %s", l)
	}

	if r := serve(s, "PATCH", "/rvplay/v1/settings", `{"watchCache":"off"}`); r.Status != 200 {
		t.Fatalf("off: %d %s", r.Status, r.Body)
	}
	if f, err := w.Stream.Next(context.Background()); err != io.EOF {
		t.Fatalf("a watch the cache served, once it is off: %s %v", f, err)
	}
}

// The watch cache's goroutines (one loop per cached resource) end with
// the session: an unloaded session leaves none behind.
func TestAClosedSessionLeavesNoWatchCacheBehind(t *testing.T) {
	before := runtime.NumGoroutine()
	s, err := New("t", mvcc.NewMemoryBackend(), Options{NoControllers: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateSettings(func(st Settings) (Settings, error) { st.WatchCache = true; return st, nil }); err != nil {
		t.Fatal(err)
	}
	w := serveAs(context.Background(), s, "GET", cmPath+"?watch=true", "")
	if w.Stream == nil {
		t.Fatalf("watch: %d %s", w.Status, w.Body)
	}
	if n := runtime.NumGoroutine(); n < before+7 {
		t.Fatalf("%d goroutines with the cache on, %d before: the caches did not start", n, before)
	}
	s.Close()
	if f, err := w.Stream.Next(context.Background()); err != io.EOF {
		t.Fatalf("a watch after the session closed: %s %v", f, err)
	}
	w.Stream.Close()
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines after the session closed, %d before\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}
