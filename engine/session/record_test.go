package session

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/clock"
	"github.com/rvplay/rvplay/engine/lesson"
	"github.com/rvplay/rvplay/engine/mvcc"
)

const cmPath = "/api/v1/namespaces/default/configmaps"

func last(t *testing.T, s *Session) Exchange {
	t.Helper()
	all, _ := s.Record.Since(0, Filter{}, 0)
	if len(all) == 0 {
		t.Fatal("nothing recorded")
	}
	return all[len(all)-1]
}

// watchKeyA opens an etcd watch of the key "a" on a new session, closed
// when the test ends, and returns the session, the watch's answer and its
// record.
func watchKeyA(t *testing.T) (*Session, *api.Response, *WatchRecord) {
	t.Helper()
	s := open(t, "t", Options{NoControllers: true})
	w := serve(s, "POST", "/v3/watch", `{"create_request":{"key":"YQ=="}}`)
	if w.Stream == nil {
		t.Fatalf("watch: %d %s", w.Status, w.Body)
	}
	t.Cleanup(func() { w.Stream.Close() })
	return s, w, last(t, s).Watch
}

func TestAConflictIsRecordedWithTheStaleAndTheCurrentResourceVersion(t *testing.T) {
	s := open(t, "t", Options{NoControllers: true})
	ctx := student("bob")
	r := serveAs(ctx, s, "POST", cmPath, `{"metadata":{"name":"x"},"data":{"v":"1"}}`, "User-Agent", "kubectl/v1.33.0 (linux/amd64) kubernetes/abc")
	created := last(t, s)
	if r.Status != 201 || created.Verb() != "create" || created.RV == "" || created.Principal.ID != "bob" ||
		created.UserAgent != "kubectl/v1.33.0 (linux/amd64) kubernetes/abc" || created.Protocol != ProtocolKubernetes {
		t.Fatalf("create: %d %+v", r.Status, created)
	}
	stale := created.RV
	serveAs(ctx, s, "PUT", cmPath+"/x", fmt.Sprintf(`{"metadata":{"name":"x","resourceVersion":%q},"data":{"v":"2"}}`, stale))
	current := last(t, s).RV
	r = serveAs(ctx, s, "PUT", cmPath+"/x", fmt.Sprintf(`{"metadata":{"name":"x","resourceVersion":%q},"data":{"v":"3"}}`, stale))
	e := last(t, s)
	if r.Status != 409 || e.Status != 409 || e.Reason != "Conflict" || !strings.Contains(e.Message, "the object has been modified") ||
		e.RVSent != stale || e.RV != current || e.Verb() != "update" {
		t.Fatalf("the conflict: %+v", e)
	}
	k, ok := e.Target()
	if !ok || k.Resource != "configmaps" || k.Namespace != "default" || k.Name != "x" || k.Group != "" {
		t.Fatalf("path: %+v", k)
	}

	// Without a resourceVersion the update is unconditional: nothing sent.
	serveAs(ctx, s, "PUT", cmPath+"/x", `{"metadata":{"name":"x"},"data":{"v":"4"}}`)
	if e := last(t, s); e.Status != 200 || e.RVSent != "" || e.RV == "" {
		t.Fatalf("the unconditional update: %+v", e)
	}
	// A read sends its resourceVersion in the query.
	serveAs(ctx, s, "GET", cmPath+"?resourceVersion=0", "")
	if e := last(t, s); e.Verb() != "list" || e.RVSent != "0" || e.RV == "" {
		t.Fatalf("the list: %+v", e)
	}
	serveAs(ctx, s, "DELETE", cmPath+"/x", `{"preconditions":{"resourceVersion":"1"}}`)
	if e := last(t, s); e.Verb() != "delete" || e.RVSent != "1" || e.Status != 409 {
		t.Fatalf("the conditional delete: %+v", e)
	}
}

