package applydiff

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/kube/apply"
	"github.com/rvplay/rvplay/engine/kube/schema"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

func typeConverter(t *testing.T) managedfields.TypeConverter {
	var doc struct {
		Definitions map[string]*spec.Schema `json:"definitions"`
	}
	if err := json.Unmarshal(schema.OpenAPIV2(), &doc); err != nil {
		t.Fatal(err)
	}
	tc, err := managedfields.NewTypeConverter(doc.Definitions, false)
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

// ours is package apply holding its live object.
type ours struct {
	t    *schema.Type
	av   string
	live map[string]any
	now  time.Time
}

func (o *ours) apply(cfg map[string]any, manager, sub string, force bool) error {
	out, err := apply.Apply(o.t, o.av, o.live, cfg, apply.Write{Manager: manager, Subresource: sub, Now: o.now}, force)
	if err == nil {
		o.live = out
	}
	return err
}

func (o *ours) update(obj map[string]any, manager, sub string) error {
	n := deepCopy(obj)
	if err := apply.UpdateManagedFields(o.t, o.av, o.live, n, apply.Write{Manager: manager, Subresource: sub, Now: o.now}); err != nil {
		return err
	}
	o.live = n
	return nil
}

func deepCopy(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	json.Unmarshal(b, &out)
	return out
}

// comparable renders an object without times, with managedFields sorted
// by manager/operation/subresource (times decide kube's order and both
// sides run at different instants).
func comparable(obj map[string]any) string {
	o := deepCopy(obj)
	md, _ := o["metadata"].(map[string]any)
	if md != nil {
		if mf, ok := md["managedFields"].([]any); ok {
			for _, e := range mf {
				delete(e.(map[string]any), "time")
			}
			sort.Slice(mf, func(i, j int) bool {
				a, b := mf[i].(map[string]any), mf[j].(map[string]any)
				return fmt.Sprint(a["manager"], a["operation"], a["subresource"]) < fmt.Sprint(b["manager"], b["operation"], b["subresource"])
			})
		}
		if len(md) == 0 {
			delete(o, "metadata")
		}
	}
	b, _ := json.Marshal(o)
	return string(b)
}

func kubeErr(err error) string {
	if err == nil {
		return ""
	}
	if se, ok := err.(*apierrors.StatusError); ok {
		st := se.ErrStatus
		var causes []string
		for _, c := range st.Details.Causes {
			causes = append(causes, string(c.Type)+"|"+c.Message+"|"+c.Field)
		}
		sort.Strings(causes)
		return fmt.Sprintf("%d %s %q %v", st.Code, st.Reason, st.Message, causes)
	}
	return "error: " + err.Error()
}

func ourErr(err error) string {
	if err == nil {
		return ""
	}
	if ce, ok := err.(*apply.ConflictError); ok {
		var causes []string
		for _, c := range ce.Causes() {
			causes = append(causes, c.Reason+"|"+c.Message+"|"+c.Field)
		}
		sort.Strings(causes)
		return fmt.Sprintf("%d %s %q %v", 409, "Conflict", ce.Error(), causes)
	}
	return "error: " + err.Error()
}

type step struct {
	op      string // apply | update
	sub     string // "" or "status"
	manager string
	force   bool
	obj     map[string]any
	// edit, for status updates, builds the request from the live object
	// (the status strategy keeps spec as it is).
	edit func(live map[string]any) map[string]any
}

func (s step) String() string {
	b, _ := json.Marshal(s.obj)
	return fmt.Sprintf("%s/%s by %s force=%v %s", s.op, s.sub, s.manager, s.force, b)
}

// The objects kube's field manager needs from a real apiserver: no
// conversion (one version), no defaulting, and New returning the empty
// object as kube's typed objects encode it (schema.Zero).
type convertor struct{}

func (convertor) Convert(in, out, context interface{}) error { return fmt.Errorf("unsupported") }
func (convertor) ConvertToVersion(in runtime.Object, _ runtime.GroupVersioner) (runtime.Object, error) {
	return in, nil
}
func (convertor) ConvertFieldLabel(_ kschema.GroupVersionKind, l, v string) (string, string, error) {
	return l, v, nil
}

type defaulter struct{}

func (defaulter) Default(runtime.Object) {}

type creater struct{}

func (creater) New(gvk kschema.GroupVersionKind) (runtime.Object, error) {
	return zeroObject(gvk), nil
}

func zeroObject(gvk kschema.GroupVersionKind) *unstructured.Unstructured {
	z := deepCopy(schema.Zero(schema.ForGVK(gvk.GroupVersion().String(), gvk.Kind)))
	z["apiVersion"], z["kind"] = gvk.GroupVersion().String(), gvk.Kind
	return &unstructured.Unstructured{Object: z}
}

func resetFilter(typ *schema.Type, gv, sub string) map[fieldpath.APIVersion]fieldpath.Filter {
	reset := map[fieldpath.APIVersion]fieldpath.Filter{}
	if fs := schema.ResetFields(typ, sub); len(fs) > 0 {
		set := fieldpath.NewSet()
		for _, f := range fs {
			var parts []any
			for _, p := range strings.Split(f, ".") {
				parts = append(parts, p)
			}
			set.Insert(fieldpath.MakePathOrDie(parts...))
		}
		reset[fieldpath.APIVersion(gv)] = fieldpath.NewExcludeSetFilter(set)
	}
	return reset
}

func runSequence(t *testing.T, tc managedfields.TypeConverter, gvk kschema.GroupVersionKind, steps []step) {
	t.Helper()
	gv := gvk.GroupVersion().String()
	typ := schema.ForGVK(gv, gvk.Kind)
	fms := map[string]*managedfields.FieldManager{}
	for _, sub := range []string{"", "status"} {
		fm, err := managedfields.NewDefaultFieldManager(tc, convertor{}, defaulter{}, creater{}, gvk, gvk.GroupVersion(), sub, resetFilter(typ, gv, sub))
		if err != nil {
			t.Fatal(err)
		}
		fms[sub] = fm
	}
	var kubeLive runtime.Object = zeroObject(gvk) // what a create starts from
	mine := &ours{t: typ, av: gv, now: time.Now()}
	for i, s := range steps {
		if s.edit != nil {
			s.obj = s.edit(deepCopy(mine.live))
		}
		u := &unstructured.Unstructured{Object: deepCopy(s.obj)}
		var kerr, oerr error
		switch s.op {
		case "apply":
			var out runtime.Object
			out, kerr = fms[s.sub].Apply(kubeLive, u, s.manager, s.force)
			if kerr == nil {
				kubeLive = out
			}
			oerr = mine.apply(s.obj, s.manager, s.sub, s.force)
		case "update":
			// An update sends the full object.
			kubeLive = fms[s.sub].UpdateNoErrors(kubeLive, u, s.manager)
			oerr = mine.update(s.obj, s.manager, s.sub)
		}
		if kubeErr(kerr) != ourErr(oerr) {
			t.Fatalf("step %d %v:\n kube %s\n ours %s", i, s, kubeErr(kerr), ourErr(oerr))
		}
		kl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(kubeLive)
		if err != nil {
			t.Fatal(err)
		}
		if comparable(kl) != comparable(mine.live) {
			t.Fatalf("step %d %v:\n kube %s\n ours %s", i, s, comparable(kl), comparable(mine.live))
		}
	}
}

// liveWith returns the current object of the kube side with data changed,
// as an updater (kubectl edit, a controller) would send it.
func randomConfigMapSteps(r *rand.Rand, n int) []step {
	managers := []string{"alice", "bob", "kubectl", "ctrl"}
	keys := []string{"a", "b", "c", "d"}
	vals := []string{"1", "2"}
	data := map[string]any{}
	labels := map[string]any{}
	var steps []step
	for i := 0; i < n; i++ {
		m := managers[r.Intn(len(managers))]
		if r.Intn(5) == 0 {
			// Client-side apply: the full object plus the last-applied
			// annotation, recorded as an Update of kubectl-client-side-apply.
			for _, k := range keys {
				if r.Intn(3) == 0 {
					data[k] = vals[r.Intn(2)]
				}
			}
			last := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cm"}, "data": deepCopy(data)}
			lb, _ := json.Marshal(last)
			obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cm", "labels": deepCopy(labels),
				"annotations": map[string]any{apply.LastAppliedAnnotation: string(lb) + "\n"}}, "data": deepCopy(data)}
			steps = append(steps, step{op: "update", manager: "kubectl-client-side-apply", obj: obj})
			continue
		}
		if r.Intn(2) == 0 {
			cfgData := map[string]any{}
			for _, k := range keys {
				if r.Intn(3) == 0 {
					cfgData[k] = vals[r.Intn(2)]
				}
			}
			cfg := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cm"}, "data": cfgData}
			if r.Intn(3) == 0 {
				cfg["metadata"].(map[string]any)["labels"] = map[string]any{"l" + keys[r.Intn(4)]: "x"}
			}
			steps = append(steps, step{op: "apply", manager: m, force: r.Intn(3) == 0, obj: cfg})
		} else {
			for _, k := range keys {
				switch r.Intn(4) {
				case 0:
					data[k] = vals[r.Intn(2)]
				case 1:
					delete(data, k)
				}
			}
			if r.Intn(3) == 0 {
				labels["u"+keys[r.Intn(4)]] = "y"
			}
			obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cm", "labels": deepCopy(labels)}, "data": deepCopy(data)}
			steps = append(steps, step{op: "update", manager: m, obj: obj})
		}
	}
	return steps
}

