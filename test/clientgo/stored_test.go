package clientgo

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/rvplay/rvplay/engine/api/kubeapi"
)

// storedProtobuf is what a kube-apiserver configured for protobuf storage
// (its default) writes to etcd for obj: kube's own protobuf serializer.
func storedProtobuf(t *testing.T, obj runtime.Object) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(obj, &b); err != nil {
		t.Fatal(err)
	}
	if !kubeapi.IsStoredProtobuf(b.Bytes()) {
		t.Fatalf("no k8s protobuf envelope: %q", b.Bytes())
	}
	return b.Bytes()
}

func decodedStored(t *testing.T, value []byte) map[string]any {
	t.Helper()
	out, err := kubeapi.StoredProtobufJSON(value)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return m
}

// A kind the decoder knows is shown as kube's own JSON of the object.
func TestStoredProtobufOfAKnownKindIsItsJSON(t *testing.T) {
	immutable := false
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "kube-root-ca.crt", Namespace: "default", UID: "5b1d2c3e-0000-4000-8000-000000000001",
			ResourceVersion: "42", CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 25, 23, 0, 0, 0, time.UTC)),
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"note": "a\nb"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Namespace", Name: "default", UID: "u1"}},
			Finalizers:      []string{"example.com/keep"},
		},
		Data:       map[string]string{"ca.crt": "-----BEGIN CERTIFICATE-----\n", "empty": ""},
		BinaryData: map[string][]byte{"bin": {0, 1, 2, 0xff}},
		Immutable:  &immutable,
	}
	want, err := json.Marshal(cm)
	if err != nil {
		t.Fatal(err)
	}
	var wantMap map[string]any
	json.Unmarshal(want, &wantMap)
	if got := decodedStored(t, storedProtobuf(t, cm)); !reflect.DeepEqual(got, wantMap) {
		t.Fatalf("decoded\n%v\nwant kube's JSON\n%v", got, wantMap)
	}
}

// A kind the decoder does not know (a Lease, which every kube-apiserver
// writes) shows its metadata by name and its other fields by number.
func TestStoredProtobufOfAnUnknownKindShowsFieldNumbers(t *testing.T) {
	secs := int32(3600)
	holder := "kube-apiserver-abc"
	lease := &coordinationv1.Lease{
		TypeMeta:   metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
		ObjectMeta: metav1.ObjectMeta{Name: "apiserver-abc", Namespace: "kube-system", Labels: map[string]string{"k8s.io/component": "kube-apiserver"}},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs},
	}
	got := decodedStored(t, storedProtobuf(t, lease))
	if got["apiVersion"] != "coordination.k8s.io/v1" || got["kind"] != "Lease" {
		t.Fatalf("type: %v", got)
	}
	meta, _ := got["metadata"].(map[string]any)
	if meta["name"] != "apiserver-abc" || meta["namespace"] != "kube-system" || !reflect.DeepEqual(meta["labels"], map[string]any{"k8s.io/component": "kube-apiserver"}) {
		t.Fatalf("metadata: %v", got["metadata"])
	}
	// LeaseSpec: holderIdentity = 1, leaseDurationSeconds = 2.
	if spec, _ := got["2"].(map[string]any); spec["1"] != holder || spec["2"] != float64(secs) {
		t.Fatalf("spec by field number: %v", got)
	}
}
