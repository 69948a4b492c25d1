package etcdtest

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestStartedEtcdServesTheJSONGateway(t *testing.T) {
	s := Start(t, Options{})
	resp, err := http.Post(s.URL+"/v3/kv/put", "application/json", strings.NewReader(`{"key":"Zm9v","value":"YmFy"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"revision":"2"`) {
		t.Fatalf("put on a fresh etcd: status %d body %s", resp.StatusCode, body)
	}
}