func TestApplyAndUpdateAgreeWithKubeFieldManagerOnConfigMaps(t *testing.T) {
	tc := typeConverter(t)
	gvk := kschema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	for seed := int64(1); seed <= 40; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			runSequence(t, tc, gvk, randomConfigMapSteps(r, 25))
		})
	}
}

func container(name, image string, env ...string) map[string]any {
	c := map[string]any{"name": name, "image": image}
	if len(env) > 0 {
		var e []any
		for _, n := range env {
			e = append(e, map[string]any{"name": n, "value": "v"})
		}
		c["env"] = e
	}
	return c
}

func deploymentSteps() []step {
	d := func(replicas any, containers ...any) map[string]any {
		spec := map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": containers}}}
		if replicas != nil {
			spec["replicas"] = replicas
		}
		return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"}, "spec": spec}
	}
	partial := func(containers ...any) map[string]any {
		return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": containers}}}}
	}
	return []step{
		{op: "update", manager: "kubectl-create", obj: d(int64(2), container("app", "app:1", "A"))},
		{op: "apply", manager: "kubectl", obj: d(int64(3), container("app", "app:2", "A", "B"))},
		{op: "apply", manager: "kubectl", force: true, obj: d(int64(3), container("app", "app:2", "A", "B"))},
		{op: "apply", manager: "injector", obj: partial(container("sidecar", "s:1"))},
		{op: "apply", manager: "injector", obj: partial(container("app", "app:3"))},
		{op: "update", manager: "kubectl-edit", obj: d(int64(5), container("app", "app:2", "A", "B"), container("sidecar", "s:2"))},
		{op: "apply", manager: "injector", obj: partial(container("sidecar", "s:3"))},
		{op: "apply", manager: "kubectl", obj: d(int64(3), container("app", "app:2", "B"))},
		{op: "apply", manager: "kubectl", obj: d(nil, container("app", "app:2", "B"))},
		{op: "apply", manager: "injector", force: true, obj: partial()},
	}
}

