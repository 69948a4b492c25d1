package kubeapi

import (
	"strings"
	"testing"
)

// protobuf encoding helpers, to build what client-go's typed clients send
func pbTag(num, wire int) []byte { return pbUvarint(uint64(num<<3 | wire)) }

func pbUvarint(v uint64) []byte {
	var b []byte
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func pbBytesField(num int, data []byte) []byte {
	return append(append(pbTag(num, 2), pbUvarint(uint64(len(data)))...), data...)
}

func pbStr(num int, s string) []byte { return pbBytesField(num, []byte(s)) }

func pbVar(num int, v uint64) []byte { return append(pbTag(num, 0), pbUvarint(v)...) }

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func envelope(apiVersion, kind string, raw []byte) []byte {
	return cat(protobufMagic, pbBytesField(1, cat(pbStr(1, apiVersion), pbStr(2, kind))), pbBytesField(2, raw),
		pbStr(3, ""), pbStr(4, ""))
}

func TestProtobufCreateOfTypedClients(t *testing.T) {
	f := newFixture(t)
	objMeta := cat(pbStr(1, "x"), pbStr(2, ""), pbStr(3, ""), pbVar(7, 0), pbBytesField(8, nil),
		pbBytesField(11, cat(pbStr(1, "app"), pbStr(2, "web"))))
	cm := cat(pbBytesField(1, objMeta), pbBytesField(2, cat(pbStr(1, "a"), pbStr(2, "b"))))
	resp := f.do("POST", "/api/v1/namespaces/default/configmaps", "application/vnd.kubernetes.protobuf", envelope("v1", "ConfigMap", cm))
	if resp.Status != 201 || !strings.Contains(string(resp.Body), `"labels":{"app":"web"}`) || !strings.Contains(string(resp.Body), `"data":{"a":"b"}`) {
		t.Fatalf("%d %s", resp.Status, resp.Body)
	}
	// a deployment as kubectl create deployment builds it: replicas 0 is kept (pointer field)
	tmpl := cat(pbBytesField(1, cat(pbBytesField(11, cat(pbStr(1, "app"), pbStr(2, "d"))))),
		pbBytesField(2, pbBytesField(2, cat(pbStr(1, "c"), pbStr(2, "img"), pbBytesField(8, nil)))))
	spec := cat(pbVar(1, 0), pbBytesField(2, pbBytesField(1, cat(pbStr(1, "app"), pbStr(2, "d")))), pbBytesField(3, tmpl), pbBytesField(4, nil))
	d := cat(pbBytesField(1, pbStr(1, "d")), pbBytesField(2, spec))
	resp = f.do("POST", "/apis/apps/v1/namespaces/default/deployments", "application/vnd.kubernetes.protobuf", envelope("apps/v1", "Deployment", d))
	if resp.Status != 201 || !strings.Contains(string(resp.Body), `"replicas":0`) || !strings.Contains(string(resp.Body), `"image":"img"`) {
		t.Fatalf("%d %s", resp.Status, resp.Body)
	}
	resp = f.do("POST", "/api/v1/namespaces/default/configmaps", "application/vnd.kubernetes.protobuf", []byte("nope"))
	if resp.Status != 400 {
		t.Fatalf("%d %s", resp.Status, resp.Body)
	}
}

func FuzzProtobufBody(f *testing.F) {
	f.Add(envelope("v1", "ConfigMap", cat(pbBytesField(1, pbStr(1, "x")), pbBytesField(2, cat(pbStr(1, "a"), pbStr(2, "b"))))))
	f.Add(envelope("apps/v1", "Deployment", pbBytesField(1, pbStr(1, "d"))))
	f.Add([]byte("k8s\x00\x0a\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := protobufToJSON(b)
		if err == nil && o == nil {
			t.Fatal("nil object without error")
		}
	})
}

func TestProtobufDeleteOptions(t *testing.T) {
	f := newFixture(t)
	f.do("POST", "/api/v1/namespaces/default/configmaps", "application/json", []byte(`{"metadata":{"name":"a"}}`))
	opts := cat(pbVar(1, 0), pbBytesField(2, pbStr(2, "1")), pbStr(4, "Background"))
	resp := f.do("DELETE", "/api/v1/namespaces/default/configmaps/a", "application/vnd.kubernetes.protobuf", envelope("v1", "DeleteOptions", opts))
	if resp.Status != 409 || !strings.Contains(string(resp.Body), "the ResourceVersion in the precondition (1)") {
		t.Fatalf("%d %s", resp.Status, resp.Body)
	}
	resp = f.do("DELETE", "/api/v1/namespaces/default/configmaps/a", "application/vnd.kubernetes.protobuf", envelope("v1", "DeleteOptions", pbStr(4, "Background")))
	if resp.Status != 200 {
		t.Fatalf("%d %s", resp.Status, resp.Body)
	}
}

// The etcd view's decoding of a stored object: unknown fields by number,
// repeated ones as a list, bytes that are neither text nor a message in
// base64; a value that is not the envelope, or is cut short, is an error.
func TestStoredProtobufJSON(t *testing.T) {
	obj := cat(pbBytesField(1, pbStr(1, "x")), pbStr(2, "text"), pbVar(3, 7), pbVar(3, 8),
		pbBytesField(4, []byte{0xff, 0x00}), pbBytesField(5, pbStr(1, "nested")),
		pbBytesField(6, pbStr(1, "kube-apiserver-k4bnpbywdkrf4q4dm7ihqvc6xa")), pbStr(7, "\ntext"))
	out, err := StoredProtobufJSON(envelope("example.com/v1", "Thing", obj))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"kind":"Thing"`, `"apiVersion":"example.com/v1"`, `"metadata":{"name":"x"}`, `"2":"text"`,
		`"3":[7,8]`, `"4":"/wA="`, `"5":{"1":"nested"}`, `"6":{"1":"kube-apiserver-k4bnpbywdkrf4q4dm7ihqvc6xa"}`, `"7":"\ntext"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %s in\n%s", want, out)
		}
	}
	if _, err := StoredProtobufJSON([]byte(`{"kind":"ConfigMap"}`)); err == nil {
		t.Error("JSON decoded as protobuf")
	}
	if _, err := StoredProtobufJSON(envelope("v1", "ConfigMap", obj)[:20]); err == nil {
		t.Error("a cut value decoded")
	}
}
