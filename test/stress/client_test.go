package stress

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// clientFrom is an HTTP client whose connections come from a loopback
// address of their own (127.0.0.x): the server tells clients apart by
// remote address, and so caps and rate limits one client without another
// (on Linux all of 127.0.0.0/8 is the loopback interface).
func clientFrom(local string, timeout time.Duration) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 5 * time.Second}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			DialContext:         d.DialContext,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     30 * time.Second,
		},
	}
}

// attacker is the attacks' own client: another address than the
// well-behaved client's.
var attacker = clientFrom("127.0.0.1", 2*time.Minute)

// post sends body to url as JSON and returns the answer's status and body.
func post(c *http.Client, url, body string) (int, []byte, error) {
	resp, err := c.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// mustPost posts and requires a 200.
func mustPost(t interface {
	Helper()
	Fatalf(string, ...any)
}, c *http.Client, url, body string) []byte {
	t.Helper()
	status, b, err := post(c, url, body)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	if status != 200 {
		t.Fatalf("POST %s: %d %s", url, status, b)
	}
	return b
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// prefixEnd is etcd's range end of every key with prefix p ("\x00", every
// key, for "").
func prefixEnd(p string) string {
	if p == "" {
		return "\x00"
	}
	b := []byte(p)
	b[len(b)-1]++
	return string(b)
}

// putRequest is an etcd PutRequest in the gateway's JSON.
func putRequest(key, value string) string {
	return fmt.Sprintf(`{"key":%q,"value":%q}`, b64(key), b64(value))
}

// putsTxn is a txn that puts every pair, unconditionally.
func putsTxn(pairs [][2]string) string {
	var b strings.Builder
	b.WriteString(`{"success":[`)
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"request_put":` + putRequest(p[0], p[1]) + `}`)
	}
	b.WriteString(`]}`)
	return b.String()
}

// keyValue is a key and its value as the gateway returns them (base64,
// which encoding/json decodes into []byte).
type keyValue struct {
	Key   []byte `json:"key"`
	Value []byte `json:"value"`
}

// readAll reads every key with prefix from a session with c, 64 keys at a
// time: a whole range could pass the server's answer limit, and reading
// back what an attack wrote should not add much to the server's peak.
func readAll(c *http.Client, base, prefix string) (map[string]string, error) {
	out := map[string]string{}
	from, end := prefix, prefixEnd(prefix)
	if from == "" {
		from = "\x00"
	}
	for {
		body := fmt.Sprintf(`{"key":%q,"range_end":%q,"limit":"64"}`, b64(from), b64(end))
		status, b, err := post(c, base+"/v3/kv/range", body)
		if err != nil {
			return nil, err
		}
		if status != 200 {
			return nil, fmt.Errorf("range: %d %s", status, b)
		}
		var r struct {
			Kvs  []keyValue `json:"kvs"`
			More bool       `json:"more"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, err
		}
		for _, kv := range r.Kvs {
			out[string(kv.Key)] = string(kv.Value)
		}
		if !r.More || len(r.Kvs) == 0 {
			return out, nil
		}
		from = string(r.Kvs[len(r.Kvs)-1].Key) + "\x00"
	}
}

// etcdError is the gateway's error body.
type etcdError struct {
	Error string `json:"error"`
	Code  int    `json:"code"`
}

func decodeEtcdError(b []byte) etcdError {
	var e etcdError
	_ = json.Unmarshal(b, &e)
	return e
}

// kubeStatus is the part of a Kubernetes Status the attacks check.
type kubeStatus struct {
	Kind    string `json:"kind"`
	Status  string `json:"status"`
	Message string `json:"message"`
	Reason  string `json:"reason"`
	Code    int    `json:"code"`
}

func decodeStatus(b []byte) kubeStatus {
	var s kubeStatus
	_ = json.Unmarshal(b, &s)
	return s
}

// repeatBytes is n bytes of c.
func repeatBytes(c byte, n int) string { return string(bytes.Repeat([]byte{c}, n)) }