func TestApplyAndUpdateAgreeWithKubeFieldManagerOnDeployments(t *testing.T) {
	tc := typeConverter(t)
	runSequence(t, tc, kschema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, deploymentSteps())
}

func randomDeploymentSteps(r *rand.Rand, n int) []step {
	managers := []string{"kubectl", "injector", "ctrl"}
	names := []string{"app", "log", "side"}
	envs := []string{"A", "B", "C"}
	var steps []step
	for i := 0; i < n; i++ {
		var cs []any
		for _, nm := range names {
			if r.Intn(2) == 0 {
				c := map[string]any{"name": nm}
				if r.Intn(2) == 0 {
					c["image"] = nm + fmt.Sprint(":", r.Intn(2))
				}
				var env []any
				for _, e := range envs {
					if r.Intn(3) == 0 {
						env = append(env, map[string]any{"name": e, "value": fmt.Sprint(r.Intn(2))})
					}
				}
				if env != nil {
					c["env"] = env
				}
				if r.Intn(3) == 0 {
					p := map[string]any{"containerPort": int64(80 + r.Intn(2))}
					if r.Intn(2) == 0 {
						p["protocol"] = "UDP"
					}
					c["ports"] = []any{p}
				}
				cs = append(cs, c)
			}
		}
		spec := map[string]any{"template": map[string]any{"spec": map[string]any{"containers": cs}}}
		if cs == nil {
			spec["template"].(map[string]any)["spec"].(map[string]any)["containers"] = []any{}
		}
		if r.Intn(2) == 0 {
			spec["replicas"] = int64(r.Intn(3))
		}
		if r.Intn(3) == 0 {
			spec["strategy"] = map[string]any{"type": "Recreate"}
		}
		obj := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"}, "spec": spec}
		if r.Intn(3) == 0 {
			steps = append(steps, step{op: "update", manager: "editor", obj: obj})
		} else {
			steps = append(steps, step{op: "apply", manager: managers[r.Intn(len(managers))], force: r.Intn(3) == 0, obj: obj})
		}
	}
	return steps
}

