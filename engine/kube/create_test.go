package kube

import (
	"strings"
	"testing"

	"github.com/rvplay/rvplay/engine/mvcc"
)

func TestCreateStoresUnderKubeKeyWithModRevisionAsResourceVersion(t *testing.T) {
	f := newFixture(t)
	out := f.create(t, configmaps, "default", cm("a", map[string]any{"k": "v"}))
	resp, err := f.store.Range(f.ctx, &mvcc.RangeRequest{Key: []byte("/registry/configmaps/default/a")})
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("range: %v %v", resp, err)
	}
	kv := resp.Kvs[0]
	if ResourceVersion(out) != formatRV(kv.ModRevision) {
		t.Fatalf("rv %s, mod_revision %d", ResourceVersion(out), kv.ModRevision)
	}
	if strings.Contains(string(kv.Value), "resourceVersion") {
		t.Fatalf("stored value carries resourceVersion: %s", kv.Value)
	}
	if UID(out) == "" || str(meta(out), "creationTimestamp") != "2026-01-02T03:04:05Z" {
		t.Fatalf("system fields: %v", meta(out))
	}
}

func TestCreateTwiceIsAlreadyExists(t *testing.T) {
	f := newFixture(t)
	f.create(t, configmaps, "default", cm("a", nil))
	_, err := f.s.Create(f.ctx, configmaps, "default", cm("a", nil), WriteOptions{})
	wantStatus(t, err, 409, ReasonAlreadyExists, `configmaps "a" already exists`)
}

func TestCreateWithResourceVersionIsPlain500(t *testing.T) {
	f := newFixture(t)
	o := cm("a", nil)
	meta(o)["resourceVersion"] = "5"
	_, err := f.s.Create(f.ctx, configmaps, "default", o, WriteOptions{})
	if err == nil || AsStatus(err).Code() != 500 || AsStatus(err).Status.Reason != "" ||
		err.Error() != "resourceVersion should not be set on objects to be created" {
		t.Fatalf("got %v", err)
	}
}

func TestCreateGenerateNameMakesAName(t *testing.T) {
	f := newFixture(t)
	o := cm("", nil)
	meta(o)["generateName"] = "x-"
	out := f.create(t, configmaps, "default", o)
	if n := Name(out); !strings.HasPrefix(n, "x-") || len(n) != 7 {
		t.Fatalf("name %q", n)
	}
}

func TestCreateInMissingNamespaceIsNotFound(t *testing.T) {
	f := newFixture(t)
	_, err := f.s.Create(f.ctx, configmaps, "nope", cm("a", nil), WriteOptions{})
	wantStatus(t, err, 404, ReasonNotFound, `namespaces "nope" not found`)
}
