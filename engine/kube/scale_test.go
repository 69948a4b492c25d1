package kube

import (
	"encoding/json"
	"testing"
)

func TestScaleSubresource(t *testing.T) {
	f := newFixture(t)
	f.create(t, deployments, "default", obj(t, nginx))
	sc, err := f.s.GetScale(f.ctx, deployments, "default", "nginx")
	if err != nil {
		t.Fatal(err)
	}
	if pathValue(sc, "status", "selector") != "app=nginx" {
		t.Fatalf("%v", sc)
	}
	sc["spec"] = map[string]any{"replicas": json.Number("5")}
	sc2, err := f.s.UpdateScale(f.ctx, deployments, "default", "nginx", sc, WriteOptions{FieldManager: "test"})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := f.s.Get(f.ctx, deployments, "default", "nginx", "")
	if r, _ := numberInt(pathValue(d, "spec", "replicas")); r != 5 || ResourceVersion(d) != ResourceVersion(sc2) {
		t.Fatalf("%v", d)
	}
	if g, _ := numberInt(meta(d)["generation"]); g != 2 {
		t.Fatalf("generation %v", g)
	}
	_, err = f.s.UpdateScale(f.ctx, deployments, "default", "nginx", sc, WriteOptions{})
	wantStatus(t, err, 409, ReasonConflict, "")
}
