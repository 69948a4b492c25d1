package kubediff

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"testing"
)

var recordDiscovery = flag.String("record-discovery", "", "record the aggregated discovery exchanges from a real kube-apiserver into this JSONL file")

// The Accept headers discovery clients send: client-go 1.30 and later
// (kubectl 1.30 to the newest), client-go 1.27 to 1.29 (v2beta1 first),
// the v2 and v2beta1 documents alone, a legacy client, and v2 with
// client-go 1.36's nopeer profile.
const (
	acceptClientGo    = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
	acceptClientGo128 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
	acceptV2          = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	acceptV2Beta1     = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
	acceptNoPeer      = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;profile=nopeer," + acceptClientGo
)

// discoverySteps are the recorded exchanges: both documents in each
// variant, the legacy fallback, the ETag's 304, and /apis while a custom
// resource's group is served and after its definition is gone. An
// "@etag" If-None-Match sends the ETag of the previous answer.
var discoverySteps = []crdStep{
	{note: "/api, as client-go asks", method: "GET", path: "/api", accept: acceptClientGo},
	{note: "/apis, as client-go asks", method: "GET", path: "/apis", accept: acceptClientGo},
	{note: "/apis, as client-go 1.27-1.29 ask: v2beta1", method: "GET", path: "/apis", accept: acceptClientGo128},
	{note: "/api, v2beta1 alone", method: "GET", path: "/api", accept: acceptV2Beta1},
	{note: "/apis, v2 alone", method: "GET", path: "/apis", accept: acceptV2},
	{note: "/apis, the same document again: 304 for its ETag", method: "GET", path: "/apis", accept: acceptV2, body: "@etag"},
	{note: "/apis, v2 with the nopeer profile", method: "GET", path: "/apis", accept: acceptNoPeer},
	{note: "/apis, plain JSON: the legacy APIGroupList", method: "GET", path: "/apis", accept: "application/json"},
	{note: "/api, no Accept: the legacy APIVersions", method: "GET", path: "/api"},
	{note: "create a CRD", method: "POST", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body: crontabCRD, wait: waitEstablished("crontabs.stable.example.com")},
	{note: "/apis with the custom resource's group", method: "GET", path: "/apis", accept: acceptClientGo, wait: waitGone404("/apis/stable.example.com/v1", false)},
	{note: "delete the CRD", method: "DELETE", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com", wait: waitGone("/apis/stable.example.com/v1")},
	{note: "/apis without it", method: "GET", path: "/apis", accept: acceptClientGo},
}

// TestRecordDiscoveryGolden records discoverySteps from a real
// kube-apiserver into the file -record-discovery names
// (engine/api/kubeapi/testdata/discovery_exchanges.jsonl is such a
// recording), with the answers' discovery headers; without the flag it is
// skipped.
func TestRecordDiscoveryGolden(t *testing.T) {
	if *recordDiscovery == "" {
		t.Skip("records only with -record-discovery FILE")
	}
	c := newClient()
	base := startKubeAPIServer(t, c)
	var out bytes.Buffer
	etag := ""
	for _, s := range discoverySteps {
		body, inm := s.body, ""
		if body == "@etag" {
			body, inm = "", etag
		}
		var extra http.Header
		if inm != "" {
			extra = http.Header{"If-None-Match": {inm}}
		}
		line, _, h := record(t, c, base, s, body, extra)
		if inm != "" {
			line["ifNoneMatch"] = inm
		}
		headers := map[string]string{}
		for _, k := range []string{"Content-Type", "Etag", "Vary", "Cache-Control"} {
			if v := h.Get(k); v != "" {
				headers[k] = v
			}
		}
		line["headers"] = headers
		if e := h.Get("Etag"); e != "" {
			etag = e
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
	if err := os.WriteFile(*recordDiscovery, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAggregatedDiscoveryMatchesTheReference asks rvplay and the running
// reference (sample-apiserver, the generic apiserver's discovery) for
// /apis with each Accept header a discovery client sends, and compares
// what does not depend on the resources served: the status, the
// discovery headers, the document's kind and apiVersion, that every
// version of every group is Current, and the 304 for the document's own
// ETag. (The documents themselves are compared with kube-apiserver's by
// engine/api/kubeapi's replay of the recorded exchanges.)
func TestAggregatedDiscoveryMatchesTheReference(t *testing.T) {
	buildAll(t)
	c := newClient()
	ref := startReference(t, c).serverURL
	ours := startRvplay(t)
	type answer struct {
		status                     int
		contentType, vary, caching string
		etag                       bool
		kind, apiVersion           string
		allCurrent                 bool
	}
	ask := func(base, accept, inm string) (answer, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", base+"/apis", nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		if inm != "" {
			req.Header.Set("If-None-Match", inm)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var doc struct {
			Kind       string `json:"kind"`
			APIVersion string `json:"apiVersion"`
			Items      []struct {
				Versions []struct {
					Freshness string `json:"freshness"`
				} `json:"versions"`
			} `json:"items"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&doc)
		a := answer{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), vary: resp.Header.Get("Vary"),
			caching: resp.Header.Get("Cache-Control"), etag: resp.Header.Get("Etag") != "", kind: doc.Kind, apiVersion: doc.APIVersion, allCurrent: true}
		if doc.Kind != "APIGroupDiscoveryList" {
			// the legacy APIGroupList: kube-apiserver (its aggregator)
			// says apiVersion v1, the generic apiserver alone does not;
			// rvplay answers as kube-apiserver (the recorded exchanges)
			a.apiVersion = ""
		}
		for _, g := range doc.Items {
			for _, v := range g.Versions {
				a.allCurrent = a.allCurrent && v.Freshness == "Current"
			}
		}
		return a, resp.Header.Get("Etag")
	}
	for _, accept := range []string{acceptClientGo, acceptClientGo128, acceptV2, acceptV2Beta1, acceptNoPeer, "application/json", ""} {
		want, refTag := ask(ref, accept, "")
		got, ourTag := ask(ours, accept, "")
		if got != want {
			t.Errorf("Accept %q:\n got %+v\nwant %+v", accept, got, want)
		}
		if refTag == "" {
			continue
		}
		want, _ = ask(ref, accept, refTag)
		got, _ = ask(ours, accept, ourTag)
		if got != want {
			t.Errorf("Accept %q with the answer's ETag in If-None-Match:\n got %+v\nwant %+v", accept, got, want)
		}
	}
}
