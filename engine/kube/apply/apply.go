// Package apply implements server-side apply and field ownership
// (metadata.managedFields) for rvplay's Kubernetes layer: kube-apiserver's
// field manager, written out over the types of package schema.
//
// It is pure: no storage, no clock (the caller passes the time), no HTTP.
// The storage layer calls UpdateManagedFields on every non-apply write
// (create, update, JSON/merge/strategic patch) and Apply for
// application/apply-patch+yaml requests.
//
// Objects are JSON objects as decoded by encoding/json into map[string]any,
// with or without UseNumber. Objects returned (and managedFields written)
// hold numbers as int64 (integral values) or float64, which encoding/json
// marshals as kube does.
//
// One implementation serves both builds: this package's own field sets,
// merge, compare and prune (fieldmanager.go, fieldset.go, typed.go,
// managed.go). kube-apiserver computes the same with
// sigs.k8s.io/structured-merge-diff, and so did rvplay's server build
// until both builds were measured (2026-11-25, scripts/wasm-size.sh and
// the benchmarks of this package and engine/api/kubeapi, taking turns):
//
//   - structured-merge-diff brings json-iterator, reflect2 and a YAML
//     library into the browser app: 2,568,672 B gzip with it against
//     1,940,102 B with the hand-written merge, 128% of the 2 MB
//     WebAssembly budget;
//   - natively the hand-written merge costs less CPU: a REST GET + PUT of
//     a ConfigMap 80-102 µs against 112-122 µs, an UpdateManagedFields
//     of a Deployment 229-260 µs against 758-878 µs, an apply of the
//     widest tracked object (10,000 fields) 67-72 ms against 82-84 ms;
//     a 100,000-key ConfigMap is refused by kube's size bound before
//     either runs (engine/kube/limits.go).
//
// structured-merge-diff stays as the test oracle: smd_*_test.go compute
// every answer with it over the same schema, and oracle_test.go holds the
// two to the same objects, managedFields and errors on random sequences;
// test/applydiff holds Apply to kube's own field manager.
//
// It must not import net/http, syscall/js or k8s.io/*.
package apply

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/rvplay/rvplay/engine/kube/schema"
)

// Operation values of managedFields entries.
const (
	OperationApply  = "Apply"
	OperationUpdate = "Update"
)

// Write says who writes and when.
type Write struct {
	// Manager is the field manager: the fieldManager query parameter, or
	// the User-Agent up to its first "/" when absent.
	Manager string
	// Subresource is "", "status" or "scale".
	Subresource string
	// Now is the write time from the session clock; managedFields times are
	// truncated to seconds (RFC 3339, UTC).
	Now time.Time
}

// ConflictError is an apply that would change fields owned by other
// managers (without force). The REST layer answers 409 Conflict with
// Error() as message and Causes() as details.causes (details has no name
// or kind).
type ConflictError struct {
	Conflicts []Conflict // grouped by manager (sorted), paths in kube's order
}

// Conflict is one conflicting field.
type Conflict struct {
	// Manager is the conflicting manager as kube prints it: `"alice"` for
	// an applier, `"kubectl-client-side-apply" using apps/v1` for an updater,
	// with ` with subresource "status"` for subresource writers.
	Manager string
	// Field is the field path, e.g. `.data.owner` or
	// `.spec.template.spec.containers[name="nginx"].image`.
	Field string
}

// Cause is a Status cause (JSON: reason, message, field).
type Cause struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Field   string `json:"field"`
}

func (e *ConflictError) Error() string {
	n := len(e.Conflicts)
	if n == 1 {
		c := e.Conflicts[0]
		return fmt.Sprintf("Apply failed with 1 conflict: conflict with %s: %s", c.Manager, c.Field)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Apply failed with %d conflicts: ", n)
	last := ""
	for i, c := range e.Conflicts {
		if i == 0 || c.Manager != last {
			if i > 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "conflicts with %s:", c.Manager)
			last = c.Manager
		}
		fmt.Fprintf(&b, "\n- %s", c.Field)
	}
	return b.String()
}

// Causes returns the Status causes: reason FieldManagerConflict, message
// `conflict with <manager>`, field the path.
func (e *ConflictError) Causes() []Cause {
	out := make([]Cause, len(e.Conflicts))
	for i, c := range e.Conflicts {
		out[i] = Cause{Reason: "FieldManagerConflict", Message: "conflict with " + c.Manager, Field: c.Field}
	}
	return out
}

// BadRequestError is a malformed apply configuration: the REST layer
// answers 400 BadRequest with Message.
type BadRequestError struct{ Message string }

func (e *BadRequestError) Error() string { return e.Message }

// MaxUpdateManagers is how many Update entries an object keeps; older ones
// are folded, per apiVersion, into an "ancient-changes" entry (as kube's
// field manager does, so managedFields cannot grow without bound).
const MaxUpdateManagers = 10

// BeforeFirstApplyManager owns the fields of an untracked object when it
// is first applied to.
const BeforeFirstApplyManager = "before-first-apply"

// kubectlManager is kubectl's server-side apply manager; only its applies
// take part in the migration from client-side apply.
const kubectlManager = "kubectl"

// LastAppliedAnnotation is where client-side apply keeps its configuration.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// maxAnnotationsSize is kube's limit on the total size of annotations.
const maxAnnotationsSize = 256 * 1024

