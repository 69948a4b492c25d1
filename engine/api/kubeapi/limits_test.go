package kubeapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/api/kubeapi"
	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/session"
)

// counting wraps the schema's field manager and applier and
// counts their calls, so that a test can tell a request was refused
// before that work.
type counting struct {
	updates, applies atomic.Int64
}

func (c *counting) Update(r *kube.Resource, live, obj kube.Object, manager, sub string, now time.Time) error {
	c.updates.Add(1)
	return kube.SchemaFieldManager{}.Update(r, live, obj, manager, sub, now)
}

func (c *counting) Apply(r *kube.Resource, live, config kube.Object, manager string, force bool, now time.Time) (kube.Object, error) {
	c.applies.Add(1)
	return kube.SchemaApplier{}.Apply(r, live, config, manager, force, now)
}

func limitedSession(t *testing.T, store mvcc.Options) (*session.Session, *counting) {
	t.Helper()
	return limitedSessionOn(t, mvcc.NewMemoryBackend(), store)
}

// limitedSessionOn opens a session over b (a memory backend may be opened
// again once the session that had it is closed).
func limitedSessionOn(t *testing.T, b mvcc.Backend, store mvcc.Options) (*session.Session, *counting) {
	t.Helper()
	c := &counting{}
	// No controller: its status writes would race the tests' own writes.
	s, err := session.New("t", b, session.Options{Store: store, NoControllers: true,
		Kube: func(_ string, st mvcc.KV) api.Handler {
			return kubeapi.New(kubeapi.Options{Store: st, Kube: kube.Options{FieldManager: c, Applier: c}})
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, c
}

func call(s *session.Session, method, path, contentType, body string) *api.Response {
	return callCtx(context.Background(), s, method, path, contentType, body)
}

func callCtx(ctx context.Context, s *session.Session, method, path, contentType, body string) *api.Response {
	req := &api.Request{Method: method, Path: path, Header: api.Header{"Content-Type": {contentType}, "User-Agent": {"test/1"}}, Body: []byte(body)}
	if i := strings.IndexByte(path, '?'); i >= 0 {
		req.Path = path[:i]
		req.Query, _ = parseQuery(path[i+1:])
	}
	return s.Serve(ctx, req)
}

func parseQuery(q string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, kv := range strings.Split(q, "&") {
		k, v, _ := strings.Cut(kv, "=")
		out[k] = append(out[k], v)
	}
	return out, nil
}

// configMap is a ConfigMap with n data keys of one-byte values.
func configMap(name string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{`, name)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%06d":"v"`, i)
	}
	b.WriteString("}}")
	return b.String()
}

func wantStatus(t *testing.T, what string, resp *api.Response, want string) {
	t.Helper()
	if got := strings.TrimSpace(string(resp.Body)); got != want {
		if len(got) > 600 {
			got = got[:600] + "..."
		}
		t.Fatalf("%s: %d\n got  %s\n want %s", what, resp.Status, got, want)
	}
}

const cms = "/api/v1/namespaces/default/configmaps"

// The worst request of issue 10: a ConfigMap of 100,000 data keys. Its
// managedFields would take it past etcd's request limit, so an apply is
// refused as kube-apiserver refuses it, with etcd's error, and a create
// stores it without managedFields, as kube-apiserver's second try does;
// none of the writes runs the field manager (8 s of CPU on this object
// in structured-merge-diff).
func TestAHundredThousandKeyConfigMapIsRefusedOrStoredWithoutManagedFieldsBeforeAnyFieldTracking(t *testing.T) {
	s, c := limitedSession(t, mvcc.Options{})
	call(s, "GET", cms, "", "") // bootstrap, which creates namespaces
	c.updates.Store(0)
	big := configMap("big", 100000)
	tooLarge := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"etcdserver: request is too large","code":500}`

	resp := call(s, "PATCH", cms+"/big?fieldManager=me", "application/apply-patch+yaml", big)
	wantStatus(t, "apply", resp, tooLarge)
	if c.applies.Load() != 0 {
		t.Fatalf("the apply ran the field manager %d times", c.applies.Load())
	}

	resp = call(s, "POST", cms, "application/json", big)
	if resp.Status != 201 {
		t.Fatalf("create: %d %s", resp.Status, resp.Body[:200])
	}
	var created map[string]any
	json.Unmarshal(resp.Body, &created)
	if mf := created["metadata"].(map[string]any)["managedFields"]; mf != nil || c.updates.Load() != 0 {
		t.Fatalf("created with managedFields %v after %d field manager runs", mf, c.updates.Load())
	}
	// An update of it: kube-apiserver's field manager would give the
	// updater the one field it adds, and store it; here the object is past
	// the tracked fields, so it is stored without managedFields at once.
	rv := created["metadata"].(map[string]any)["resourceVersion"].(string)
	update := strings.Replace(configMap("big", 100001), `"name":"big"`, `"name":"big","resourceVersion":"`+rv+`"`, 1)
	if r := call(s, "PUT", cms+"/big", "application/json", update); r.Status != 200 || strings.Contains(string(r.Body), "managedFields") || c.updates.Load() != 0 {
		t.Fatalf("update: %d, %d field manager runs", r.Status, c.updates.Load())
	}
}

// Objects that fit in etcd with their managedFields but have more fields
// than the server tracks: created and updated without managedFields, and
// refused (413) by server-side apply.
func TestObjectsPastTheTrackedFieldsHaveNoManagedFieldsAndCannotBeApplied(t *testing.T) {
	s, c := limitedSession(t, mvcc.Options{})
	call(s, "GET", cms, "", "")
	c.updates.Store(0)
	n := kube.MaxTrackedFields + 1
	wantStatus(t, "apply", call(s, "PATCH", cms+"/wide?fieldManager=me", "application/apply-patch+yaml", configMap("wide", n)),
		fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Request entity too large: The allowed maximum fields in an object under server-side apply is %d, got %d","reason":"RequestEntityTooLarge","code":413}`,
			kube.MaxTrackedFields, n+5)) // apiVersion, kind, metadata, metadata.name and data besides
	resp := call(s, "POST", cms, "application/json", configMap("wide", n))
	if resp.Status != 201 || strings.Contains(string(resp.Body), "managedFields") || c.updates.Load()+c.applies.Load() != 0 {
		t.Fatalf("create: %d, field manager %d, applier %d", resp.Status, c.updates.Load(), c.applies.Load())
	}
	// Applying to it is refused for the live object's fields.
	resp = call(s, "PATCH", cms+"/wide?fieldManager=me", "application/apply-patch+yaml", configMap("wide", 1))
	if resp.Status != 413 || c.applies.Load() != 0 {
		t.Fatalf("apply to a wide object: %d %s", resp.Status, resp.Body)
	}
	// An object under the bound is tracked as before.
	resp = call(s, "POST", cms, "application/json", configMap("narrow", 10))
	if resp.Status != 201 || !strings.Contains(string(resp.Body), `"managedFields":[{"manager":"test"`) {
		t.Fatalf("narrow create: %d %s", resp.Status, resp.Body)
	}
}

