package schemadiff

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/engine/kube/schema"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"
	smd "sigs.k8s.io/structured-merge-diff/v6/schema"
)

var roots = []struct {
	obj  any
	name string
}{
	{corev1.ConfigMap{}, "io.k8s.api.core.v1.ConfigMap"},
	{corev1.Secret{}, "io.k8s.api.core.v1.Secret"},
	{corev1.Namespace{}, "io.k8s.api.core.v1.Namespace"},
	{corev1.Event{}, "io.k8s.api.core.v1.Event"},
	{corev1.Pod{}, "io.k8s.api.core.v1.Pod"},
	{appsv1.Deployment{}, "io.k8s.api.apps.v1.Deployment"},
	{appsv1.ReplicaSet{}, "io.k8s.api.apps.v1.ReplicaSet"},
	{autoscalingv1.Scale{}, "io.k8s.api.autoscaling.v1.Scale"},
	{metav1.Status{}, "io.k8s.apimachinery.pkg.apis.meta.v1.Status"},
	{metav1.DeleteOptions{}, "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"},
}

type checker struct {
	problems []string
	seen     map[string]bool
	pointers []string
}

func (c *checker) addf(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

func jsonName(f reflect.StructField) (name string, omitempty, omitzero, inline bool) {
	tag := f.Tag.Get("json")
	parts := strings.Split(tag, ",")
	for _, p := range parts[1:] {
		switch p {
		case "omitempty":
			omitempty = true
		case "omitzero":
			omitzero = true
		case "inline":
			inline = true
		}
	}
	return parts[0], omitempty, omitzero, inline
}

// fields flattens inline embedded structs (TypeMeta, ObjectMeta's
// siblings, VolumeSource, ProbeHandler, ...).
func fields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _, inline := jsonName(f)
		if name == "-" || !f.IsExported() {
			continue
		}
		if inline || (f.Anonymous && name == "") {
			out = append(out, fields(f.Type)...)
			continue
		}
		out = append(out, f)
	}
	return out
}

var marshalsItself = map[reflect.Type]bool{
	reflect.TypeOf(metav1.Time{}):      true,
	reflect.TypeOf(metav1.MicroTime{}): true,
}

func (c *checker) check(gt reflect.Type, st *schema.Type) {
	if c.seen[st.Name] {
		return
	}
	c.seen[st.Name] = true
	if st.Untyped || !st.IsObject() {
		return
	}
	goFields := map[string]bool{}
	for _, f := range fields(gt) {
		name, omitempty, omitzero, _ := jsonName(f)
		goFields[name] = true
		sf := st.Field(name)
		if sf == nil {
			c.addf("%s: schema lacks field %q (Go %s)", st.Name, name, f.Type)
			continue
		}
		where := st.Short + "." + name
		if ps := f.Tag.Get("patchStrategy"); ps != sf.PatchStrategy {
			c.addf("%s: patchStrategy %q, Go has %q", where, sf.PatchStrategy, ps)
		}
		if pk := f.Tag.Get("patchMergeKey"); pk != sf.PatchMergeKey {
			c.addf("%s: patchMergeKey %q, Go has %q", where, sf.PatchMergeKey, pk)
		}
		ft := f.Type
		isPtr := ft.Kind() == reflect.Pointer
		if isPtr {
			ft = ft.Elem()
			c.pointers = append(c.pointers, where)
		}
		switch ft.Kind() {
		case reflect.String, reflect.Bool, reflect.Int32, reflect.Int64, reflect.Float64:
			if sf.Ptr != isPtr {
				c.addf("%s: ptr=%v, Go pointer=%v", where, sf.Ptr, isPtr)
			}
		}
		structValue := !isPtr && ft.Kind() == reflect.Struct
		wantEmit := (!omitempty && !omitzero) || (structValue && !omitzero && !(f.Type == reflect.TypeOf(metav1.Time{}) && omitzero))
		if (name == "apiVersion" || name == "kind") && omitempty {
			wantEmit = false // TypeMeta
		}
		if sf.Emit != wantEmit {
			c.addf("%s: emit=%v, Go writes it always=%v (tag %q)", where, sf.Emit, wantEmit, f.Tag.Get("json"))
		}
		if sf.Emit && sf.EmitNull != (isPtr || ft.Kind() == reflect.Slice || ft.Kind() == reflect.Map) && !marshalsItself[ft] {
			if sf.Type.Kind == schema.KindObject && sf.Type.Named.IsObject() {
				c.addf("%s: emit null=%v, Go pointer=%v", where, sf.EmitNull, isPtr)
			}
		}
		c.descend(ft, sf.Type, where)
	}
	for _, f := range st.Fields {
		if !goFields[f.Name] {
			c.addf("%s: schema has %q, Go type %s does not", st.Name, f.Name, gt)
		}
	}
}

