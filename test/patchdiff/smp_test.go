package patchdiff

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"testing"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"github.com/rvplay/rvplay/engine/kube/patch"
	"github.com/rvplay/rvplay/engine/kube/schema"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	kproto "k8s.io/kube-openapi/pkg/util/proto"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

const podDef = "io.k8s.api.core.v1.Pod"

// metaV3 is the patch metadata kubectl ≥1.27 builds from /openapi/v3.
func metaV3(t *testing.T) strategicpatch.LookupPatchMeta {
	doc, ok := schema.OpenAPIV3("api/v1")
	if !ok {
		t.Fatal("no api/v1 document")
	}
	var d struct {
		Components struct {
			Schemas map[string]*spec.Schema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	return strategicpatch.PatchMetaFromOpenAPIV3{SchemaList: d.Components.Schemas, Schema: d.Components.Schemas[podDef]}
}

// metaV2 is the patch metadata older kubectl builds from /openapi/v2,
// decoded from our protobuf encoding by gnostic and kube-openapi.
func metaV2(t *testing.T) strategicpatch.LookupPatchMeta {
	var doc openapi_v2.Document
	if err := proto.Unmarshal(schema.OpenAPIV2Protobuf(), &doc); err != nil {
		t.Fatalf("gnostic cannot decode our protobuf: %v", err)
	}
	models, err := kproto.NewOpenAPIData(&doc)
	if err != nil {
		t.Fatalf("kube-openapi rejects our document: %v", err)
	}
	s := models.LookupModel(podDef)
	if s == nil {
		t.Fatal("no Pod model")
	}
	return strategicpatch.NewPatchMetaFromOpenAPI(s)
}

type gen struct{ r *rand.Rand }

func (g gen) pick(xs ...string) string { return xs[g.r.Intn(len(xs))] }
func (g gen) maybe() bool              { return g.r.Intn(2) == 0 }

func (g gen) container(name string, forPatch bool) map[string]any {
	c := map[string]any{"name": name}
	if g.maybe() {
		c["image"] = name + ":" + g.pick("1", "2")
	}
	if g.maybe() {
		var env []any
		for _, n := range []string{"A", "B", "C"} {
			if g.maybe() {
				e := map[string]any{"name": n, "value": g.pick("x", "y")}
				if forPatch && g.r.Intn(4) == 0 {
					e = map[string]any{"name": n, "$patch": "delete"}
				}
				env = append(env, e)
			}
		}
		c["env"] = env
	}
	if g.maybe() {
		var ports []any
		for _, p := range []int{80, 443} {
			if g.maybe() {
				ports = append(ports, map[string]any{"containerPort": p, "name": g.pick("http", "https")})
			}
		}
		c["ports"] = ports
	}
	if g.maybe() {
		c["args"] = []any{g.pick("--a", "--b")}
	}
	if forPatch && g.r.Intn(6) == 0 {
		c["args"] = nil
	}
	return c
}

func (g gen) pod() map[string]any {
	var cs []any
	for _, n := range []string{"app", "log", "side"} {
		if g.maybe() || n == "app" {
			cs = append(cs, g.container(n, false))
		}
	}
	md := map[string]any{"name": "p", "labels": map[string]any{"a": "1", "b": "2"}}
	if g.maybe() {
		md["finalizers"] = []any{"x", "y"}
	}
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": md,
		"spec": map[string]any{"containers": cs, "volumes": []any{map[string]any{"name": "v", "emptyDir": map[string]any{}}}}}
}

func (g gen) patch() map[string]any {
	p := map[string]any{}
	spec := map[string]any{}
	if g.maybe() {
		var cs, order []any
		for _, n := range []string{"log", "app", "new", "side"} {
			if g.maybe() {
				c := g.container(n, true)
				if g.r.Intn(5) == 0 {
					c = map[string]any{"name": n, "$patch": "delete"}
				}
				cs = append(cs, c)
			}
			if g.maybe() {
				order = append(order, map[string]any{"name": n})
			}
		}
		if g.r.Intn(8) == 0 {
			cs = append([]any{map[string]any{"$patch": "replace"}}, cs...)
		}
		spec["containers"] = cs
		if order != nil && g.maybe() {
			spec["$setElementOrder/containers"] = order
		}
	}
	if g.r.Intn(4) == 0 {
		spec["volumes"] = []any{map[string]any{"name": "v", "$retainKeys": []any{"name", "configMap"}, "configMap": map[string]any{"name": "cm"}}}
	}
	if g.r.Intn(4) == 0 {
		spec["restartPolicy"] = g.pick("Never", "Always")
	}
	if len(spec) > 0 {
		p["spec"] = spec
	}
	md := map[string]any{}
	if g.maybe() {
		md["labels"] = map[string]any{g.pick("a", "c"): g.pick("9", "")}
		if g.r.Intn(3) == 0 {
			md["labels"].(map[string]any)["b"] = nil
		}
	}
	if g.maybe() {
		md["finalizers"] = []any{g.pick("y", "z")}
	}
	if g.r.Intn(3) == 0 {
		// Never a value the patch also adds: kube applies the two keys in
		// map order, so the result of such a patch is random there.
		md["$deleteFromPrimitiveList/finalizers"] = []any{g.pick("x", "w")}
	}
	if len(md) > 0 {
		p["metadata"] = md
	}
	return p
}

func canon(b []byte) string {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return "invalid: " + string(b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func TestStrategicMergeAgreesWithKubeStrategicPatch(t *testing.T) {
	pod := schema.ForGVK("v1", "Pod")
	for _, m := range []struct {
		name string
		meta strategicpatch.LookupPatchMeta
	}{{"openapi-v3", metaV3(t)}, {"openapi-v2-protobuf", metaV2(t)}} {
		t.Run(m.name, func(t *testing.T) {
			agreeErr := 0
			for seed := int64(1); seed <= 3000; seed++ {
				g := gen{rand.New(rand.NewSource(seed))}
				orig, _ := json.Marshal(g.pod())
				p, _ := json.Marshal(g.patch())
				want, kerr := strategicpatch.StrategicMergePatchUsingLookupPatchMeta(orig, p, m.meta)
				got, oerr := patch.StrategicMerge(pod, orig, p)
				if (kerr != nil) != (oerr != nil) {
					t.Fatalf("seed %d: kube err %v, ours %v\n orig  %s\n patch %s\n kube %s\n ours %s", seed, kerr, oerr, orig, p, want, got)
				}
				if kerr != nil {
					var pe *patch.Error
					if !errors.As(oerr, &pe) || (pe.Message != kerr.Error() && pe.Message != patch.GenericInvalidMessage) {
						t.Fatalf("seed %d: kube error %q, ours %v", seed, kerr, oerr)
					}
					agreeErr++
					continue
				}
				if canon(want) != canon(got) {
					t.Fatalf("seed %d:\n orig  %s\n patch %s\n kube %s\n ours %s", seed, orig, p, canon(want), canon(got))
				}
			}
			t.Logf("3000 patches, %d rejected by both", agreeErr)
		})
	}
}

var _ = fmt.Sprint
