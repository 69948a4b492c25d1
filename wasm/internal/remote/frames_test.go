package remote

import (
	"net/url"
	"testing"

	"github.com/rvplay/rvplay/engine/api"
)

func TestLinesCutsFramesWhereverTheChunksEnd(t *testing.T) {
	var l lines
	var got []string
	for _, chunk := range []string{`{"type":"ADD`, `ED"}` + "\n" + `{"type":"MOD`, "IFIED\"}\n\n{\"a\":1}\n", `{"last":true}`} {
		for _, f := range l.add([]byte(chunk)) {
			got = append(got, string(f))
		}
	}
	if r := l.rest(); r != nil {
		got = append(got, string(r))
	}
	want := []string{"{\"type\":\"ADDED\"}\n", "{\"type\":\"MODIFIED\"}\n", "{\"a\":1}\n", "{\"last\":true}\n"}
	if len(got) != len(want) {
		t.Fatalf("got %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("frame %d: %q, want %q", i, got[i], want[i])
		}
	}
}

func TestWhatStreams(t *testing.T) {
	for _, c := range []struct {
		method, path, query string
		watch, stream       bool
	}{
		{"GET", "/api/v1/namespaces/default/configmaps", "watch=true", true, true},
		{"GET", "/api/v1/namespaces/default/configmaps", "watch=1", true, true},
		{"GET", "/api/v1/watch/namespaces/default/configmaps", "", true, true},
		{"GET", "/api/v1/namespaces/default/configmaps", "watch=false", false, false},
		{"POST", "/v3/watch", "", false, true},
		{"POST", "/v3/kv/range", "", false, false},
	} {
		q, _ := url.ParseQuery(c.query)
		req := &api.Request{Method: c.method, Path: c.path, Query: q}
		if IsKubeWatch(req) != c.watch || IsStream(req) != c.stream {
			t.Errorf("%s %s?%s: watch %v stream %v", c.method, c.path, c.query, IsKubeWatch(req), IsStream(req))
		}
	}
}

func TestHeadersLeaveOutWhatAPageMayNotSetAndCarryTheUserAgent(t *testing.T) {
	h := Headers(&api.Request{Header: api.Header{"User-Agent": {"a/rvplay-lab"}, "Accept": {"application/json"},
		"Content-Length": {"3"}, "Content-Type": {"application/json"}}})
	if h["Accept"] != "application/json" || h["Content-Type"] != "application/json" || h[api.BrowserUserAgentHeader] != "a/rvplay-lab" {
		t.Fatalf("%v", h)
	}
	if _, ok := h["User-Agent"]; ok {
		t.Fatalf("%v", h)
	}
	if _, ok := h["Content-Length"]; ok {
		t.Fatalf("%v", h)
	}
}
