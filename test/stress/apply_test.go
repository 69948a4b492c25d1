package stress

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// wideConfigMap is a ConfigMap with keys data keys named by format, of one
// byte each.
func wideConfigMap(name, format string, keys int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{`, name)
	for i := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"`+format+`":"v"`, i)
	}
	b.WriteString(`}}`)
	return b.String()
}

// tooLargeForEtcd is kube-apiserver's answer to a write etcd refuses for
// its size (--max-request-bytes): a 500 with etcd's words.
const tooLargeForEtcd = "etcdserver: request is too large"

// Attack 7: a ConfigMap with 100,000 data keys through apply. Issue 10
// measured 10.7 s of CPU for one server-side apply (structured-merge-diff
// inserting field by field). kube-apiserver runs the same library, bounded
// by etcd's request limit and a request timeout; here the work of one
// request is bounded before it starts (engine/kube/limits.go): a write
// past etcd's limit is refused as kube-apiserver refuses it, and
// managedFields are not computed for an object of more fields than
// MaxTrackedFields. One request must not hold a core for seconds.
func TestAttack07WideApply(t *testing.T) {
	const keys = 100000
	rounds := scaled(1, 3)
	a := startAttack(t, "07 apply of 100,000 keys", Bounds{RssAnon: 256 << 20, Goroutines: 32})
	a.begin()
	type write struct {
		name, method, path, contentType, body string
		// ok says whether the answer is one kube-apiserver could give.
		ok func(status int, st kubeStatus) bool
	}
	path := a.Attack + "/api/v1/namespaces/default/configmaps"
	writes := []write{
		// Issue 10's: 1.6 MB of JSON, which with its managedFields is past
		// what etcd takes.
		{"server-side apply of issue 10's ConfigMap", http.MethodPatch, path + "/wide?fieldManager=stress&force=true",
			"application/apply-patch+yaml", wideConfigMap("wide", "k%06d", keys), func(status int, st kubeStatus) bool {
				return status == 500 && st.Message == tooLargeForEtcd
			}},
		// The same number of keys in 1.2 MB, which etcd would take.
		{"server-side apply of a compact one", http.MethodPatch, path + "/compact?fieldManager=stress&force=true",
			"application/apply-patch+yaml", wideConfigMap("compact", "%05x", keys), func(status int, st kubeStatus) bool {
				return status < 300 || status == 413 || status == 422 || (status == 500 && st.Message == tooLargeForEtcd)
			}},
		{"a create of a compact one", http.MethodPost, path,
			"application/json", wideConfigMap("created", "%05x", keys), func(status int, st kubeStatus) bool {
				return status < 300 || status == 413 || status == 422 || (status == 500 && st.Message == tooLargeForEtcd)
			}},
	}
	var answers []string
	var costliest time.Duration
	var slowest time.Duration
	for range rounds {
		for _, w := range writes {
			req, err := http.NewRequest(w.method, w.path, strings.NewReader(w.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", w.contentType)
			cpu, start := a.cpu(), time.Now()
			resp, err := attacker.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			slowest = max(slowest, time.Since(start))
			cost := a.cpu() - cpu
			costliest = max(costliest, cost)
			st := decodeStatus(b)
			answers = append(answers, fmt.Sprintf("%s: %d %s in %v", w.name, resp.StatusCode, st.Reason, cost.Round(10*time.Millisecond)))
			if !w.ok(resp.StatusCode, st) {
				t.Errorf("%s: %d %.300s", w.name, resp.StatusCode, b)
			}
			if cost > time.Second {
				t.Errorf("%s of %d keys: %v of server CPU, one request holds a core for seconds", w.name, keys, cost)
			}
			// The next round's create meets the first one's object.
			if w.method == http.MethodPost && resp.StatusCode < 300 {
				del, _ := http.NewRequest(http.MethodDelete, w.path+"/created", nil)
				if resp, err := attacker.Do(del); err == nil {
					resp.Body.Close()
				}
			}
		}
	}
	a.note("%s; the costliest %v of server CPU, the slowest answered in %v", strings.Join(answers[:len(writes)], "; "),
		costliest.Round(10*time.Millisecond), slowest.Round(10*time.Millisecond))
	a.end()
}