func TestTheEtcdGatewayIsRecordedToo(t *testing.T) {
	s := open(t, "t", Options{})
	serve(s, "POST", "/v3/kv/put", `{"key":"YQ==","value":"Yg=="}`)
	if e := last(t, s); e.Protocol != ProtocolEtcd || e.Verb() != "put" || e.Status != 200 || e.Revision != 2 || e.RV != "2" {
		t.Fatalf("put: %+v", e)
	}
	// An answer's revision is its header's, as the gateway said it: a
	// lease's keep-alive carries its header inside "result".
	serve(s, "POST", "/v3/kv/range", `{"key":"YQ=="}`)
	if e := last(t, s); e.Verb() != "range" || e.RV != "2" {
		t.Fatalf("range: %+v", e)
	}
	serve(s, "POST", "/v3/lease/grant", `{"TTL":"60","ID":"7"}`)
	serve(s, "POST", "/v3/lease/keepalive", `{"ID":"7"}`)
	if e := last(t, s); e.Status != 200 || e.RV != "2" {
		t.Fatalf("keep-alive: %+v", e)
	}
	serve(s, "POST", "/v3/kv/compaction", `{"revision":"2"}`)
	serve(s, "POST", "/v3/kv/range", `{"key":"YQ==","revision":"1"}`)
	if e := last(t, s); e.Status == 200 || !strings.Contains(e.Message, "required revision has been compacted") {
		t.Fatalf("a compacted read: %+v", e)
	}
	// The session stayed a plain etcd: no namespaces, no controller.
	if s.Store.Rev() != 2 {
		t.Fatalf("revision %d: an etcd-only session must not boot the Kubernetes API", s.Store.Rev())
	}
}

func TestAWatchRecordCountsEventsAndBookmarksAndTellsHowItEnded(t *testing.T) {
	clock := clock.NewFake(epoch)
	// Without the watch cache, whose window would still serve the watch
	// from a compacted revision that ends this test in etcd's 410.
	s := open(t, "t", Options{Clock: clock, NoControllers: true, Settings: watchCacheOff()})
	serve(s, "POST", cmPath, `{"metadata":{"name":"a"}}`)
	from := last(t, s).RV
	w := serveAs(context.Background(), s, "GET", cmPath+"?watch=true&allowWatchBookmarks=true&resourceVersion="+from, "")
	rec := last(t, s)
	if rec.Watch == nil || rec.Verb() != "watch" || rec.RVSent != from {
		t.Fatalf("watch: %+v", rec)
	}
	serve(s, "POST", cmPath, `{"metadata":{"name":"b"}}`)
	b := last(t, s).RV
	next := func() string {
		f, err := w.Stream.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return string(f)
	}
	next()
	clock.Step(10 * time.Second) // a bookmark
	next()
	sum := rec.Watch.Summary()
	if sum.Events != 1 || sum.Bookmarks != 1 || fmt.Sprint(sum.LastRV) != b || sum.Ended {
		t.Fatalf("open watch: %+v", sum)
	}
	w.Stream.Close()
	if sum := rec.Watch.Summary(); !sum.Ended || sum.EndedBy != EndedByClient {
		t.Fatalf("closed by the client: %+v", sum)
	}

	// A watch from a compacted revision ends with ERROR 410.
	serve(s, "POST", cmPath, `{"metadata":{"name":"c"}}`)
	s.Store.Compact(context.Background(), &mvcc.CompactionRequest{Revision: s.Store.Rev()})
	w = serveAs(context.Background(), s, "GET", cmPath+"?watch=true&resourceVersion="+from, "")
	rec = last(t, s)
	for {
		if _, err := w.Stream.Next(context.Background()); err != nil {
			break
		}
	}
	w.Stream.Close()
	sum = rec.Watch.Summary()
	if !sum.Ended || sum.EndedBy != EndedByServer || sum.ErrorCode != 410 || sum.ErrorReason != "Expired" {
		t.Fatalf("the 410: %+v", sum)
	}
	j, _ := json.Marshal(rec)
	if !strings.Contains(string(j), `"errorCode":410`) || !strings.Contains(string(j), `"endedBy":"server"`) {
		t.Fatalf("JSON: %s", j)
	}
}

