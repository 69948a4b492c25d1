package clientgo

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1apply "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/rvplay/rvplay/engine/api/kubeapi"
	"github.com/rvplay/rvplay/internal/kubeapiservertest"
	"github.com/rvplay/rvplay/internal/rvplaytest"
)

// kubeAPIServerOnRvplay starts rvplay (the server binary, SQLite, etcd's
// gRPC API) and a real kube-apiserver storing in it, compacting every 2 s
// on its own. `task test` builds kube-apiserver beforehand (minutes cold);
// a plain `go test` builds it here when it is not cached.
func kubeAPIServerOnRvplay(t *testing.T) (*kubeapiservertest.Server, *rvplaytest.Server) {
	t.Helper()
	bin := kubeapiservertest.Require(t)
	r := rvplaytest.StartGRPC(t, "kube")
	dir := t.TempDir()
	kas, err := kubeapiservertest.Start(bin, filepath.Join(dir, "kas"), r.GRPCAddr, "--etcd-compaction-interval=2s")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		kas.Stop()
		if t.Failed() {
			out, _ := os.ReadFile(kas.Log)
			if len(out) > 8000 {
				out = out[len(out)-8000:]
			}
			t.Logf("kube-apiserver log:\n%s", out)
		}
	})
	return kas, r
}

func kubeAPIServerConfig(kas *kubeapiservertest.Server) *rest.Config {
	cfg := restConfig(kas.URL)
	cfg.TLSClientConfig = rest.TLSClientConfig{Insecure: true}
	return cfg
}