// An object etcd cannot store even without managedFields is refused with
// etcd's error: a create after its second try, an update at once.
func TestAnObjectBeyondEtcdsRequestLimitIsRefusedWithEtcdsError(t *testing.T) {
	s, c := limitedSession(t, mvcc.Options{})
	huge := strings.Repeat("x", kube.MaxEtcdRequestBytes)
	body := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},` +
		`"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i","env":[{"name":"E","value":"` + huge + `"}]}]}}}}`
	tooLarge := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"etcdserver: request is too large","code":500}`
	wantStatus(t, "create", call(s, "POST", "/apis/apps/v1/namespaces/default/deployments", "application/json", body), tooLarge)
	// An update is not tried again without managedFields, and is refused
	// before the field manager runs.
	small := strings.Replace(body, huge, "v", 1)
	r := call(s, "POST", "/apis/apps/v1/namespaces/default/deployments", "application/json", small)
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var d map[string]any
	json.Unmarshal(r.Body, &d)
	rv := d["metadata"].(map[string]any)["resourceVersion"].(string)
	c.updates.Store(0)
	wantStatus(t, "update", call(s, "PUT", "/apis/apps/v1/namespaces/default/deployments/d", "application/json",
		strings.Replace(body, `"name":"d"`, `"name":"d","resourceVersion":"`+rv+`"`, 1)), tooLarge)
	if c.updates.Load() != 0 {
		t.Fatalf("the update ran the field manager")
	}
}

func TestJSONPatchOperationsAreCappedWithKubesWords(t *testing.T) {
	s, _ := limitedSession(t, mvcc.Options{})
	if r := call(s, "POST", cms, "application/json", configMap("c", 1)); r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	ops := "[" + strings.TrimSuffix(strings.Repeat(`{"op":"test","path":"/data/k000000","value":"v"},`, 10001), ",") + "]"
	wantStatus(t, "patch", call(s, "PATCH", cms+"/c", "application/json-patch+json", ops),
		`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001","reason":"RequestEntityTooLarge","code":413}`)
}