func TestExchangesAreServedSinceASequenceNumberAndAStudentSeesOnlyTheirOwn(t *testing.T) {
	s := open(t, "t", Options{NoControllers: true})
	for _, who := range []string{"ada", "bob", "ada"} {
		serveAs(student(who), s, "POST", cmPath, fmt.Sprintf(`{"metadata":{"generateName":"%s-"}}`, who))
	}
	type list struct {
		Kind  string
		Items []struct {
			Seq       uint64
			Principal struct{ ID, Role string }
			Verb      string
			Status    int
		}
		Last, Oldest uint64
	}
	get := func(ctx context.Context, query string) list {
		t.Helper()
		r := serveAs(ctx, s, "GET", "/rvplay/v1/exchanges"+query, "")
		var l list
		if r.Status != 200 || json.Unmarshal(r.Body, &l) != nil || l.Kind != "ExchangeList" {
			t.Fatalf("%s: %d %s", query, r.Status, r.Body)
		}
		return l
	}
	all := get(context.Background(), "")
	if len(all.Items) != 3 || all.Last != 3 || all.Oldest != 1 {
		t.Fatalf("the teacher sees all: %+v", all)
	}
	if l := get(context.Background(), "?principal=bob"); len(l.Items) != 1 || l.Items[0].Principal.ID != "bob" {
		t.Fatalf("filtered: %+v", l)
	}
	if l := get(student("ada"), "?principal=bob"); len(l.Items) != 2 || l.Items[0].Principal.ID != "ada" || l.Items[1].Principal.Role != "student" {
		t.Fatalf("ada sees only ada's: %+v", l)
	}
	if l := get(context.Background(), "?since=2"); len(l.Items) != 1 || l.Items[0].Seq != 3 {
		t.Fatalf("since: %+v", l)
	}
	if l := get(context.Background(), "?since=0&limit=2"); len(l.Items) != 2 || l.Last != 2 {
		t.Fatalf("limit: %+v", l)
	}
	// Reading the record is not recorded; a change of settings is.
	serve(s, "PATCH", "/rvplay/v1/settings", `{"bookmarkInterval":"5s"}`)
	if e := last(t, s); e.Protocol != ProtocolRvplay || e.Verb() != "patch" || e.Seq != 4 {
		t.Fatalf("%+v", e)
	}
	if r := serveAs(api.WithPrincipal(context.Background(), api.Principal{}), s, "GET", "/rvplay/v1/exchanges", ""); r.Status != 401 {
		t.Fatalf("anonymous: %d", r.Status)
	}
	if r := serveAs(context.Background(), s, "GET", "/rvplay/v1/exchanges?since=x", ""); r.Status != 400 {
		t.Fatalf("bad since: %d", r.Status)
	}
}

func TestTheRecordIsBounded(t *testing.T) {
	s := open(t, "t", Options{RecordSize: 4})
	for i := 0; i < 10; i++ {
		serve(s, "POST", "/v3/kv/put", `{"key":"YQ==","value":"Yg=="}`)
	}
	all, lastSeq := s.Record.Since(0, Filter{}, 0)
	if len(all) != 4 || all[0].Seq != 7 || lastSeq != 10 || s.Record.Oldest() != 7 {
		t.Fatalf("%d kept, first %d, last %d", len(all), all[0].Seq, lastSeq)
	}
}

