//go:build !(js && wasm)

package apply

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/kube/schema"
)

// Apply and UpdateManagedFields must answer exactly what
// structured-merge-diff answers over the same schema (smd_*_test.go, the
// oracle): same objects, same managedFields (times included), same
// errors. Random pod sequences reach what test/applydiff's configmaps and
// deployments (against kube's own field manager) do not: multi-key map
// lists with a defaulted key (ports), set lists (finalizers), atomic maps
// and lists, nulls, several containers reordered, status writes, stale
// and foreign managedFields.
func TestApplyAgreesWithStructuredMergeDiffOnRandomPods(t *testing.T) {
	pod := schema.ForGVK("v1", "Pod")
	stats := map[string]int{}
	defer func() { t.Logf("steps: %v", stats) }()
	for seed := int64(1); seed <= 200; seed++ {
		r := rand.New(rand.NewSource(seed))
		var smdLive, ourLive map[string]any
		now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
		for step := 0; step < 30; step++ {
			now = now.Add(time.Duration(r.Intn(3)) * time.Second)
			manager := []string{"alice", "bob", "kubectl", "ctrl"}[r.Intn(4)]
			sub := ""
			if r.Intn(6) == 0 {
				sub = "status"
			}
			w := Write{Manager: manager, Subresource: sub, Now: now}
			obj := randomPod(r)
			var desc string
			var smdErr, ourErr error
			var smdOut, ourOut map[string]any
			if r.Intn(3) > 0 {
				force := r.Intn(3) == 0
				desc = fmt.Sprintf("apply by %s sub=%q force=%v", manager, sub, force)
				smdOut, smdErr = applySMD(pod, "v1", copyJSON(smdLive), copyJSON(obj), w, force)
				ourOut, ourErr = Apply(pod, "v1", copyJSON(ourLive), copyJSON(obj), w, force)
			} else {
				desc = fmt.Sprintf("update by %s sub=%q", manager, sub)
				if r.Intn(4) == 0 && smdLive != nil {
					// A client that sends back what it read, with edits.
					obj = copyJSON(smdLive)
					md, _ := obj["metadata"].(map[string]any)
					if md != nil {
						md["labels"] = map[string]any{"edited": fmt.Sprint(step)}
						switch r.Intn(3) {
						case 0:
							md["managedFields"] = []any{} // a client clearing them
						case 1: // a client's own, with paths below atomic fields
							md["managedFields"] = []any{map[string]any{"manager": "hand", "operation": "Update", "apiVersion": "v1",
								"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:spec": map[string]any{
									"f:nodeSelector":  map[string]any{"f:zone": map[string]any{}},
									"f:tolerations":   map[string]any{".": map[string]any{}, "i:0": map[string]any{}},
									"f:unknownThing":  map[string]any{"f:x": map[string]any{}},
									"f:restartPolicy": map[string]any{},
									"f:containers": map[string]any{`k:{"name":"app"}`: map[string]any{
										"f:args": map[string]any{"i:0": map[string]any{}}, "f:image": map[string]any{}}}}}}}
						}
					}
				}
				smdOut, ourOut = copyJSON(obj), copyJSON(obj)
				smdErr = updateManagedFieldsSMD(pod, "v1", copyJSON(smdLive), smdOut, w)
				ourErr = UpdateManagedFields(pod, "v1", copyJSON(ourLive), ourOut, w)
			}
			stats[fmt.Sprintf("%s err=%v", desc[:6], smdErr != nil)]++
			if fmt.Sprint(smdErr) != fmt.Sprint(ourErr) {
				t.Fatalf("seed %d step %d %s %s:\n smd  %v\n ours %v", seed, step, desc, js(t, obj), smdErr, ourErr)
			}
			if smdErr != nil {
				continue
			}
			if a, b := js(t, smdOut), js(t, ourOut); a != b {
				t.Fatalf("seed %d step %d %s %s:\n smd  %s\n ours %s", seed, step, desc, js(t, obj), a, b)
			}
			smdLive, ourLive = smdOut, ourOut
		}
	}
}

func copyJSON(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	b, _ := json.Marshal(m)
	var out map[string]any
	json.Unmarshal(b, &out)
	return out
}