func annotations(obj map[string]any) map[string]any {
	md, _ := obj["metadata"].(map[string]any)
	a, _ := md["annotations"].(map[string]any)
	return a
}

// syncLastApplied keeps the client-side apply annotation in step when
// kubectl applies server-side to an object that has one, so a later
// client-side apply computes its patch from what was applied last.
func syncLastApplied(live, cfg, out map[string]any) {
	if _, ok := annotations(live)[LastAppliedAnnotation]; !ok {
		return
	}
	c := normalizeObject(cfg)
	if a := annotations(c); a != nil {
		delete(a, LastAppliedAnnotation)
	}
	b, err := json.Marshal(c)
	if err != nil {
		return
	}
	md, _ := out["metadata"].(map[string]any)
	if md == nil {
		return
	}
	a, _ := md["annotations"].(map[string]any)
	if a == nil {
		a = map[string]any{}
		md["annotations"] = a
	}
	a[LastAppliedAnnotation] = string(b) + "\n"
	size := 0
	for k, v := range a {
		vs, _ := v.(string)
		size += len(k) + len(vs)
	}
	if size > maxAnnotationsSize {
		delete(a, LastAppliedAnnotation)
	}
}

func stamp(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

// objectID renders an object as kube's field manager errors do:
// "namespace/name; group/version, Kind=kind".
func objectID(obj map[string]any, t *schema.Type) string {
	md, _ := obj["metadata"].(map[string]any)
	ns, _ := md["namespace"].(string)
	name, _ := md["name"].(string)
	av, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	return ns + "/" + name + "; " + gvkString(av, kind)
}

// gvkString is GroupVersionKind.String(): "apps/v1, Kind=Deployment",
// "/v1, Kind=ConfigMap".
func gvkString(apiVersion, kind string) string {
	g, v := "", apiVersion
	if i := strings.IndexByte(apiVersion, '/'); i >= 0 {
		g, v = apiVersion[:i], apiVersion[i+1:]
	}
	return g + "/" + v + ", Kind=" + kind
}

// isResetManagedFields reports kube's "clear managedFields" request: an
// empty list, or a list with one empty entry.
func isResetManagedFields(v any) bool {
	l, ok := v.([]any)
	if !ok {
		return false
	}
	if len(l) == 0 {
		return true
	}
	if len(l) == 1 {
		m, ok := l[0].(map[string]any)
		return ok && len(m) == 0
	}
	return false
}

// normalizeObject is normalize for an object; nil becomes empty.
func normalizeObject(m map[string]any) map[string]any {
	if n, ok := normalize(m).(map[string]any); ok {
		return n
	}
	return map[string]any{}
}

func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return nil
		}
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = normalize(e)
		}
		return m
	case []any:
		if x == nil {
			return nil // a Go nil slice is JSON null
		}
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = normalize(e)
		}
		return l
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
		return x
	case int:
		return int64(x)
	}
	return v
}

func removeManagedFields(obj map[string]any) {
	if md, ok := obj["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
}

// hasUID reports whether obj is a stored object (it has a metadata.uid).
func hasUID(obj map[string]any) bool {
	md, _ := obj["metadata"].(map[string]any)
	uid, _ := md["uid"].(string)
	return uid != ""
}

// prepareApply checks an apply configuration against the URL's type and
// returns it and the live object (the type's empty object when live is
// nil, as kube compares a create) normalized for comparison.
func prepareApply(t *schema.Type, apiVersion string, live, config map[string]any) (cfg, liveObj map[string]any, err error) {
	av, _ := config["apiVersion"].(string)
	kind, _ := config["kind"].(string)
	if want := t.GVKs[0]; av != apiVersion || kind != want.Kind {
		return nil, nil, &BadRequestError{"invalid object type: " + gvkString(av, kind)}
	}
	if md, ok := config["metadata"].(map[string]any); ok {
		if mf, present := md["managedFields"]; present && mf != nil {
			return nil, nil, &BadRequestError{"metadata.managedFields must be nil"}
		}
	}
	if live == nil {
		return normalizeObject(config), normalizeObject(schema.Zero(t)), nil
	}
	return normalizeObject(config), normalizeObject(live), nil
}

// startingManaged chooses the managed fields a non-apply write starts
// from, as kube's field manager does, for either implementation (M is its
// decoded form): the request's own managedFields when it sends some (a
// reset, [] or [{}], starts from none), else the stored object's. skip is
// kube's skipNonAppliedManager: an update of a stored object (it has a
// UID) with no managed fields does not start tracking them again; only a
// create or an apply does. The resetting write itself still records what
// it changes.
func startingManaged[M any](oldObj, newObj map[string]any, w Write, decode func(map[string]any) (M, error), size func(M) int, fresh func() M) (managed M, skip bool) {
	md, _ := newObj["metadata"].(map[string]any)
	sent, present := md["managedFields"]
	reset := w.Subresource == "" && present && isResetManagedFields(sent)
	found := false
	switch {
	case reset:
		managed, found = fresh(), true
	case w.Subresource == "" && present:
		if m, err := decode(newObj); err == nil && size(m) > 0 {
			managed, found = m, true
		}
	}
	if !found && oldObj != nil {
		if m, err := decode(oldObj); err == nil {
			managed, found = m, true
		}
	}
	if !found {
		managed = fresh()
	}
	return managed, hasUID(oldObj) && size(managed) == 0 && !reset
}