// A request whose deadline has passed is answered with kube-apiserver's
// 504s; a malformed ?timeout= with its 400.
func TestRequestDeadlinesAnswerKubesTimeouts(t *testing.T) {
	s, _ := limitedSession(t, mvcc.Options{})
	call(s, "GET", cms, "", "") // bootstrap
	past, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	wantStatus(t, "write", callCtx(past, s, "POST", cms, "application/json", configMap("late", 1)),
		`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: request did not complete within requested timeout - context deadline exceeded","reason":"Timeout","details":{},"code":504}`)
	wantStatus(t, "read", callCtx(past, s, "GET", cms, "", ""),
		`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}`)
	wantStatus(t, "bad timeout", call(s, "GET", cms+"?timeout=abc", "", ""),
		`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"invalid timeout specified in the request URL - time: invalid duration \"abc\"","reason":"BadRequest","code":400}`)
	if r := call(s, "GET", cms+"?timeout=30s", "", ""); r.Status != 200 {
		t.Fatalf("a request within its timeout: %d %s", r.Status, r.Body)
	}
}

var storageQuota = regexp.MustCompile(`^configmaps "(c\d+)" is forbidden: exceeded quota: quota-backend-bytes, requested: storage=(\d+), used: storage=(\d+), limited: storage=16Ki$`)

// A session's bounds read on the Kubernetes API as ResourceQuota's 403:
// the bytes quota (and the NOSPACE alarm it raises), the key cap and the
// server's memory budget.
func TestStoreBoundsReadAsResourceQuotaRefusals(t *testing.T) {
	s, _ := limitedSession(t, mvcc.Options{QuotaBackendBytes: 16 << 10})
	var resp *api.Response
	i := 0
	for ; i < 100; i++ {
		resp = call(s, "POST", cms, "application/json", strings.Replace(configMap(fmt.Sprintf("c%d", i), 40), `"v"`, `"`+strings.Repeat("v", 10)+`"`, -1))
		if resp.Status != 201 {
			break
		}
	}
	var st kube.Status
	if err := json.Unmarshal(resp.Body, &st); err != nil || st.Code != 403 || st.Reason != kube.ReasonForbidden {
		t.Fatalf("after %d creates: %d %s", i, resp.Status, resp.Body)
	}
	m := storageQuota.FindStringSubmatch(st.Message)
	if m == nil || m[1] != fmt.Sprintf("c%d", i) || m[3] != fmt.Sprint(s.Store.Usage().DBSize) {
		t.Fatalf("message %q (dbSize %d)", st.Message, s.Store.Usage().DBSize)
	}
	if d := st.Details; d == nil || d.Name != m[1] || d.Kind != "configmaps" || d.Group != "" {
		t.Fatalf("details %+v", st.Details)
	}
	// Under the NOSPACE alarm an update is refused alike; a delete works.
	if r := call(s, "PATCH", cms+"/c0", "application/merge-patch+json", `{"data":{"x":"y"}}`); r.Status != 403 || !strings.Contains(string(r.Body), `configmaps \"c0\" is forbidden: exceeded quota: quota-backend-bytes`) {
		t.Fatalf("patch under the alarm: %d %s", r.Status, r.Body)
	}
	if r := call(s, "DELETE", cms+"/c0", "", ""); r.Status != 200 {
		t.Fatalf("delete under the alarm: %d %s", r.Status, r.Body)
	}

	b := mvcc.NewMemoryBackend()
	keys, _ := limitedSessionOn(t, b, mvcc.Options{})
	call(keys, "GET", cms, "", "") // bootstrap: the system namespaces are keys too
	n := keys.Store.Usage().Keys
	keys.Close()
	keys, _ = limitedSessionOn(t, b, mvcc.Options{MaxKeys: n + 1})
	if r := call(keys, "POST", cms, "application/json", configMap("one", 1)); r.Status != 201 {
		t.Fatalf("first create: %d %s", r.Status, r.Body)
	}
	wantStatus(t, "key cap", call(keys, "POST", cms, "application/json", configMap("two", 1)),
		fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"two\" is forbidden: exceeded quota: max-keys-per-session, requested: count/keys=1, used: count/keys=%d, limited: count/keys=%d","reason":"Forbidden","details":{"name":"two","kind":"configmaps"},"code":403}`, n+1, n+1))

	b = mvcc.NewMemoryBackend()
	mem, _ := limitedSessionOn(t, b, mvcc.Options{})
	call(mem, "GET", cms, "", "")
	used := mem.Store.Usage().IndexMemory
	mem.Close()
	mem, _ = limitedSessionOn(t, b, mvcc.Options{Memory: mvcc.NewMemoryBudget(used + 100)})
	resp = call(mem, "POST", cms, "application/json", configMap("m", 1))
	if !regexp.MustCompile(fmt.Sprintf(`^\{"kind":"Status","apiVersion":"v1","metadata":\{\},"status":"Failure","message":"configmaps \\"m\\" is forbidden: exceeded quota: memory-budget, requested: memory=\d+, used: memory=%d, limited: memory=%d","reason":"Forbidden","details":\{"name":"m","kind":"configmaps"\},"code":403\}$`, used, used+100)).Match(resp.Body) {
		t.Fatalf("memory budget: %d %s", resp.Status, resp.Body)
	}
}
