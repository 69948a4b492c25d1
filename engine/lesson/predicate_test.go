package lesson

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"

	"github.com/rvplay/rvplay/engine/mvcc"
)

func newStore(t *testing.T) *mvcc.Store {
	t.Helper()
	s, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func put(t *testing.T, s *mvcc.Store, k, v string) {
	t.Helper()
	if _, err := s.Put(context.Background(), &mvcc.PutRequest{Key: []byte(k), Value: []byte(v)}); err != nil {
		t.Fatal(err)
	}
}

func del(t *testing.T, s *mvcc.Store, k string) {
	t.Helper()
	if _, err := s.DeleteRange(context.Background(), &mvcc.DeleteRangeRequest{Key: []byte(k)}); err != nil {
		t.Fatal(err)
	}
}

func pred(t *testing.T, src string) *Predicate {
	t.Helper()
	var p Predicate
	if err := json.Unmarshal([]byte(src), &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

func holds(t *testing.T, st *State, src string) bool {
	t.Helper()
	res, err := pred(t, src).Eval(st)
	if err != nil {
		t.Fatal(err)
	}
	return res.Passed
}

// numbered gives each exchange its Seq, 1, 2, ...
func numbered(es ...Exchange) []Exchange {
	for i := range es {
		es[i].Seq = int64(i + 1)
	}
	return es
}

func q(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

const nginx = "/apis/apps/v1/namespaces/default/deployments/nginx"

func TestKeyPredicatesReadTheStoreAndItsHistory(t *testing.T) {
	s := newStore(t)
	st := &State{Store: s}
	put(t, s, "k1", "v1")
	if !holds(t, st, `{"key":{"key":"k1","exists":true,"version":1,"value":"v1"}}`) || holds(t, st, `{"key":{"key":"k1","minVersion":2}}`) {
		t.Fatal("k1 after one put")
	}
	if holds(t, st, `{"key":{"key":"k1","recreated":true}}`) {
		t.Fatal("a key put once is not recreated")
	}
	put(t, s, "k1", "v2")
	del(t, s, "k1")
	if !holds(t, st, `{"key":{"key":"k1","exists":false}}`) || holds(t, st, `{"key":{"key":"k1","exists":true}}`) {
		t.Fatal("k1 after its delete")
	}
	put(t, s, "k1", "v3")
	if !holds(t, st, `{"key":{"key":"k1","version":1,"recreated":true}}`) {
		t.Fatal("k1 deleted and put again is recreated, at version 1")
	}
}

func TestObjectPredicatesSeeTheResourceVersionAsTheKeysModRevision(t *testing.T) {
	s := newStore(t)
	st := &State{Store: s}
	put(t, s, "/registry/deployments/default/nginx", `{"metadata":{"name":"nginx","generation":2},"spec":{"replicas":3},"status":{"observedGeneration":1}}`)
	if !holds(t, st, `{"object":{"resource":"deployments","namespace":"default","name":"nginx","fields":{"spec.replicas":3,"metadata.resourceVersion":"2","status.replicas":null}}}`) {
		t.Fatal("fields")
	}
	if holds(t, st, `{"object":{"resource":"deployments","namespace":"default","name":"nginx","same":[["status.observedGeneration","metadata.generation"]]}}`) ||
		!holds(t, st, `{"object":{"resource":"deployments","namespace":"default","name":"nginx","differ":[["status.observedGeneration","metadata.generation"]]}}`) {
		t.Fatal("observedGeneration 1 is behind generation 2")
	}
	if !holds(t, st, `{"object":{"resource":"deployments","namespace":"default","name":"gone","exists":false}}`) {
		t.Fatal("a missing object")
	}
}

func TestASuccessfulPutDoesNotPassGotA409(t *testing.T) {
	st := &State{Store: newStore(t), Exchanges: numbered(
		Exchange{Client: "B", Method: "PUT", Path: nginx, Status: 200, SentResourceVersion: "7", ResourceVersion: "9"},
	)}
	const got409 = `{"exchange":{"client":"B","verb":"update","resource":"deployments","name":"nginx","status":409,"reason":"Conflict"}}`
	if holds(t, st, got409) {
		t.Fatal("a 200 passes got-a-409")
	}
	st.Exchanges = append(st.Exchanges, Exchange{Seq: 2, Client: "A", Method: "PUT", Path: nginx, Status: 409, Reason: "Conflict"})
	if holds(t, st, got409) {
		t.Fatal("A's 409 passes B's")
	}
	st.Exchanges = append(st.Exchanges, Exchange{Seq: 3, Client: "B", Method: "PUT", Path: nginx, Status: 409, Reason: "Conflict", SentResourceVersion: "7"})
	if !holds(t, st, got409) {
		t.Fatal("B's 409")
	}
	st.Since = 3
	if holds(t, st, got409) {
		t.Fatal("a 409 from before the step counts")
	}
}

func TestAKubectlCommandIsMatchedExactlyAsKubectlNamesIt(t *testing.T) {
	st := &State{Store: newStore(t), Exchanges: numbered(
		Exchange{UserAgent: "kubectl/v1.36.3", KubectlCommand: "kubectl get", Method: "GET", Path: nginx, Status: 200},
	)}
	const rolloutStatus = `{"exchange":{"kubectlCommand":"kubectl rollout status","resource":"deployments","success":true}}`
	if holds(t, st, rolloutStatus) {
		t.Fatal("a kubectl get passes a rollout status")
	}
	st.Exchanges = append(st.Exchanges, Exchange{Seq: 2, UserAgent: "kubectl/v1.36.3", Method: "GET", Path: nginx, Status: 200})
	if holds(t, st, rolloutStatus) {
		t.Fatal("a request without the header passes a rollout status")
	}
	st.Exchanges = append(st.Exchanges, Exchange{Seq: 3, UserAgent: "kubectl/v1.36.3", KubectlCommand: "kubectl rollout status", Method: "GET", Path: nginx, Status: 200})
	if !holds(t, st, rolloutStatus) {
		t.Fatal("the rollout status")
	}
}

func TestASequenceIsInOrderAndSameClientMeansOne(t *testing.T) {
	st := &State{Store: newStore(t), Exchanges: numbered(
		Exchange{Client: "B", Method: "PUT", Path: nginx, Status: 409, Reason: "Conflict", SentResourceVersion: "7"},
		Exchange{Client: "A", Method: "GET", Path: nginx, Status: 200, ResourceVersion: "9"},
		Exchange{Client: "B", Method: "PUT", Path: nginx, Status: 200, SentResourceVersion: "9", ResourceVersion: "10"},
	)}
	reread := `{"sequence":{"sameClient":true,"steps":[{"verb":"update","status":409},{"verb":"get","status":200},{"verb":"update","status":200}]}}`
	if holds(t, st, reread) {
		t.Fatal("A's read counts for B")
	}
	if !holds(t, st, `{"sequence":{"steps":[{"verb":"update","status":409},{"verb":"get","status":200},{"verb":"update","status":200}]}}`) {
		t.Fatal("in order, any client")
	}
	if holds(t, st, `{"sequence":{"steps":[{"verb":"update","status":200},{"verb":"update","status":409}]}}`) {
		t.Fatal("out of order")
	}
	st.Exchanges = numbered(append(st.Exchanges[:2:2], Exchange{Client: "B", Method: "GET", Path: nginx, Status: 200, ResourceVersion: "9"}, st.Exchanges[2])...)
	if !holds(t, st, reread) {
		t.Fatal("B re-read before its retry")
	}
}

func TestWhereAWatchStartsIsJudgedAgainstTheClientsOwnListAndWatch(t *testing.T) {
	cms := "/api/v1/namespaces/default/configmaps"
	record := numbered(
		Exchange{Client: "R", Method: "GET", Path: cms, Status: 200, ResourceVersion: "20"},
		Exchange{Client: "R", Method: "GET", Path: cms, Query: q("watch", "true", "resourceVersion", "20"), Status: 200,
			Watch: &WatchRecord{Events: 2, LastResourceVersion: "23", Ended: true}},
		Exchange{Client: "R", Method: "GET", Path: cms, Query: q("watch", "true", "resourceVersion", "23"), Status: 200, Watch: &WatchRecord{}},
		Exchange{Client: "R", Method: "GET", Path: cms, Query: q("watch", "true", "resourceVersion", "12"), Status: 200, Watch: &WatchRecord{Events: 5}},
		Exchange{Client: "S", Method: "GET", Path: cms, Query: q("watch", "true", "resourceVersion", "20"), Status: 200, Watch: &WatchRecord{}},
		Exchange{Client: "R", Method: "GET", Path: cms, Query: q("watch", "true"), Status: 200, Watch: &WatchRecord{}},
	)
	want := []string{"", "list", "last", "item", "", "none"}
	for i, w := range want {
		if got := watchStart(record, i); got != w {
			t.Errorf("exchange %d starts from %q, want %q", i+1, got, w)
		}
	}
	fs := DetectorNamed("watch-from-item-resourceversion").Find(record)
	if len(fs) != 1 || fs[0].Seq != 4 {
		t.Fatalf("findings %+v", fs)
	}
}

func TestDetectors(t *testing.T) {
	cms := "/api/v1/namespaces/default/configmaps"
	for _, tc := range []struct {
		name   string
		record []Exchange
		want   []int64
	}{
		{"retry-409-without-reread", numbered(
			Exchange{Client: "B", Method: "PUT", Path: nginx, Status: 409, Reason: "Conflict", SentResourceVersion: "7"},
			Exchange{Client: "B", Method: "PUT", Path: nginx, Status: 409, Reason: "Conflict", SentResourceVersion: "7"},
			Exchange{Client: "B", Method: "GET", Path: nginx, Status: 200, ResourceVersion: "9"},
			Exchange{Client: "B", Method: "PUT", Path: nginx, Status: 200, SentResourceVersion: "9"},
		), []int64{2}},
		{"update-without-resourceversion", numbered(
			Exchange{Client: "B", Method: "PUT", Path: nginx, Status: 200},
			Exchange{Client: "B", Method: "PUT", Path: nginx, Status: 200, SentResourceVersion: "9"},
			Exchange{Client: "B", Method: "PATCH", Path: nginx, Status: 200},
		), []int64{1}},
		{"rewatch-after-410", numbered(
			Exchange{Client: "R", Method: "GET", Path: cms, Query: q("watch", "true", "resourceVersion", "5"), Status: 200, Watch: &WatchRecord{ErrorCode: 410, Ended: true}},
			Exchange{Client: "R", Method: "GET", Path: cms, Query: q("watch", "true", "resourceVersion", "5"), Status: 200, Watch: &WatchRecord{ErrorCode: 410, Ended: true}},
			Exchange{Client: "R", Method: "GET", Path: cms, Status: 200, ResourceVersion: "30"},
		), []int64{2}},
		{"relist-after-410", numbered(
			Exchange{Client: "R", Method: "GET", Path: cms, Query: q("watch", "true", "resourceVersion", "5"), Status: 200, Watch: &WatchRecord{ErrorCode: 410, Ended: true}},
			Exchange{Client: "R", Method: "GET", Path: cms, Status: 200, ResourceVersion: "30"},
		), []int64{2}},
		{"update-from-cached-read", numbered(
			Exchange{Client: "B", Method: "GET", Path: nginx, Query: q("resourceVersion", "0"), Status: 200, ResourceVersion: "7"},
			Exchange{Client: "B", Method: "PUT", Path: nginx, Status: 409, Reason: "Conflict", SentResourceVersion: "7"},
			Exchange{Client: "B", Method: "GET", Path: nginx, Status: 200, ResourceVersion: "9"},
			Exchange{Client: "B", Method: "PUT", Path: nginx, Status: 200, SentResourceVersion: "9"},
		), []int64{2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int64
			for _, f := range DetectorNamed(tc.name).Find(tc.record) {
				got = append(got, f.Seq)
			}
			if len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
				t.Fatalf("found at %v, want %v", got, tc.want)
			}
		})
	}
}

// On a class's session every student's lab has a reflector I: one
// student's relist is not another's list. Ada's reflector relists at 14
// after a 410; Bashir's resumes from its own last resourceVersion, 12,
// which is no item's.
func TestEachStudentsLabClientsAreTheirOwn(t *testing.T) {
	cms := "/api/v1/namespaces/default/configmaps"
	watch := func(who, rv string, w *WatchRecord) Exchange {
		return Exchange{Principal: who, Client: "I", Method: "GET", Path: cms, Query: q("watch", "true", "resourceVersion", rv), Status: 200, Watch: w}
	}
	record := numbered(
		Exchange{Principal: "bashir", Client: "I", Method: "GET", Path: cms, Status: 200, ResourceVersion: "11"},
		watch("bashir", "11", &WatchRecord{LastResourceVersion: "12", Ended: true}),
		watch("ada", "12", &WatchRecord{ErrorCode: 410, Ended: true}),
		Exchange{Principal: "ada", Client: "I", Method: "GET", Path: cms, Query: q("resourceVersion", "12"), Status: 200, ResourceVersion: "14"},
		watch("bashir", "12", nil),
	)
	if got := FindAll(record); len(got) != 1 || got[0].Detector != "relist-after-410" || got[0].Principal != "ada" {
		t.Fatalf("found %+v, want Ada's relist alone", got)
	}
}

func TestExchangesKnowTheirVerbAndTarget(t *testing.T) {
	for _, tc := range []struct {
		e    Exchange
		verb string
		t    Target
	}{
		{Exchange{Method: "GET", Path: nginx}, "get", Target{Group: "apps", Resource: "deployments", Namespace: "default", Name: "nginx"}},
		{Exchange{Method: "PUT", Path: nginx + "/status"}, "update", Target{Group: "apps", Resource: "deployments", Namespace: "default", Name: "nginx", Subresource: "status"}},
		{Exchange{Method: "PATCH", Path: nginx, ContentType: "application/apply-patch+yaml"}, "apply", Target{Group: "apps", Resource: "deployments", Namespace: "default", Name: "nginx"}},
		{Exchange{Method: "GET", Path: "/api/v1/namespaces/default/configmaps", Query: q("watch", "1")}, "watch", Target{Resource: "configmaps", Namespace: "default"}},
		{Exchange{Method: "GET", Path: "/api/v1/namespaces/default"}, "get", Target{Resource: "namespaces", Name: "default"}},
		{Exchange{Method: "POST", Path: "/v3/kv/range"}, "range", Target{}},
	} {
		if v := tc.e.Verb(); v != tc.verb {
			t.Errorf("%s %s: verb %q, want %q", tc.e.Method, tc.e.Path, v, tc.verb)
		}
		if got, _ := tc.e.Target(); got != tc.t {
			t.Errorf("%s: target %+v, want %+v", tc.e.Path, got, tc.t)
		}
	}
}