// A real kube-apiserver runs on rvplay's etcd API: client-go's typed
// clients (protobuf, its default), RetryOnConflict through a real conflict,
// server-side apply with its field ownership, informers with watch-list and
// with list+watch; what it writes is in the session's keyspace under
// /registry/, in protobuf that the lab decodes; its own compaction runs
// without errors, a list at a compacted revision is then a 410 and a list
// afterwards still sees every object.
func TestKubeAPIServerRunsOnRvplay(t *testing.T) {
	rvplaytest.RequireSessionCompaction(t) // kube-apiserver's, every 2 s
	kas, r := kubeAPIServerOnRvplay(t)
	ctx := testContext(t)
	cfg := restConfig(kas.URL)
	cfg.TLSClientConfig = rest.TLSClientConfig{Insecure: true}
	cfg.ContentType = "" // client-go's default: protobuf
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps("default")
	created, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "k1"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	firstRV := created.ResourceVersion
	fresh := created.DeepCopy()
	fresh.Data["v"] = "2"
	if _, err := cms.Update(ctx, fresh, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// RetryOnConflict's first try writes the stale copy: etcd's failed
	// compare-and-swap comes back as a 409, and the second try, from a
	// fresh GET, lands.
	var tries []error
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := created.DeepCopy(), error(nil)
		if len(tries) > 0 {
			if cm, err = cms.Get(ctx, "k1", metav1.GetOptions{}); err != nil {
				return err
			}
		}
		cm.Data["v"] = "3"
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		tries = append(tries, err)
		return err
	})
	if err != nil || len(tries) != 2 || !apierrors.IsConflict(tries[0]) {
		t.Fatalf("RetryOnConflict from a stale copy: want a Conflict then success, got tries %v, result %v", tries, err)
	}

	// Server-side apply: a field is its manager's, another manager's apply
	// of it conflicts until forced.
	applied, err := cms.Apply(ctx, corev1apply.ConfigMap("k2", "default").WithData(map[string]string{"a": "b"}), metav1.ApplyOptions{FieldManager: "rvplay-test"})
	if err != nil || applied.Data["a"] != "b" {
		t.Fatalf("server-side apply: %v %v", applied, err)
	}
	if len(applied.ManagedFields) != 1 || applied.ManagedFields[0].Manager != "rvplay-test" || applied.ManagedFields[0].Operation != metav1.ManagedFieldsOperationApply {
		t.Fatalf("server-side apply: managedFields %+v", applied.ManagedFields)
	}
	other := corev1apply.ConfigMap("k2", "default").WithData(map[string]string{"a": "c"})
	if _, err := cms.Apply(ctx, other, metav1.ApplyOptions{FieldManager: "other"}); !apierrors.IsConflict(err) {
		t.Fatalf("another manager's apply of data.a: want a Conflict, got %v", err)
	}
	if forced, err := cms.Apply(ctx, other, metav1.ApplyOptions{FieldManager: "other", Force: true}); err != nil || forced.Data["a"] != "c" {
		t.Fatalf("forced apply: %v %v", forced, err)
	}

	// What kube-apiserver wrote is in the session's keyspace, in protobuf.
	value := sessionRange(t, r, "/registry/configmaps/default/k1", false)
	if len(value) != 1 || !kubeapi.IsStoredProtobuf(value[0].Value) {
		t.Fatalf("/registry/configmaps/default/k1 in the session: %+v", value)
	}
	if shown, err := kubeapi.StoredProtobufJSON(value[0].Value); err != nil || !strings.Contains(string(shown), `"data":{"v":"3"}`) {
		t.Fatalf("the lab's decoding: %s %v (value %s)", shown, err, base64.StdEncoding.EncodeToString(value[0].Value))
	}
	keys := map[string]bool{}
	for _, kv := range sessionRange(t, r, "/registry/", true) {
		keys[string(kv.Key)] = true
	}
	for _, k := range []string{"/registry/namespaces/default", "/registry/configmaps/default/k1", "/registry/configmaps/default/k2"} {
		if !keys[k] {
			t.Errorf("%s is not in the session's keyspace: %d keys under /registry/", k, len(keys))
		}
	}

	t.Run("informer with watch-list", func(t *testing.T) { informerScenarioOn(t, kubeAPIServerConfig(kas), "inf-watch-list", true) })
	t.Run("informer with list and watch", func(t *testing.T) { informerScenarioOn(t, kubeAPIServerConfig(kas), "inf-list-watch", false) })

	// kube-apiserver's own compaction (every 2 s) reaches the first
	// revision: an Exact list there is then 410 Expired.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := cms.List(ctx, metav1.ListOptions{ResourceVersion: firstRV, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a list at %s after 30 s of kube-apiserver's compaction: %v", firstRV, err)
		}
		time.Sleep(200 * time.Millisecond) // polling a real server's own timer, not waiting for an event of ours
	}
	// A list after the compaction, consistent (from etcd, or from the watch
	// cache once a progress notification proves it current) and from the
	// cache (resourceVersion 0), sees every object at its last value.
	for _, rv := range []string{"", "0"} {
		list, err := cms.List(ctx, metav1.ListOptions{ResourceVersion: rv})
		if err != nil {
			t.Fatalf("a list (resourceVersion %q) after compaction: %v", rv, err)
		}
		got := map[string]string{}
		for _, cm := range list.Items {
			got[cm.Name] = cm.Data["v"] + cm.Data["a"]
		}
		if got["k1"] != "3" || got["k2"] != "c" {
			t.Errorf("a list (resourceVersion %q) after compaction: %v", rv, got)
		}
	}
	// The compactor's own key, which it compare-and-swaps at each tick.
	if rev := sessionRange(t, r, "compact_rev_key", false); len(rev) != 1 || rev[0].Version < 2 {
		t.Errorf("compact_rev_key in the session: %+v, want a key written at two ticks at least", rev)
	}
	log, _ := os.ReadFile(kas.Log)
	for _, line := range strings.Split(string(log), "\n") {
		if strings.HasPrefix(line, "E") && strings.Contains(strings.ToLower(line), "compact") {
			t.Errorf("kube-apiserver's compaction failed: %s", line)
		}
	}
}

// storedKV is a key-value pair as the session's JSON gateway answers it.
type storedKV struct {
	Key     []byte `json:"key"`
	Value   []byte `json:"value"`
	Version int64  `json:"version,string"`
}

// sessionRange reads key (or every key under it, as a prefix) from the
// session's etcd view, the JSON gateway the lab reads.
func sessionRange(t *testing.T, r *rvplaytest.Server, key string, prefix bool) []storedKV {
	t.Helper()
	req := map[string]any{"key": []byte(key)}
	if prefix {
		end := []byte(key)
		end[len(end)-1]++
		req["range_end"], req["keys_only"] = end, true
	}
	body, _ := json.Marshal(req)
	resp, err := http.Post(r.SessionURL+"/v3/kv/range", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rr struct {
		Kvs []storedKV `json:"kvs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&rr); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("range %s: %d %v", key, resp.StatusCode, err)
	}
	return rr.Kvs
}