func randomPod(r *rand.Rand) map[string]any {
	pick := func(xs ...any) any { return xs[r.Intn(len(xs))] }
	md := map[string]any{"name": "p"}
	if r.Intn(2) == 0 {
		md["labels"] = map[string]any{pick("a", "b").(string): pick("1", "2")}
	}
	if r.Intn(4) == 0 {
		var fs []any
		for _, f := range []string{"x/one", "x/two", "x/three"} {
			if r.Intn(2) == 0 {
				fs = append(fs, f)
			}
		}
		md["finalizers"] = fs
	}
	if r.Intn(8) == 0 {
		md["creationTimestamp"] = nil
	}
	var containers []any
	for _, name := range []string{"app", "side", "log"} {
		if r.Intn(2) == 0 {
			continue
		}
		c := map[string]any{"name": name}
		if r.Intn(3) > 0 {
			c["image"] = pick("nginx:1", "nginx:2", "busybox")
		}
		if r.Intn(3) == 0 {
			var ports []any
			for _, p := range []int{80, 443} {
				if r.Intn(2) == 0 {
					port := map[string]any{"containerPort": p}
					if r.Intn(2) == 0 {
						port["protocol"] = pick("TCP", "UDP")
					}
					if r.Intn(3) == 0 {
						port["name"] = pick("web", "tls")
					}
					ports = append(ports, port)
				}
			}
			c["ports"] = ports
		}
		if r.Intn(3) == 0 {
			c["env"] = []any{map[string]any{"name": pick("A", "B"), "value": pick("1", "2")}}
		}
		if r.Intn(4) == 0 {
			c["args"] = []any{pick("-v", "-q"), "run"}
		}
		if r.Intn(5) == 0 {
			c["resources"] = map[string]any{"limits": map[string]any{"cpu": pick("100m", "1", 2)}}
		}
		containers = append(containers, c)
	}
	r.Shuffle(len(containers), func(i, j int) { containers[i], containers[j] = containers[j], containers[i] })
	switch r.Intn(25) {
	case 0: // duplicate keys: refused in an apply, kept (untracked) in an update
		containers = append(containers, map[string]any{"name": "app", "image": "dup"}, map[string]any{"name": "app"})
	case 1: // a list-map item without its key
		containers = append(containers, map[string]any{"image": "nameless"})
	case 2: // an undeclared field
		containers = append(containers, map[string]any{"name": "odd", "colour": "blue"})
	}
	spec := map[string]any{"containers": containers}
	if r.Intn(3) == 0 {
		spec["nodeSelector"] = map[string]any{pick("zone", "disk").(string): pick("a", "b")}
	}
	if r.Intn(4) == 0 {
		spec["tolerations"] = []any{map[string]any{"key": pick("k1", "k2"), "operator": "Exists"}}
	}
	if r.Intn(4) == 0 {
		spec["restartPolicy"] = pick("Always", "Never")
	}
	obj := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}
	if r.Intn(4) == 0 {
		obj["status"] = map[string]any{"phase": pick("Pending", "Running"), "conditions": []any{map[string]any{"type": "Ready", "status": pick("True", "False")}}}
	}
	return obj
}

// The oracle's cost beside BenchmarkApplyDeployment and
// BenchmarkUpdateManagedFieldsDeployment: the figures the choice of the
// hand-written merge for both builds was measured by (see the package
// doc).
func BenchmarkApplySMDDeployment(b *testing.B) {
	live := golden(b, "create deployment (defaulting shown)").Received
	cfg := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "nginx", "labels": map[string]any{"team": "a"}},
		"spec": map[string]any{"replicas": 4, "template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "sidecar", "image": "busybox", "env": []any{map[string]any{"name": "A", "value": "1"}}}}}}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := applySMD(deployment, "apps/v1", live, cfg, Write{Manager: "bench", Now: at07}, true); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUpdateManagedFieldsSMDDeployment(b *testing.B) {
	old := golden(b, "create deployment (defaulting shown)").Received
	newObj := roundTrip(b, old)
	newObj["spec"].(map[string]any)["replicas"] = 7
	b.ReportAllocs()
	for b.Loop() {
		n := roundTrip(b, newObj)
		if err := updateManagedFieldsSMD(deployment, "apps/v1", old, n, Write{Manager: "bench", Now: at07}); err != nil {
			b.Fatal(err)
		}
	}
}
