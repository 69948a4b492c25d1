package kube

import (
	"fmt"
	"testing"
)

// A GET from the future: the cache waits blockTimeout for the revision,
// then answers 504 with a Retry-After of 1 s; the store answers at once,
// without one.
func TestGetFutureResourceVersionIsTooLarge(t *testing.T) {
	bothModes(t, func(t *testing.T, f *fixture) {
		f.create(t, configmaps, "default", cm("a", nil))
		var err error
		start := f.clock.Now()
		f.waiting(func() { _, err = f.s.Get(f.ctx, configmaps, "default", "a", "999") })
		wantStatus(t, err, 504, ReasonTimeout, fmt.Sprintf("Timeout: Too large resource version: 999, current: %d", f.store.Rev()))
		waited, retry := f.clock.Now().Sub(start), AsStatus(err).Status.Details.RetryAfterSeconds
		if f.s.WatchCache() && (waited < blockTimeout || retry != 1) || !f.s.WatchCache() && (waited != 0 || retry != 0) {
			t.Fatalf("waited %v, Retry-After %d", waited, retry)
		}
		// A malformed one: the store's 400; the cache's parse, first, a
		// plain error (500), as sample-apiserver answers with each.
		_, err = f.s.Get(f.ctx, configmaps, "default", "a", "abc")
		if f.s.WatchCache() {
			wantStatus(t, err, 500, "", `resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`)
		} else {
			wantStatus(t, err, 400, ReasonBadRequest, `invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`)
		}
	})
}

func TestSplicedAnswersEqualDecodedAnswers(t *testing.T) {
	f := newFixture(t)
	f.create(t, configmaps, "default", cm("a", map[string]any{"k": "v<&>"}))
	o := obj(t, nginx)
	meta(o)["annotations"] = map[string]any{"x": "y"}
	meta(o)["finalizers"] = []any{"f"}
	f.create(t, deployments, "default", o)
	for _, c := range []struct {
		r   *Resource
		key string
	}{{configmaps, "/registry/configmaps/default/a"}, {deployments, "/registry/deployments/default/nginx"},
		{namespaces, "/registry/namespaces/default"}} {
		kv, _, _ := f.s.get(f.ctx, c.key, 0)
		dec, _ := decodeKV(kv)
		want := string(c.r.Encode(dec))
		got, ok := spliceRV(kv.Value, formatRV(kv.ModRevision), false)
		if !ok || string(got) != want {
			t.Errorf("%s:\n got %s\nwant %s", c.key, got, want)
		}
	}
	for _, bad := range []string{`[]`, `{"metadata":5}`, `{"kind":"X"}`, `{"metadata":{"resourceVersion":"1"}}`, `{"a":`, `{"metadata":{}} x`} {
		if _, ok := spliceRV([]byte(bad), "1", false); ok {
			t.Errorf("%s: spliced", bad)
		}
	}
}