func TestRandomDeploymentSequencesAgreeWithKubeFieldManager(t *testing.T) {
	tc := typeConverter(t)
	gvk := kschema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	for seed := int64(1); seed <= 40; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			runSequence(t, tc, gvk, randomDeploymentSteps(rand.New(rand.NewSource(seed)), 20))
		})
	}
}

// A controller writes status through the subresource while users apply
// spec: neither takes the other's fields.
func TestStatusSubresourceAgreesWithKubeFieldManager(t *testing.T) {
	tc := typeConverter(t)
	gvk := kschema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	spec := func(replicas int64, image string) map[string]any {
		return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "labels": map[string]any{"app": "web"}},
			"spec": map[string]any{"replicas": replicas, "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
					"spec": map[string]any{"containers": []any{container("app", image)}}}}}
	}
	setStatus := func(ready int64) func(map[string]any) map[string]any {
		return func(live map[string]any) map[string]any {
			delete(live["metadata"].(map[string]any), "managedFields")
			live["status"] = map[string]any{"observedGeneration": int64(1), "replicas": ready, "readyReplicas": ready,
				"conditions": []any{map[string]any{"type": "Available", "status": "True"}}}
			return live
		}
	}
	statusApply := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"},
		"status": map[string]any{"readyReplicas": int64(7), "conditions": []any{map[string]any{"type": "Progressing", "status": "True"}}}}
	runSequence(t, tc, gvk, []step{
		{op: "apply", manager: "kubectl", obj: spec(3, "app:1")},
		{op: "update", sub: "status", manager: "deployment-controller", edit: setStatus(3)},
		{op: "apply", manager: "kubectl", obj: spec(4, "app:2")},
		{op: "update", sub: "status", manager: "deployment-controller", edit: setStatus(4)},
		{op: "apply", sub: "status", manager: "other-ctrl", obj: statusApply},
		{op: "apply", sub: "status", manager: "other-ctrl", force: true, obj: statusApply},
		{op: "update", manager: "kubectl-edit", edit: func(live map[string]any) map[string]any {
			delete(live["metadata"].(map[string]any), "managedFields")
			live["spec"].(map[string]any)["paused"] = true
			return live
		}},
	})
}
