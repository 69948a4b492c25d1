package kube

import (
	"encoding/json"
	"strings"
	"testing"
)

// A body is read as kube-apiserver's decoder reads it; each way it can be
// wrong has kube's message.
func TestDecodeBodyRefusesWhatKubesDecoderRefuses(t *testing.T) {
	deployments := Lookup("apps", "v1", "deployments")
	for _, c := range []struct {
		r    *Resource
		body string
		msg  string
	}{
		{configmaps, `[1]`, `the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" } (5b315d)`},
		{configmaps, `{"apiVersion":"v2","kind":"ConfigMap"}`, `no kind "ConfigMap" is registered for version "v2" in scheme "pkg/api/legacyscheme/scheme.go:30"`},
		{configmaps, `{"apiVersion":"apps/v1","kind":"Deployment"}`, `Deployment in version "v1" cannot be handled as a ConfigMap: converting (v1.Deployment) to (core.ConfigMap): unknown conversion`},
		{deployments, `{"apiVersion":"v1","kind":"Deployment"}`, `no kind "Deployment" is registered for version "v1" in scheme "pkg/api/legacyscheme/scheme.go:30"`},
		{configmaps, `{"data":{"k":1}}`, `ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string`},
		{configmaps, `{"metadata":"x"}`, `ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field ConfigMap.metadata of type v1.ObjectMeta`},
	} {
		_, _, err := c.r.DecodeBody([]byte(c.body), "")
		se := AsStatus(err)
		if err == nil || se.Code() != 400 || se.Status.Message != c.msg {
			t.Errorf("%s: %v\nwant 400 %s", c.body, err, c.msg)
		}
	}
}

// Unknown fields are dropped with a warning each (Warn, the default),
// dropped silently (Ignore) or refused (Strict).
func TestDecodeBodyFollowsFieldValidation(t *testing.T) {
	body := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","nope":1},"data":{"k":"v"},"bogus":true}`)
	for _, fv := range []string{"", "Warn", "Ignore"} {
		o, warnings, err := configmaps.DecodeBody(body, fv)
		if err != nil {
			t.Fatalf("%q: %v", fv, err)
		}
		b, _ := json.Marshal(o)
		if string(b) != `{"apiVersion":"v1","data":{"k":"v"},"kind":"ConfigMap","metadata":{"name":"a"}}` {
			t.Errorf("%q: kept %s", fv, b)
		}
		want := `unknown field "bogus"|unknown field "metadata.nope"`
		if fv == "Ignore" {
			want = ""
		}
		if got := strings.Join(warnings, "|"); got != want {
			t.Errorf("%q: warnings %q, want %q", fv, got, want)
		}
	}
	_, _, err := configmaps.DecodeBody(body, "Strict")
	if msg := AsStatus(err).Status.Message; msg != `ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "bogus", unknown field "metadata.nope"` {
		t.Errorf("Strict: %q", msg)
	}
}

// A scale body is an autoscaling/v1 Scale, whatever the resource.
func TestDecodeScaleBodyIsAScale(t *testing.T) {
	o, _, err := DecodeScaleBody([]byte(`{"apiVersion":"autoscaling/v1","kind":"Scale","spec":{"replicas":3}}`), "")
	if err != nil || o["kind"] != "Scale" {
		t.Fatalf("%v %v", o, err)
	}
	if _, _, err := DecodeScaleBody([]byte(`{"kind":"Deployment","apiVersion":"apps/v1"}`), ""); err == nil {
		t.Fatal("a Deployment accepted as a Scale")
	}
}

// DeleteOptions: an empty body is the defaults; a propagationPolicy kube
// does not know is a 422; dryRun "All" is a dry run.
func TestDecodeDeleteOptions(t *testing.T) {
	if do, err := DecodeDeleteOptions([]byte(" \n")); err != nil || do != (DeleteOptions{}) {
		t.Errorf("empty body: %+v %v", do, err)
	}
	do, err := DecodeDeleteOptions([]byte(`{"propagationPolicy":"Foreground","dryRun":["All"]}`))
	if err != nil || do.PropagationPolicy != "Foreground" || !do.DryRun {
		t.Errorf("%+v %v", do, err)
	}
	_, err = DecodeDeleteOptions([]byte(`{"propagationPolicy":"Sideways"}`))
	if se := AsStatus(err); se.Code() != 422 || se.Status.Message != `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"` {
		t.Errorf("%d %s", se.Code(), se.Status.Message)
	}
	_, err = DecodeDeleteOptions([]byte(`{"gracePeriodSeconds":"x"}`))
	if se := AsStatus(err); se.Code() != 400 || !strings.HasPrefix(se.Status.Message, "the object provided is unrecognized (must be of type DeleteOptions): ") {
		t.Errorf("%d %s", se.Code(), se.Status.Message)
	}
}
