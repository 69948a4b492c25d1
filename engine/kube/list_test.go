package kube

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/mvcc"
)

func (f *fixture) fill(t *testing.T, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		f.create(t, configmaps, "default", cm(fmt.Sprintf("cm-%02d", i), map[string]any{"i": fmt.Sprint(i)}))
	}
}

func names(l *List) string {
	var s []string
	for _, it := range l.Objects() {
		s = append(s, Name(it))
	}
	return strings.Join(s, ",")
}

func TestListPagesArePinnedToFirstPageRevision(t *testing.T) {
	f := newFixture(t)
	f.fill(t, 5)
	p1, err := f.s.List(f.ctx, configmaps, "default", ListOptions{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if names(p1) != "cm-00,cm-01" || p1.Metadata.Continue == "" || *p1.Metadata.RemainingItemCount != 3 {
		t.Fatalf("page 1: %s %+v", names(p1), p1.Metadata)
	}
	// writes after the first page are invisible to the following pages
	f.create(t, configmaps, "default", cm("cm-99", nil))
	if _, err := f.s.Delete(f.ctx, configmaps, "default", "cm-03", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p2, err := f.s.List(f.ctx, configmaps, "default", ListOptions{Limit: 2, Continue: p1.Metadata.Continue})
	if err != nil {
		t.Fatal(err)
	}
	p3, err := f.s.List(f.ctx, configmaps, "default", ListOptions{Limit: 2, Continue: p2.Metadata.Continue})
	if err != nil {
		t.Fatal(err)
	}
	if names(p2) != "cm-02,cm-03" || names(p3) != "cm-04" || p3.Metadata.Continue != "" || p3.Metadata.RemainingItemCount != nil {
		t.Fatalf("pages: %s | %s %+v", names(p2), names(p3), p3.Metadata)
	}
	for _, p := range []*List{p2, p3} {
		if p.Metadata.ResourceVersion != p1.Metadata.ResourceVersion {
			t.Fatalf("page rv %s, first page %s", p.Metadata.ResourceVersion, p1.Metadata.ResourceVersion)
		}
	}
}

func TestContinueTokenIsKubesFormat(t *testing.T) {
	f := newFixture(t)
	f.fill(t, 3)
	l, err := f.s.List(f.ctx, configmaps, "", ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.RawURLEncoding.DecodeString(l.Metadata.Continue)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`{"v":"meta.k8s.io/v1","rv":%s,"start":"default/cm-00\u0000"}`, l.Metadata.ResourceVersion)
	if string(raw) != want {
		t.Fatalf("token %s, want %s", raw, want)
	}
}

func TestListResourceVersionTable(t *testing.T) { bothModes(t, testListResourceVersionTable) }

func testListResourceVersionTable(t *testing.T, f *fixture) {
	f.fill(t, 3)
	old := f.store.Rev()
	f.create(t, configmaps, "default", cm("later", nil))
	cur := f.store.Rev()
	rv := func(n int64) string { return fmt.Sprint(n) }
	for _, c := range []struct {
		name      string
		lo        ListOptions
		items     int
		listRV    int64
		continue_ bool
		code      int
		msg       string
	}{
		{"unset: most recent", ListOptions{}, 4, cur, false, 0, ""},
		{"unset+limit: paged at most recent", ListOptions{Limit: 2}, 2, cur, true, 0, ""},
		{"0: any, limit ignored", ListOptions{ResourceVersion: "0", Limit: 2}, 4, cur, false, 0, ""},
		{"N without limit: not older than", ListOptions{ResourceVersion: rv(old)}, 4, cur, false, 0, ""},
		{"N with limit: exact", ListOptions{ResourceVersion: rv(old), Limit: 10}, 3, old, false, 0, ""},
		{"Exact N", ListOptions{ResourceVersion: rv(old), ResourceVersionMatch: MatchExact}, 3, old, false, 0, ""},
		{"NotOlderThan 0: any", ListOptions{ResourceVersion: "0", ResourceVersionMatch: MatchNotOlderThan}, 4, cur, false, 0, ""},
		{"NotOlderThan N", ListOptions{ResourceVersion: rv(old), ResourceVersionMatch: MatchNotOlderThan, Limit: 1}, 1, cur, true, 0, ""},
		{"Exact future", ListOptions{ResourceVersion: rv(cur + 10), ResourceVersionMatch: MatchExact}, 0, 0, false, 504,
			fmt.Sprintf("Timeout: Too large resource version: %d, current: %d", cur+10, cur)},
		{"NotOlderThan future", ListOptions{ResourceVersion: rv(cur + 10)}, 0, 0, false, 504,
			fmt.Sprintf("Timeout: Too large resource version: %d, current: %d", cur+10, cur)},
		{"RVM without RV", ListOptions{ResourceVersionMatch: MatchExact}, 0, 0, false, 422,
			`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`},
		{"Exact 0", ListOptions{ResourceVersion: "0", ResourceVersionMatch: MatchExact}, 0, 0, false, 422,
			`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"`},
		{"unknown RVM", ListOptions{ResourceVersion: "1", ResourceVersionMatch: "Bogus"}, 0, 0, false, 422,
			`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""`},
		{"RVM with continue", ListOptions{ResourceVersion: "1", ResourceVersionMatch: MatchExact, Continue: "x"}, 0, 0, false, 422,
			`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided`},
		{"bad RV", ListOptions{ResourceVersion: "abc"}, 0, 0, false, 400,
			`invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`},
		{"bad token", ListOptions{Continue: "garbage"}, 0, 0, false, 400,
			`invalid continue token: continue key is not valid: invalid character '\u0081' looking for beginning of value`},
	} {
		var l *List
		var err error
		f.waiting(func() { l, err = f.s.List(f.ctx, configmaps, "default", c.lo) })
		if c.code != 0 {
			if err == nil || AsStatus(err).Code() != c.code || AsStatus(err).Status.Message != c.msg {
				t.Errorf("%s: got %v, want %d %s", c.name, err, c.code, c.msg)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if l.Len() != c.items || l.Metadata.ResourceVersion != rv(c.listRV) || (l.Metadata.Continue != "") != c.continue_ {
			t.Errorf("%s: %d items at %s (continue %q), want %d at %d", c.name, l.Len(), l.Metadata.ResourceVersion, l.Metadata.Continue, c.items, c.listRV)
		}
	}
}

func TestContinueTokenRules(t *testing.T) {
	f := newFixture(t)
	f.fill(t, 3)
	l, _ := f.s.List(f.ctx, configmaps, "default", ListOptions{Limit: 1})
	_, err := f.s.List(f.ctx, configmaps, "default", ListOptions{Limit: 1, Continue: l.Metadata.Continue, ResourceVersion: "5"})
	wantStatus(t, err, 400, ReasonBadRequest, "specifying resource version is not allowed when using continue")
	if _, err := f.s.List(f.ctx, configmaps, "default", ListOptions{Limit: 1, Continue: l.Metadata.Continue, ResourceVersion: "0"}); err != nil {
		t.Fatalf("RV 0 with continue is tolerated: %v", err)
	}
	tok := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for in, msg := range map[string]string{
		tok(`{"v":"meta.k8s.io/v1","rv":0,"start":"a"}`):    "invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
		tok(`{"v":"meta.k8s.io/v1","rv":3,"start":""}`):     "invalid continue token: continue key is not valid: encoded start key empty (version meta.k8s.io/v1)",
		tok(`{"v":"v2","rv":3,"start":"a"}`):                `invalid continue token: continue key is not valid: server does not recognize this encoded version "v2"`,
		tok(`{"v":"meta.k8s.io/v1","rv":3,"start":"../x"}`): "invalid continue token: continue key is not valid: ../x",
	} {
		_, err := f.s.List(f.ctx, configmaps, "default", ListOptions{Continue: in})
		wantStatus(t, err, 400, ReasonBadRequest, msg)
	}
}

// With the watch cache off, the store answers a read at a compacted
// revision: 410. (With it on, the cache keeps serving the revisions it
// still holds: cache_test.go.)
func TestCompactedExactListAndContinueAreExpired(t *testing.T) {
	f := newStoreFixture(t)
	f.fill(t, 3)
	old := f.store.Rev()
	l, _ := f.s.List(f.ctx, configmaps, "default", ListOptions{Limit: 1})
	f.create(t, configmaps, "default", cm("x", nil))
	if _, err := f.store.Compact(f.ctx, &mvcc.CompactionRequest{Revision: f.store.Rev(), Physical: true}); err != nil {
		t.Fatal(err)
	}
	_, err := f.s.List(f.ctx, configmaps, "default", ListOptions{ResourceVersion: fmt.Sprint(old), ResourceVersionMatch: MatchExact})
	wantStatus(t, err, 410, ReasonExpired, "The resourceVersion for the provided list is too old.")
	_, err = f.s.List(f.ctx, configmaps, "default", ListOptions{Limit: 1, Continue: l.Metadata.Continue})
	wantStatus(t, err, 410, ReasonExpired, inconsistentMsg)
	fresh := AsStatus(err).Status.Metadata.Continue
	raw, _ := base64.RawURLEncoding.DecodeString(fresh)
	if string(raw) != `{"v":"meta.k8s.io/v1","rv":-1,"start":"cm-00\u0000"}` {
		t.Fatalf("fresh token %s", raw)
	}
	l2, err := f.s.List(f.ctx, configmaps, "default", ListOptions{Limit: 10, Continue: fresh})
	if err != nil || names(l2) != "cm-01,cm-02,x" {
		t.Fatalf("continuing at the latest revision: %v %v", names(l2), err)
	}
}

func TestLabelSelectors(t *testing.T) {
	f := newFixture(t)
	for i, ls := range []map[string]any{{"app": "a", "tier": "web"}, {"app": "b"}, {"tier": "db"}, {}} {
		o := cm(fmt.Sprintf("o%d", i), nil)
		meta(o)["labels"] = ls
		f.create(t, configmaps, "default", o)
	}
	for sel, want := range map[string]string{
		"app=a":                 "o0",
		"app==b":                "o1",
		"app!=a":                "o1,o2,o3",
		"app in (a,b)":          "o0,o1",
		"app notin (a)":         "o1,o2,o3",
		"tier":                  "o0,o2",
		"!tier":                 "o1,o3",
		"app=a,tier=web":        "o0",
		"tier in (web,db),!app": "o2",
		"":                      "o0,o1,o2,o3",
	} {
		l, err := f.s.List(f.ctx, configmaps, "default", ListOptions{LabelSelector: sel})
		if err != nil || names(l) != want {
			t.Errorf("%q: %s %v, want %s", sel, names(l), err, want)
		}
	}
	for sel, msg := range map[string]string{
		"a===b":  "unable to parse requirement: found '=', expected: identifier",
		"a in b": "unable to parse requirement: found 'b' expected: '('",
		"a,":     "found '', expected: identifier after ','",
		"a b":    "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
		"=x":     "found '=', expected: !, identifier, or 'end of string'",
	} {
		_, err := f.s.List(f.ctx, configmaps, "default", ListOptions{LabelSelector: sel})
		wantStatus(t, err, 400, ReasonBadRequest, msg)
	}
}

func TestFieldSelectors(t *testing.T) {
	f := newFixture(t)
	f.fill(t, 3)
	l, err := f.s.List(f.ctx, configmaps, "", ListOptions{FieldSelector: "metadata.name=cm-01,metadata.namespace=default"})
	if err != nil || names(l) != "cm-01" {
		t.Fatalf("%v %v", names(l), err)
	}
	l, err = f.s.List(f.ctx, configmaps, "", ListOptions{FieldSelector: "metadata.name!=cm-01"})
	if err != nil || names(l) != "cm-00,cm-02" {
		t.Fatalf("%v %v", names(l), err)
	}
	_, err = f.s.List(f.ctx, configmaps, "", ListOptions{FieldSelector: "spec.x=y"})
	wantStatus(t, err, 400, ReasonBadRequest, `"spec.x" is not a known field selector: only "metadata.name", "metadata.namespace"`)
	_, err = f.s.List(f.ctx, configmaps, "", ListOptions{FieldSelector: "nonsense"})
	wantStatus(t, err, 400, ReasonBadRequest, `invalid selector: 'nonsense'; can't understand 'nonsense'`)
	_, err = f.s.List(f.ctx, pods, "", ListOptions{FieldSelector: "status.phase=Running,spec.bogus=1"})
	wantStatus(t, err, 400, ReasonBadRequest, `field label not supported: spec.bogus`)
}

func TestSelectorsWithLimitFillPagesAndOmitRemainingCount(t *testing.T) {
	f := newFixture(t)
	for i := 0; i < 10; i++ {
		o := cm(fmt.Sprintf("o%d", i), nil)
		meta(o)["labels"] = map[string]any{"even": fmt.Sprint(i%2 == 0)}
		f.create(t, configmaps, "default", o)
	}
	l, err := f.s.List(f.ctx, configmaps, "default", ListOptions{LabelSelector: "even=true", Limit: 3})
	if err != nil || names(l) != "o0,o2,o4" || l.Metadata.Continue == "" || l.Metadata.RemainingItemCount != nil {
		t.Fatalf("%s %+v %v", names(l), l.Metadata, err)
	}
	l, err = f.s.List(f.ctx, configmaps, "default", ListOptions{LabelSelector: "even=true", Limit: 3, Continue: l.Metadata.Continue})
	if err != nil || names(l) != "o6,o8" {
		t.Fatalf("%s %+v %v", names(l), l.Metadata, err)
	}
}

func TestWatchCacheDelayServesStaleZeroReads(t *testing.T) {
	f := newFixture(t)
	f.s.SetWatchCacheDelay(5 * time.Second)
	f.create(t, configmaps, "default", cm("a", map[string]any{"v": "1"}))
	f.clock.Step(10 * time.Second)
	stale := f.store.Rev()
	a, _ := f.s.Get(f.ctx, configmaps, "default", "a", "")
	a["data"] = map[string]any{"v": "2"}
	if _, err := f.s.Update(f.ctx, configmaps, "default", "a", "", a, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	got, _ := f.s.Get(f.ctx, configmaps, "default", "a", "0")
	if pathValue(got, "data", "v") != "1" || ResourceVersion(got) != fmt.Sprint(stale) {
		t.Fatalf("rv 0 read is not stale: %v", got["data"])
	}
	l, _ := f.s.List(f.ctx, configmaps, "default", ListOptions{ResourceVersion: "0"})
	if l.Metadata.ResourceVersion != fmt.Sprint(stale) {
		t.Fatalf("list rv %s, want stale %d", l.Metadata.ResourceVersion, stale)
	}
	fresh, _ := f.s.Get(f.ctx, configmaps, "default", "a", "")
	if pathValue(fresh, "data", "v") != "2" {
		t.Fatalf("quorum read is stale")
	}
	f.clock.Step(6 * time.Second)
	got, _ = f.s.Get(f.ctx, configmaps, "default", "a", "0")
	if pathValue(got, "data", "v") != "2" {
		t.Fatalf("cache did not catch up")
	}
}

var _ = json.Number("")

// kube-apiserver validates ListOptions (422) before it converts field
// labels, so a request with both faults gets the 422.
func TestListOptionsAreValidatedBeforeFieldSelectorsAreChecked(t *testing.T) {
	f := newFixture(t)
	lo := ListOptions{FieldSelector: "metadata.uid=x", Limit: 500, ResourceVersion: "0", ResourceVersionMatch: "Exact"}
	_, err := f.s.List(f.ctx, configmaps, "default", lo)
	se, ok := err.(*StatusError)
	if !ok || se.Status.Code != 422 {
		t.Fatalf("list: got %v, want 422 Invalid", err)
	}
	lo.ResourceVersionMatch = ""
	_, err = f.s.List(f.ctx, configmaps, "default", lo)
	if se, ok := err.(*StatusError); !ok || se.Status.Code != 400 || !strings.Contains(se.Status.Message, "not a known field selector") {
		t.Fatalf("list: got %v, want 400 unknown field selector", err)
	}
}

// A list whose field selector names one object is a read of that key, as
// kube's registry does it: no pages, and without resourceVersionMatch=Exact
// a resourceVersion means "not older than", even with a limit.
func TestListOfOneNamedObjectIsASingleKeyRead(t *testing.T) {
	f := newFixture(t)
	f.fill(t, 3)
	first, err := f.s.List(f.ctx, configmaps, "default", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.create(t, configmaps, "default", cm("cm-99", nil)) // moves the store on
	l, err := f.s.List(f.ctx, configmaps, "default", ListOptions{FieldSelector: "metadata.name=cm-01", Limit: 1, ResourceVersion: first.Metadata.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	if names(l) != "cm-01" || l.Metadata.Continue != "" || l.Metadata.ResourceVersion == first.Metadata.ResourceVersion {
		t.Fatalf("got %s rv=%s continue=%q; want cm-01 at the current revision, no continue", names(l), l.Metadata.ResourceVersion, l.Metadata.Continue)
	}
	l, err = f.s.List(f.ctx, configmaps, "default", ListOptions{FieldSelector: "metadata.name=cm-01", ResourceVersion: first.Metadata.ResourceVersion, ResourceVersionMatch: MatchExact})
	if err != nil || l.Metadata.ResourceVersion != first.Metadata.ResourceVersion {
		t.Fatalf("exact: %v %+v", err, l)
	}
	f.waiting(func() {
		_, err = f.s.List(f.ctx, configmaps, "default", ListOptions{FieldSelector: "metadata.name=cm-01", ResourceVersion: "999999"})
	})
	if err == nil || err.(*StatusError).Status.Code != 504 {
		t.Fatalf("future: %v", err)
	}
}