func (c *checker) descend(gt reflect.Type, r *schema.TypeRef, where string) {
	for gt.Kind() == reflect.Pointer {
		gt = gt.Elem()
	}
	switch r.Kind {
	case schema.KindAny:
		return
	case schema.KindObject:
		if marshalsItself[gt] || !r.Named.IsObject() {
			return
		}
		if gt.Kind() != reflect.Struct {
			c.addf("%s: schema says object %s, Go has %s", where, r.Named.Short, gt)
			return
		}
		c.check(gt, r.Named)
	case schema.KindList:
		if gt.Kind() != reflect.Slice || gt.Elem().Kind() == reflect.Uint8 && r.Kind != schema.KindBytes {
			if !(gt.Kind() == reflect.Slice && gt.Elem().Kind() == reflect.Uint8) {
				c.addf("%s: schema says list, Go has %s", where, gt)
				return
			}
		}
		c.descend(gt.Elem(), r.Elem, where+"[]")
	case schema.KindMap:
		if gt.Kind() != reflect.Map {
			c.addf("%s: schema says map, Go has %s", where, gt)
			return
		}
		c.descend(gt.Elem(), r.Elem, where+"{}")
	case schema.KindString:
		if gt.Kind() != reflect.String {
			c.addf("%s: schema says string, Go has %s", where, gt)
		}
	case schema.KindBytes:
		if !(gt.Kind() == reflect.Slice && gt.Elem().Kind() == reflect.Uint8) {
			c.addf("%s: schema says bytes, Go has %s", where, gt)
		}
	case schema.KindInteger:
		switch gt.Kind() {
		case reflect.Int32:
			if r.Format != "int32" {
				c.addf("%s: format %s, Go int32", where, r.Format)
			}
		case reflect.Int64:
			if r.Format != "int64" {
				c.addf("%s: format %s, Go int64", where, r.Format)
			}
		default:
			c.addf("%s: schema says integer, Go has %s", where, gt)
		}
	case schema.KindBoolean:
		if gt.Kind() != reflect.Bool {
			c.addf("%s: schema says boolean, Go has %s", where, gt)
		}
	}
}

func TestSchemaMatchesK8sAPIGoTypes(t *testing.T) {
	c := &checker{seen: map[string]bool{}}
	for _, r := range roots {
		st := schema.ByName(r.name)
		if st == nil {
			t.Fatalf("no schema type %s", r.name)
		}
		c.check(reflect.TypeOf(r.obj), st)
	}
	sort.Strings(c.problems)
	for _, p := range c.problems {
		t.Error(p)
	}
}

// ---- structured-merge-diff schema from client-go ----

func smdSchema(t *testing.T) *smd.Schema {
	tc := applyconfigurations.NewTypeConverter(scheme.Scheme)
	tv, err := tc.ObjectToTyped(&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"}})
	if err != nil {
		t.Fatal(err)
	}
	return tv.Schema()
}

func resolve(s *smd.Schema, r smd.TypeRef) smd.Atom {
	a, _ := s.Resolve(r)
	return a
}

func TestSchemaMatchesClientGoApplySchema(t *testing.T) {
	s := smdSchema(t)
	var problems []string
	addf := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	for _, st := range schema.Types() {
		if strings.HasSuffix(st.Name, "List") || st.Untyped {
			continue
		}
		td, ok := s.FindNamedType(st.Name)
		if !ok {
			continue // not in client-go's apply schema (Status, Patch, ...)
		}
		if !st.IsObject() {
			if td.Scalar == nil {
				addf("%s: scalar here, not in client-go", st.Name)
			} else if *td.Scalar != smd.Untyped {
				addf("%s: client-go scalar %s (we use untyped)", st.Name, *td.Scalar)
			}
			continue
		}
		if td.Map == nil {
			addf("%s: client-go type is not a map", st.Name)
			continue
		}
		if (td.Map.ElementRelationship == smd.Atomic) != st.Atomic {
			addf("%s: atomic=%v, client-go %q", st.Name, st.Atomic, td.Map.ElementRelationship)
		}
		for _, sf := range td.Map.Fields {
			f := st.Field(sf.Name)
			if f == nil {
				addf("%s: lacks %q (client-go)", st.Name, sf.Name)
				continue
			}
			where := st.Short + "." + sf.Name
			a := resolve(s, sf.Type)
			switch {
			case a.List != nil:
				if f.Type.Kind != schema.KindList {
					addf("%s: list in client-go", where)
					continue
				}
				lt := f.ListType
				if lt == "" {
					lt = "atomic"
				}
				want := "atomic"
				if a.List.ElementRelationship == smd.Associative {
					want = "set"
					if len(a.List.Keys) > 0 {
						want = "map"
					}
				}
				if lt != want || strings.Join(f.ListMapKeys, ",") != strings.Join(a.List.Keys, ",") {
					addf("%s: list %s %v, client-go %s %v", where, lt, f.ListMapKeys, want, a.List.Keys)
				}
				// Keys with defaults (protocol: TCP).
				if ea := resolve(s, a.List.ElementType); ea.Map != nil && f.Type.Elem.Named != nil {
					for _, k := range a.List.Keys {
						if kf, ok := ea.Map.FindField(k); ok && kf.Default != nil && kf.Default != "" {
							if mine := f.Type.Elem.Named.Field(k); mine == nil || fmt.Sprint(mine.Default) != fmt.Sprint(kf.Default) {
								addf("%s: key %s default %v in client-go", where, k, kf.Default)
							}
						}
					}
				}
			case a.Map != nil && f.Type.Kind == schema.KindMap:
				if (a.Map.ElementRelationship == smd.Atomic) != (f.MapType == "atomic") {
					addf("%s: map atomic=%v, client-go %q", where, f.MapType == "atomic", a.Map.ElementRelationship)
				}
			case a.Map != nil:
				if f.Type.Kind != schema.KindObject && f.Type.Kind != schema.KindAny {
					addf("%s: object in client-go", where)
				}
			case a.Scalar != nil:
				want := map[smd.Scalar][]schema.Kind{
					smd.String:  {schema.KindString, schema.KindBytes},
					smd.Numeric: {schema.KindInteger, schema.KindNumber},
					smd.Boolean: {schema.KindBoolean},
					smd.Untyped: {schema.KindObject, schema.KindAny},
				}[*a.Scalar]
				ok := false
				for _, k := range want {
					ok = ok || f.Type.Kind == k
				}
				if !ok && !(f.Type.Kind == schema.KindObject && !f.Type.Named.IsObject()) {
					addf("%s: scalar %s in client-go, kind %d here", where, *a.Scalar, f.Type.Kind)
				}
			}
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}