// A class shares the session's ring, but each student keeps their own
// last exchanges in a ring of their own: 199 classmates' requests do not
// push a student's out, and the student's view, their verify and the
// dashboard read that ring.
func TestEachStudentKeepsTheirOwnExchanges(t *testing.T) {
	s := open(t, "t", Options{RecordSize: 8, RecordPerStudent: 3})
	ada, bob := student("ada"), student("bob")
	put := func(ctx context.Context, key string) {
		serveAs(ctx, s, "POST", "/v3/kv/put", fmt.Sprintf(`{"key":%q,"value":"dg=="}`, b64(key)))
	}
	put(ada, "ada/1")
	put(ada, "ada/2")
	for i := 0; i < 20; i++ {
		put(bob, fmt.Sprintf("bob/%d", i))
	}
	serve(s, "POST", "/v3/kv/put", `{"key":"dA==","value":"dg=="}`) // the teacher's

	session, _ := s.Record.Since(0, Filter{}, 0)
	if len(session) != 8 || session[0].Seq != 16 {
		t.Fatalf("the session's ring keeps the last 8: %d from %d", len(session), session[0].Seq)
	}
	own, next := s.Record.Since(0, Filter{Principal: "ada"}, 0)
	if len(own) != 2 || own[0].Key != "ada/1" || own[1].Key != "ada/2" || next != s.Record.Last() {
		t.Fatalf("ada's own: %+v, next %d", own, next)
	}
	if s.Record.OldestOf("ada") != 1 || s.Record.OldestOf("bob") != 20 || s.Record.Oldest() != 16 {
		t.Fatalf("oldest: ada %d, bob %d, session %d", s.Record.OldestOf("ada"), s.Record.OldestOf("bob"), s.Record.Oldest())
	}
	theirs, _ := s.Record.Since(0, Filter{Principal: "bob"}, 0)
	if len(theirs) != 3 || theirs[2].Key != "bob/19" {
		t.Fatalf("bob keeps his last 3: %+v", theirs)
	}
	// Paging through one's own ring.
	page, next := s.Record.Since(0, Filter{Principal: "ada"}, 1)
	if len(page) != 1 || next != 1 {
		t.Fatalf("a page of 1: %d, next %d", len(page), next)
	}
	page, _ = s.Record.Since(next, Filter{Principal: "ada"}, 1)
	if len(page) != 1 || page[0].Key != "ada/2" {
		t.Fatalf("the next page: %+v", page)
	}
	// What a student asks of the record is read from their ring.
	var l struct {
		Items  []json.RawMessage `json:"items"`
		Oldest uint64            `json:"oldest"`
	}
	r := serveAs(ada, s, "GET", "/rvplay/v1/exchanges?since=0", "")
	if err := json.Unmarshal(r.Body, &l); err != nil || len(l.Items) != 2 || l.Oldest != 1 {
		t.Fatalf("ada's /exchanges: %s", r.Body)
	}
	if got := s.Record.Students(); strings.Join(got, ",") != "ada,bob" {
		t.Fatalf("students with a ring: %v", got)
	}
	// The lesson engine's view of a student is theirs alone.
	if le := s.LessonExchanges("ada"); len(le) != 2 || le[0].Principal != "ada" {
		t.Fatalf("lesson exchanges of ada: %+v", le)
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// A student who got their 409 keeps it in their own ring while 200
// classmates send ten times what the session's ring holds: their verify
// still finds it, though the session's ring lost it long ago.
func TestAStudentsExchangesSurviveTwoHundredClassmates(t *testing.T) {
	def := `{"slug":"race","steps":[{"id":"conflict","actions":[{"id":"p","run":"kubectl replace -f cm.yaml"}],"solution":["p"],
		"verify":{"exchange":{"verb":"update","resource":"configmaps","name":"x","status":409,"reason":"Conflict"}}}]}`
	c, err := lesson.Load(fstest.MapFS{"01-race/lesson.json": {Data: []byte(def)}})
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, "class", Options{Lessons: c, NoControllers: true})
	ada := student("ada")
	serveAs(ada, s, "POST", cmPath, `{"metadata":{"name":"x"},"data":{"v":"1"}}`)
	stale := last(t, s).RV
	serveAs(ada, s, "PUT", cmPath+"/x", fmt.Sprintf(`{"metadata":{"name":"x","resourceVersion":%q},"data":{"v":"2"}}`, stale))
	if r := serveAs(ada, s, "PUT", cmPath+"/x", fmt.Sprintf(`{"metadata":{"name":"x","resourceVersion":%q},"data":{"v":"3"}}`, stale)); r.Status != 409 {
		t.Fatalf("ada's stale update: %d %s", r.Status, r.Body)
	}
	conflict := last(t, s).Seq

	var class []context.Context
	for i := range 200 {
		class = append(class, student(fmt.Sprintf("student-%03d", i)))
	}
	for range 100 {
		for _, ctx := range class {
			serveAs(ctx, s, "GET", cmPath+"/x", "")
		}
	}
	if s.Record.Oldest() <= conflict {
		t.Fatalf("the session's ring still holds ada's 409 (oldest %d, the 409 %d): the test shows nothing", s.Record.Oldest(), conflict)
	}
	verify := func(ctx context.Context) string {
		return string(serveAs(ctx, s, "POST", "/rvplay/v1/lessons/race/steps/1/verify", `{}`).Body)
	}
	if got := verify(ada); !strings.Contains(got, `"passed":true`) {
		t.Fatalf("ada's verify after 20,000 exchanges of her classmates: %s", got)
	}
	if got := verify(class[7]); !strings.Contains(got, `"passed":false`) {
		t.Fatalf("a classmate who only read passes on ada's 409: %s", got)
	}
	if own, _ := s.Record.Since(0, Filter{Principal: "student-007"}, 0); len(own) != 100 {
		t.Fatalf("a classmate keeps their own 100 reads: %d", len(own))
	}
}

// However many come, the record holds no more than its session ring and
// the students' budget: a student keeps their last perStudent exchanges
// while the class fits the budget, fewer (halved) as more join, and a
// student beyond the budget has their exchanges in the session's ring
// only.
func TestTheRecordKeepsItsBoundWhateverTheClassSize(t *testing.T) {
	const size, perStudent, budget = 16, 8, 64
	r := NewRecord(size, perStudent, budget)
	send := func(id string, n int) {
		for range n {
			r.add(&Exchange{Principal: api.Principal{ID: id, Role: api.RoleStudent}, Key: id})
			if held := r.held(); held > size+budget {
				t.Fatalf("after %s's exchange the record has room for %d, more than %d", id, held, size+budget)
			}
		}
	}
	keeps := func(id string) int {
		own, _ := r.Since(0, Filter{Principal: id}, 0)
		return len(own)
	}
	for i := range 8 { // the class fits: 8 × 8 = 64
		send(fmt.Sprintf("s%d", i), 20)
	}
	if keeps("s0") != 8 || keeps("s7") != 8 {
		t.Fatalf("a class that fits keeps %d each", keeps("s0"))
	}
	send("s8", 1) // a 9th halves everyone's ring
	if keeps("s0") != 4 || keeps("s8") != 1 {
		t.Fatalf("9 students: s0 keeps %d, s8 %d", keeps("s0"), keeps("s8"))
	}
	own, _ := r.Since(0, Filter{Principal: "s0"}, 0)
	if own[3].Seq != 20 {
		t.Fatalf("s0 keeps their last ones: newest %d", own[3].Seq)
	}
	for i := 9; i < 1000; i++ {
		send(fmt.Sprintf("s%d", i), 3)
	}
	if n := len(r.Students()); n != budget {
		t.Fatalf("%d students have a ring, the budget has room for %d", n, budget)
	}
	if keeps("s0") != 1 || keeps("s63") != 1 {
		t.Fatalf("64 students keep %d and %d each", keeps("s0"), keeps("s63"))
	}
	// s999 has no ring: what the session's ring holds of them.
	if keeps("s999") != 3 || r.OldestOf("s999") != r.Oldest() {
		t.Fatalf("a student beyond the budget: %d kept, oldest %d", keeps("s999"), r.OldestOf("s999"))
	}
}

// Every etcd request records its key: decoding it allocates only the key
// recorded, and a long key is cut to MaxRecordedKey bytes (whole base64
// quanta).
func TestRecordingAnEtcdKeyAllocatesOnlyTheKey(t *testing.T) {
	record := func(body string) Exchange {
		var e Exchange
		etcdRequest(&e, "/v3/kv/range", []byte(body))
		return e
	}
	body := `{"key":"` + base64.StdEncoding.EncodeToString([]byte("/registry/configmaps/default/x")) + `","range_end":"","revision":"12"}`
	if e := record(body); e.Key != "/registry/configmaps/default/x" || e.RangeEnd != "" || e.RequestRevision != 12 {
		t.Fatalf("key %q, range_end %q, revision %d", e.Key, e.RangeEnd, e.RequestRevision)
	}
	b := []byte(body)
	if n := testing.AllocsPerRun(100, func() { var e Exchange; etcdRequest(&e, "/v3/kv/range", b) }); n != 1 {
		t.Errorf("%v allocations, want 1 (the key)", n)
	}
	long := strings.Repeat("k", 1000)
	if got := record(`{"key":"` + base64.StdEncoding.EncodeToString([]byte(long)) + `"}`).Key; len(got) < MaxRecordedKey || len(got) > MaxRecordedKey+2 || !strings.HasPrefix(long, got) {
		t.Errorf("a key of 1000 bytes recorded as %d bytes", len(got))
	}
	if got := record(`{"key":"not base64!"}`).Key; got != "" {
		t.Errorf("a key that is not base64 recorded as %q", got)
	}
	if got := record(`{"key":"a2V5","revision":7}`).RequestRevision; got != 7 {
		t.Errorf("a revision written as a number recorded as %d", got)
	}
}

// A put names a key and no range (etcd's PutRequest has no range_end, and
// the gateway ignores one): its record reads the key and stops there, not
// walking the value, and a stray range_end is not recorded as its range.
func TestAPutsRecordReadsItsKeyAndNoRange(t *testing.T) {
	key := base64.StdEncoding.EncodeToString([]byte("/registry/configmaps/default/x"))
	body := []byte(`{"key":"` + key + `","value":"dg==","range_end":"` + key + `"}`)
	var put, del Exchange
	etcdRequest(&put, "/v3/kv/put", body)
	if put.Key != "/registry/configmaps/default/x" || put.RangeEnd != "" {
		t.Fatalf("a put's record: key %q, range_end %q", put.Key, put.RangeEnd)
	}
	etcdRequest(&del, "/v3/kv/deleterange", body)
	if del.RangeEnd != "/registry/configmaps/default/x" {
		t.Fatalf("a delete's record: range_end %q", del.RangeEnd)
	}
}

func TestWithTheWatchCacheEveryWatcherRecordsEachEventsResourceVersion(t *testing.T) {
	s := open(t, "t", Options{NoControllers: true, Settings: &Settings{BookmarkInterval: time.Minute, WatchCache: true}})
	serve(s, "POST", cmPath, `{"metadata":{"name":"a"}}`)
	from := last(t, s).RV
	type watcher struct {
		stream api.Stream
		rec    *WatchRecord
	}
	var ws []watcher
	for range 3 {
		w := serveAs(context.Background(), s, "GET", cmPath+"?watch=true&resourceVersion="+from, "")
		if w.Stream == nil {
			t.Fatalf("watch: %d %s", w.Status, w.Body)
		}
		defer w.Stream.Close()
		ws = append(ws, watcher{w.Stream, last(t, s).Watch})
	}
	// Each event is one frame for every watcher: each takes it in turn,
	// then the last ones by one watcher after the others.
	var rvs []string
	for i := range 20 {
		serve(s, "PUT", cmPath+"/a", fmt.Sprintf(`{"metadata":{"name":"a"},"data":{"n":"%d"}}`, i))
		rvs = append(rvs, last(t, s).RV)
	}
	for i, rv := range rvs {
		for j, w := range ws {
			if j == 2 && i >= 10 {
				continue
			}
			if _, err := w.stream.Next(context.Background()); err != nil {
				t.Fatal(err)
			}
			if sum := w.rec.Summary(); fmt.Sprint(sum.LastRV) != rv || sum.Events != int64(i+1) {
				t.Fatalf("watcher %d after event %d (%s): %+v", j, i, rv, sum)
			}
		}
	}
	for i := 10; i < len(rvs); i++ {
		if _, err := ws[2].stream.Next(context.Background()); err != nil {
			t.Fatal(err)
		}
		if sum := ws[2].rec.Summary(); fmt.Sprint(sum.LastRV) != rvs[i] || sum.Events != int64(i+1) {
			t.Fatalf("the late watcher after event %d (%s): %+v", i, rvs[i], sum)
		}
	}
}

func TestAWatchRecordKeepsNoFrameOnceReadOrEnded(t *testing.T) {
	s := open(t, "t", Options{NoControllers: true})
	serve(s, "POST", cmPath, `{"metadata":{"name":"a"}}`)
	w := serveAs(context.Background(), s, "GET", cmPath+"?watch=true&resourceVersion="+last(t, s).RV, "")
	rec := last(t, s).Watch
	serve(s, "PUT", cmPath+"/a", `{"metadata":{"name":"a"},"data":{"n":"1"}}`)
	rv := last(t, s).RV
	if _, err := w.Stream.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sum := rec.Summary(); fmt.Sprint(sum.LastRV) != rv || rec.lastFrame != nil {
		t.Fatalf("read: %+v, holding %q", sum, rec.lastFrame)
	}
	serve(s, "PUT", cmPath+"/a", `{"metadata":{"name":"a"},"data":{"n":"2"}}`)
	rv = last(t, s).RV
	if _, err := w.Stream.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.Stream.Close()
	if rec.lastFrame != nil {
		t.Fatalf("ended, holding %q", rec.lastFrame)
	}
	if sum := rec.Summary(); fmt.Sprint(sum.LastRV) != rv || sum.Events != 2 || !sum.Ended {
		t.Fatalf("ended: %+v", sum)
	}
}

func TestAnEtcdWatchRecordKeepsTheRevisionOfItsLastResponse(t *testing.T) {
	s, w, rec := watchKeyA(t)
	var revs []int64
	for i := range 3 {
		serve(s, "POST", "/v3/kv/put", fmt.Sprintf(`{"key":"YQ==","value":"%s"}`, base64.StdEncoding.EncodeToString([]byte(fmt.Sprint(i)))))
		revs = append(revs, s.Store.Rev())
	}
	if _, err := w.Stream.Next(context.Background()); err != nil { // created
		t.Fatal(err)
	}
	for _, rev := range revs {
		if _, err := w.Stream.Next(context.Background()); err != nil {
			t.Fatal(err)
		}
		if sum := rec.Summary(); sum.LastRV != rev || rec.lastFrame != nil {
			t.Fatalf("after the put at %d: %+v", rev, sum)
		}
	}
}

// A watch's record keeps the resourceVersion its last bookmark carried
// beside its last frame's, and a watch-list's the one its
// k8s.io/initial-events-end bookmark carried (the state it completes),
// however many events follow: a lesson's text quotes them (lessons 7 and
// 8), and the lab reads them in the record (bookmarkResourceVersion,
// initialEventsEndResourceVersion).
func TestAWatchRecordKeepsItsBookmarksResourceVersions(t *testing.T) {
	clock := clock.NewFake(epoch)
	s := open(t, "t", Options{Clock: clock, NoControllers: true})
	for _, name := range []string{"a", "b"} {
		serve(s, "POST", cmPath, `{"metadata":{"name":"`+name+`"}}`)
	}
	complete := last(t, s).RV
	serve(s, "POST", "/api/v1/namespaces/kube-public/configmaps", `{"metadata":{"name":"elsewhere"}}`)
	w := serveAs(context.Background(), s, "GET", cmPath+"?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan", "")
	if w.Stream == nil {
		t.Fatalf("watch-list: %d %s", w.Status, w.Body)
	}
	defer w.Stream.Close()
	rec := last(t, s).Watch
	next := func() string {
		t.Helper()
		f, err := w.Stream.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return string(f)
	}
	next()
	next()
	end := next()
	if !strings.Contains(end, "initial-events-end") {
		t.Fatalf("the third frame is not the end bookmark: %s", end)
	}
	sum := rec.Summary()
	// The bookmark carries the store's revision (past the last write in
	// default, as a consistent read's).
	if !sum.InitialEventsEnd || sum.InitialEventsEndRV != s.Store.Rev() || sum.BookmarkRV != sum.InitialEventsEndRV || sum.LastRV != sum.InitialEventsEndRV {
		t.Fatalf("after the end bookmark (store at %d, last write in default %s): %+v", s.Store.Rev(), complete, sum)
	}
	ended := sum.InitialEventsEndRV
	serve(s, "PUT", cmPath+"/a", `{"metadata":{"name":"a"},"data":{"n":"1"}}`)
	changed := last(t, s).RV
	next()
	clock.Step(time.Minute) // a bookmark
	next()
	serve(s, "PUT", cmPath+"/b", `{"metadata":{"name":"b"},"data":{"n":"1"}}`)
	next()
	sum = rec.Summary()
	if sum.InitialEventsEndRV != ended || fmt.Sprint(sum.BookmarkRV) != changed || fmt.Sprint(sum.LastRV) != last(t, s).RV || sum.Bookmarks != 2 || sum.Events != 4 {
		t.Fatalf("after a change, a bookmark at %s and a change: %+v", changed, sum)
	}
	all, _ := s.Record.Since(0, Filter{}, 0)
	for _, e := range all {
		if e.Watch == nil {
			continue
		}
		var j struct {
			Watch struct {
				InitialEventsEndResourceVersion, BookmarkResourceVersion, LastResourceVersion string
			}
		}
		b, _ := json.Marshal(e)
		if err := json.Unmarshal(b, &j); err != nil {
			t.Fatal(err)
		}
		want := [3]string{fmt.Sprint(ended), changed, last(t, s).RV}
		if got := [3]string{j.Watch.InitialEventsEndResourceVersion, j.Watch.BookmarkResourceVersion, j.Watch.LastResourceVersion}; got != want {
			t.Fatalf("JSON: %s, want %v", b, want)
		}
	}
}

// An etcd watch's progress notification is its bookmark: the record
// keeps the revision its header carried, when a response with events
// follows too.
func TestAnEtcdWatchRecordKeepsTheRevisionOfItsLastProgressNotification(t *testing.T) {
	s, w, rec := watchKeyA(t)
	next := func() {
		t.Helper()
		if _, err := w.Stream.Next(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	next()                                                          // created
	serve(s, "POST", "/v3/kv/put", `{"key":"Yg==","value":"eA=="}`) // elsewhere
	progress := s.Store.Rev()
	if err := w.Stream.(api.Receiver).Receive([]byte(`{"progress_request":{}}`)); err != nil {
		t.Fatal(err)
	}
	next()
	serve(s, "POST", "/v3/kv/put", `{"key":"YQ==","value":"eA=="}`)
	next()
	if sum := rec.Summary(); sum.Bookmarks != 1 || sum.BookmarkRV != progress || sum.LastRV != s.Store.Rev() {
		t.Fatalf("a progress notification at %d, then a put at %d: %+v", progress, s.Store.Rev(), sum)
	}
}

func TestTheKubectlCommandHeaderIsRecordedAsTheExchangesCommand(t *testing.T) {
	s := open(t, "t", Options{NoControllers: true})
	serveAs(context.Background(), s, "GET", cmPath, "", "Kubectl-Command", "kubectl rollout status", "Kubectl-Session", "0a1b")
	e := last(t, s)
	if e.KubectlCommand != "kubectl rollout status" {
		t.Fatalf("recorded %+v", e)
	}
	if b, err := e.MarshalJSON(); err != nil || !strings.Contains(string(b), `"kubectlCommand":"kubectl rollout status"`) {
		t.Fatalf("JSON %s %v", b, err)
	}
	serveAs(context.Background(), s, "GET", cmPath, "")
	if e := last(t, s); e.KubectlCommand != "" {
		t.Fatalf("a request without the header: %+v", e)
	}
}
