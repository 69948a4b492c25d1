package kubediff

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

var recordCRD = flag.String("record-crd", "", "record the custom resource exchanges from a real kube-apiserver into this JSONL file")

// crontabCRD is the definition the recorded exchanges use: every schema
// feature a custom resource's validation, defaulting and pruning read,
// the status and scale subresources, printer columns and a short name.
const crontabCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"crontabs.stable.example.com"},
"spec":{"group":"stable.example.com","scope":"Namespaced",
 "names":{"plural":"crontabs","singular":"crontab","kind":"CronTab","shortNames":["ct"],"categories":["all"]},
 "versions":[{"name":"v1","served":true,"storage":true,
  "subresources":{"status":{},"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas","labelSelectorPath":".status.labelSelector"}},
  "additionalPrinterColumns":[
   {"name":"Spec","type":"string","description":"The cron spec","jsonPath":".spec.cronSpec"},
   {"name":"Replicas","type":"integer","jsonPath":".spec.replicas"},
   {"name":"Image","type":"string","priority":1,"jsonPath":".spec.image"},
   {"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}],
  "schema":{"openAPIV3Schema":{"type":"object","description":"CronTab runs an image on a schedule.",
   "properties":{
    "spec":{"type":"object","description":"What to run and when.","required":["cronSpec","image"],
     "properties":{
      "cronSpec":{"type":"string","description":"When to run, in cron syntax.","pattern":"^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$"},
      "image":{"type":"string","minLength":1,"maxLength":64},
      "replicas":{"type":"integer","minimum":1,"maximum":10,"default":1},
      "policy":{"type":"string","enum":["Allow","Forbid","Replace"],"default":"Allow"},
      "ports":{"type":"array","maxItems":3,"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["port"],
       "items":{"type":"object","required":["port"],"properties":{"name":{"type":"string"},"port":{"type":"integer","format":"int32"}}}},
      "labels":{"type":"object","additionalProperties":{"type":"string"}},
      "config":{"type":"object","x-kubernetes-preserve-unknown-fields":true},
      "ratio":{"type":"number","multipleOf":0.5,"maximum":5,"exclusiveMaximum":true},
      "suspend":{"type":"boolean","nullable":true},
      "size":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]}}},
    "status":{"type":"object","properties":{
      "replicas":{"type":"integer"},
      "labelSelector":{"type":"string"},
      "lastScheduleTime":{"type":"string","format":"date-time"}}}}}}}]}}`

// crdStep is one recorded request; wait, when set, polls (unrecorded)
// until the server is where the next request expects it.
type crdStep struct {
	note, method, path, contentType, accept, body string
	wait                                          func(t *testing.T, c *http.Client, base string)
}

const crPath = "/apis/stable.example.com/v1/namespaces/default/crontabs"

func cronTab(name, spec string) string {
	return `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"` + name + `"},"spec":` + spec + `}`
}

var crdSteps = []crdStep{
	{note: "create a CRD", method: "POST", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body: crontabCRD, wait: waitEstablished("crontabs.stable.example.com")},
	{note: "the CRD once its names are accepted and it is established", method: "GET", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com"},
	{note: "discovery: the group", method: "GET", path: "/apis/stable.example.com"},
	{note: "discovery: the group-version's resources", method: "GET", path: "/apis/stable.example.com/v1"},
	{note: "discovery: apiextensions", method: "GET", path: "/apis/apiextensions.k8s.io/v1"},
	{note: "the definitions as kubectl get prints them", method: "GET", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", accept: "application/json;as=Table;v=v1;g=meta.k8s.io", wait: waitGone404("/openapi/v3/apis/stable.example.com/v1", false)},
	{note: "OpenAPI v3 of the group-version (kubectl explain)", method: "GET", path: "/openapi/v3/apis/stable.example.com/v1"},
	{note: "create a custom resource: defaults filled in", method: "POST", path: crPath, body: cronTab("daily", `{"cronSpec":"0 0 * * *","image":"busybox"}`)},
	{note: "create with unknown fields: pruned, one warning each", method: "POST", path: crPath, body: cronTab("pruned", `{"cronSpec":"* * * * *","image":"busybox","bogus":1,"ports":[{"port":80,"extra":true}],"config":{"kept":{"deep":1}}}`)},
	{note: "create with unknown fields, fieldValidation=Strict", method: "POST", path: crPath + "?fieldValidation=Strict", body: cronTab("strict", `{"cronSpec":"* * * * *","image":"busybox","bogus":1}`)},
	{note: "create with a status: dropped (status subresource)", method: "POST", path: crPath, body: `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"withstatus"},"spec":{"cronSpec":"* * * * *","image":"busybox","replicas":2},"status":{"replicas":5}}`},
	{note: "invalid: wrong types", method: "POST", path: crPath, body: cronTab("types", `{"cronSpec":5,"image":"busybox","replicas":"three","suspend":"yes","labels":{"a":1},"ports":"80"}`)},
	{note: "invalid: required fields missing", method: "POST", path: crPath, body: cronTab("required", `{"replicas":2}`)},
	{note: "invalid: no spec at all", method: "POST", path: crPath, body: `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"nospec"}}`},
	{note: "invalid: bounds, pattern, enum, lengths, items, multipleOf", method: "POST", path: crPath, body: cronTab("bounds", `{"cronSpec":"every day","image":"","replicas":11,"policy":"Sometimes","ratio":5,"ports":[{"port":1},{"port":2},{"port":3},{"port":4}]}`)},
	{note: "invalid: below the minimum, not a multiple, a list item without its key", method: "POST", path: crPath, body: cronTab("below", `{"cronSpec":"1 2 3 4 5","image":"x","replicas":0,"ratio":0.3,"ports":[{"name":"http"}]}`)},
	{note: "invalid: duplicate keys in a map list", method: "POST", path: crPath, body: cronTab("dupkeys", `{"cronSpec":"1 2 3 4 5","image":"x","ports":[{"port":80},{"port":80}]}`)},
	{note: "nullable field set to null is kept; int-or-string takes a string", method: "POST", path: crPath, body: cronTab("nullable", `{"cronSpec":"1 2 3 4 5","image":"x","suspend":null,"size":"10%"}`)},
	{note: "invalid: int-or-string given a boolean", method: "POST", path: crPath, body: cronTab("intorstring", `{"cronSpec":"1 2 3 4 5","image":"x","size":true}`)},
	{note: "invalid: an integer given a fraction", method: "POST", path: crPath, body: cronTab("fraction", `{"cronSpec":"1 2 3 4 5","image":"x","replicas":1.5}`)},
	{note: "invalid: wrong kind in the body", method: "POST", path: crPath, body: `{"apiVersion":"stable.example.com/v1","kind":"Other","metadata":{"name":"kind"},"spec":{"cronSpec":"1 2 3 4 5","image":"x"}}`},
	{note: "invalid: wrong apiVersion in the body", method: "POST", path: crPath, body: `{"apiVersion":"stable.example.com/v2","kind":"CronTab","metadata":{"name":"version"},"spec":{"cronSpec":"1 2 3 4 5","image":"x"}}`},
	{note: "invalid: a bad name", method: "POST", path: crPath, body: cronTab("Bad_Name", `{"cronSpec":"1 2 3 4 5","image":"x"}`)},
	{note: "get a custom resource", method: "GET", path: crPath + "/daily"},
	{note: "update without resourceVersion: must be specified", method: "PUT", path: crPath + "/daily", body: cronTab("daily", `{"cronSpec":"0 1 * * *","image":"busybox"}`)},
	{note: "update with a stale resourceVersion: conflict", method: "PUT", path: crPath + "/daily", body: `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"daily","resourceVersion":"1"},"spec":{"cronSpec":"0 1 * * *","image":"busybox"}}`},
	{note: "update with the current resourceVersion: generation 2, status ignored", method: "PUT", path: crPath + "/daily", body: "@daily:spec.cronSpec=0 1 * * *;status.replicas=3"},
	{note: "update with the same content: a no-op", method: "PUT", path: crPath + "/daily", body: "@daily:"},
	{note: "update the status subresource: spec changes ignored, generation kept", method: "PUT", path: crPath + "/daily/status", body: "@daily:status.replicas=3;status.labelSelector=app=cron;spec.image=ignored"},
	{note: "get the scale subresource", method: "GET", path: crPath + "/daily/scale"},
	{note: "update the scale subresource", method: "PUT", path: crPath + "/daily/scale", body: `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"daily","namespace":"default"},"spec":{"replicas":4}}`},
	{note: "update the scale subresource beyond the schema's maximum", method: "PUT", path: crPath + "/daily/scale", body: `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"daily","namespace":"default"},"spec":{"replicas":40}}`},
	{note: "merge patch", method: "PATCH", path: crPath + "/daily", contentType: "application/merge-patch+json", body: `{"metadata":{"labels":{"team":"a"}},"spec":{"policy":"Forbid"}}`},
	{note: "merge patch that breaks validation", method: "PATCH", path: crPath + "/daily", contentType: "application/merge-patch+json", body: `{"spec":{"replicas":100}}`},
	{note: "json patch", method: "PATCH", path: crPath + "/daily", contentType: "application/json-patch+json", body: `[{"op":"replace","path":"/spec/image","value":"nginx"}]`},
	{note: "strategic merge patch: not for custom resources", method: "PATCH", path: crPath + "/daily", contentType: "application/strategic-merge-patch+json", body: `{"spec":{"image":"nginx"}}`},
	{note: "server-side apply creates", method: "PATCH", path: crPath + "/applied?fieldManager=tester", contentType: "application/apply-patch+yaml", body: cronTab("applied", `{"cronSpec":"5 4 * * *","image":"busybox","ports":[{"port":80,"name":"http"}]}`)},
	{note: "server-side apply by another manager: conflict", method: "PATCH", path: crPath + "/applied?fieldManager=other", contentType: "application/apply-patch+yaml", body: cronTab("applied", `{"cronSpec":"6 4 * * *"}`)},
	{note: "list", method: "GET", path: crPath},
	{note: "list by label", method: "GET", path: crPath + "?labelSelector=team%3Da"},
	{note: "list by name", method: "GET", path: crPath + "?fieldSelector=metadata.name%3Dapplied"},
	{note: "list by an unknown field", method: "GET", path: crPath + "?fieldSelector=spec.image%3Dnginx"},
	{note: "list in every namespace", method: "GET", path: "/apis/stable.example.com/v1/crontabs"},
	{note: "table", method: "GET", path: crPath, accept: "application/json;as=Table;v=v1;g=meta.k8s.io"},
	{note: "delete a custom resource", method: "DELETE", path: crPath + "/withstatus"},
	{note: "update the CRD without resourceVersion: must be specified", method: "PUT", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com",
		body: strings.Replace(crontabCRD, `"categories":["all"]`, `"categories":["all","cron"]`, 1)},
	{note: "a CRD whose name is not plural.group", method: "POST", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body: `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"wrong.example.com"},"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`},
	{note: "a CRD without versions, scope or kind", method: "POST", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body: `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","names":{"plural":"widgets"}}}`},
	{note: "a CRD whose schema is not structural", method: "POST", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body: `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","scope":"Cluster","names":{"plural":"widgets","kind":"Widget"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"properties":{"size":{"type":"integer"}}},"status":{"type":"object","uniqueItems":true}}}}}]}}`},
	{note: "a CRD with two storage versions and no schema", method: "POST", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body: `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","scope":"Cluster","names":{"plural":"widgets","kind":"Widget"},"versions":[{"name":"v1","served":true,"storage":true},{"name":"v2","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`},
	{note: "a cluster-scoped CRD with a minimal schema", method: "POST", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body: `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","scope":"Cluster","names":{"plural":"widgets","kind":"Widget"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`, wait: waitEstablished("widgets.example.com")},
	{note: "a CRD claiming names another in its group has", method: "POST", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body: `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gadgets.example.com"},"spec":{"group":"example.com","scope":"Cluster","names":{"plural":"gadgets","kind":"Widget"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`, wait: waitCondition("gadgets.example.com", "NamesAccepted", "False")},
	{note: "the CRD whose names are not accepted", method: "GET", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com"},
	{note: "create a cluster-scoped custom resource, anything preserved", method: "POST", path: "/apis/example.com/v1/widgets", body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","labels":{}},"anything":{"goes":[1,"two",null]},"spec":{}}`},
	{note: "delete the CRD: marked, its resources go", method: "DELETE", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com", wait: waitGone("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com")},
	{note: "the CRD is gone", method: "GET", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com"},
	{note: "its resources are no longer served", method: "GET", path: crPath},
}

// TestRecordCRDGolden records crdSteps from a real kube-apiserver into the
// file -record-crd names (engine/api/kubeapi/testdata/crd_exchanges.jsonl
// is such a recording); without the flag it is skipped.
func TestRecordCRDGolden(t *testing.T) {
	recordGolden(t, *recordCRD, "-record-crd", func() []crdStep { return crdSteps })
}

// recordGolden records the steps from a fresh real kube-apiserver into
// file, or skips t when no file is named (by the flag given, for the
// message).
func recordGolden(t *testing.T, file, flagName string, steps func() []crdStep) {
	if file == "" {
		t.Skip("records only with " + flagName + " FILE")
	}
	c := newClient()
	base := startKubeAPIServer(t, c)
	if err := os.WriteFile(file, recordSteps(t, c, base, steps()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// recordSteps sends steps to the server at base, in order, and returns
// their recording: one JSON line each (record's).
func recordSteps(t *testing.T, c *http.Client, base string, steps []crdStep) []byte {
	t.Helper()
	var out bytes.Buffer
	last := map[string]map[string]any{}
	for _, s := range steps {
		body := s.body
		if strings.HasPrefix(body, "@") {
			body = editedBody(t, last, body)
		}
		line, rb, _ := record(t, c, base, s, body, nil)
		var m map[string]any
		if json.Unmarshal(rb, &m) == nil {
			if md, ok := m["metadata"].(map[string]any); ok && m["kind"] != "Status" {
				if n, _ := md["name"].(string); n != "" {
					last[n] = m
				}
			}
		}
		b, err := json.Marshal(line)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(b)
		out.WriteByte('\n')
		if s.wait != nil {
			s.wait(t, c, base)
		}
	}
	return out.Bytes()
}

// record sends one step (body as given, extra headers besides) to base
// and returns its line of the recording (note, method, path, sent,
// status, received, contentType, accept, warnings), the answer's body and
// its headers.
func record(t *testing.T, c *http.Client, base string, s crdStep, body string, extra http.Header) (map[string]any, []byte, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(s.method, base+s.path, strings.NewReader(body))
	ct := s.contentType
	if ct == "" && body != "" {
		ct = "application/json"
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if s.accept != "" {
		req.Header.Set("Accept", s.accept)
	}
	for k, v := range extra {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", "Python-urllib/3.13")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var received any = json.RawMessage(rb)
	if !json.Valid(rb) {
		received = string(rb)
	}
	var sent any
	if body != "" {
		sent = json.RawMessage(body)
		if !json.Valid([]byte(body)) {
			sent = body
		}
	}
	line := map[string]any{"note": s.note, "method": s.method, "path": s.path, "sent": sent, "status": resp.StatusCode, "received": received}
	if ct != "" {
		line["contentType"] = ct
	}
	if s.accept != "" {
		line["accept"] = s.accept
	}
	if w := resp.Header.Values("Warning"); len(w) > 0 {
		line["warnings"] = w
	}
	return line, rb, resp.Header
}

// editedBody is "@name:path=value;…": the last answer for name with the
// given fields set (dotted paths, string values unless they parse as JSON
// numbers), so that an update carries the current resourceVersion.
func editedBody(t *testing.T, last map[string]map[string]any, spec string) string {
	name, edits, _ := strings.Cut(spec[1:], ":")
	o, ok := last[name]
	if !ok {
		t.Fatalf("no answer yet for %q", name)
	}
	var cp map[string]any
	b, _ := json.Marshal(o)
	_ = json.Unmarshal(b, &cp)
	for _, e := range strings.Split(edits, ";") {
		if e == "" {
			continue
		}
		p, v, _ := strings.Cut(e, "=")
		keys := strings.Split(p, ".")
		m := cp
		for _, k := range keys[:len(keys)-1] {
			next, ok := m[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[k] = next
			}
			m = next
		}
		var val any = v
		var n json.Number
		if json.Unmarshal([]byte(v), &n) == nil {
			val = n
		}
		m[keys[len(keys)-1]] = val
	}
	b, _ = json.Marshal(cp)
	return string(b)
}

func getJSON(c *http.Client, url string) (int, map[string]any) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

func waitCondition(name, cond, status string) func(t *testing.T, c *http.Client, base string) {
	return func(t *testing.T, c *http.Client, base string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			_, m := getJSON(c, base+"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+name)
			st, _ := m["status"].(map[string]any)
			conds, _ := st["conditions"].([]any)
			for _, x := range conds {
				if cm, _ := x.(map[string]any); cm["type"] == cond && cm["status"] == status {
					return
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("%s: no condition %s=%s", name, cond, status)
	}
}

func waitEstablished(name string) func(t *testing.T, c *http.Client, base string) {
	return waitCondition(name, "Established", "True")
}

func waitGone(path string) func(t *testing.T, c *http.Client, base string) {
	return waitGone404(path, true)
}

// waitGone404 polls path until it answers 404 (gone) or anything else (!gone).
func waitGone404(path string, gone bool) func(t *testing.T, c *http.Client, base string) {
	return func(t *testing.T, c *http.Client, base string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if code, _ := getJSON(c, base+path); (code == 404) == gone {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("%s: still not what the next request expects (gone %v)", path, gone)
	}
}
