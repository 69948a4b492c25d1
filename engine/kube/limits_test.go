package kube

import (
	"fmt"
	"testing"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// The floor that decides, before the field manager runs, that a write
// cannot be stored with managedFields must never be above what is stored:
// otherwise a write kube-apiserver takes would be refused.
func TestStoredFloorIsNeverAboveWhatIsStored(t *testing.T) {
	f := newFixture(t)
	wide := map[string]any{}
	for i := 0; i < 500; i++ {
		wide[fmt.Sprintf("key-%d", i)] = fmt.Sprintf("value %d", i)
	}
	objects := map[string]struct {
		r *Resource
		o Object
	}{
		"configmap": {configmaps, cm("c", wide)},
		"labelled":  {configmaps, obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"l","labels":{"a":"1","b":"2"},"annotations":{"x":"y"}},"binaryData":{"b":"AAE="}}`)},
		"deployment": {deployments, obj(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","labels":{"app":"d"}},
			"spec":{"replicas":3,"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},
			"spec":{"containers":[{"name":"c","image":"nginx","args":["a","b"],"env":[{"name":"E","value":"v"}],"ports":[{"containerPort":80}]}]}}}}`)},
	}
	for name, c := range objects {
		_, stored, owned := measure(c.o)
		floor := stored + owned
		if _, err := f.s.Create(f.ctx, c.r, "default", c.o, WriteOptions{FieldManager: "m"}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		kv, _, err := f.s.get(f.ctx, c.r.Key("default", Name(c.o)), 0)
		if err != nil || kv == nil {
			t.Fatalf("%s: %v", name, err)
		}
		if floor > len(kv.Value) {
			t.Errorf("%s: floor %d above the %d bytes stored", name, floor, len(kv.Value))
		}
		if o, _ := decodeKV(kv); meta(o)["managedFields"] == nil {
			t.Errorf("%s: stored without managedFields", name)
		}
	}
}

// Quantities print as k8s.io/apimachinery v0.37.2's resource.Quantity
// prints NewQuantity(v, BinarySI) for bytes and NewQuantity(v, DecimalSI)
// for counts (figures recorded from it).
func TestQuantitiesPrintAsResourceQuantity(t *testing.T) {
	for _, c := range []struct {
		v               int64
		binary, decimal string
	}{
		{0, "0", "0"}, {999, "999", "999"}, {1000, "1k", "1k"}, {1023, "1023", "1023"},
		{1024, "1Ki", "1024"}, {1536, "1536", "1536"}, {1000000, "1000000", "1M"}, {1500000, "1500000", "1500k"},
		{67108864, "64Mi", "67108864"}, {4294967296, "4Gi", "4294967296"}, {100000, "100000", "100k"},
	} {
		if b, d := quantity(c.v, true), quantity(c.v, false); b != c.binary || d != c.decimal {
			t.Errorf("%d: %q and %q, want %q and %q", c.v, b, d, c.binary, c.decimal)
		}
	}
}

func TestQuotaRefusalsAreWordedAsResourceQuotaAdmission(t *testing.T) {
	for _, c := range []struct {
		err  *mvcc.QuotaError
		want string
	}{
		{&mvcc.QuotaError{Quota: mvcc.QuotaBackendBytes, Requested: 1236, Used: 67000000, Limit: 64 << 20},
			`configmaps "x" is forbidden: exceeded quota: quota-backend-bytes, requested: storage=1236, used: storage=67000000, limited: storage=64Mi`},
		{&mvcc.QuotaError{Quota: mvcc.QuotaKeys, Requested: 1, Used: 100000, Limit: 100000},
			`configmaps "x" is forbidden: exceeded quota: max-keys-per-session, requested: count/keys=1, used: count/keys=100k, limited: count/keys=100k`},
		{&mvcc.QuotaError{Quota: mvcc.QuotaMemory, Requested: 452, Used: 4 << 30, Limit: 4 << 30},
			`configmaps "x" is forbidden: exceeded quota: memory-budget, requested: memory=452, used: memory=4Gi, limited: memory=4Gi`},
	} {
		err := quotaExceeded(configmaps, "x", c.err)
		se, ok := err.(*StatusError)
		if !ok || se.Status.Message != c.want || se.Code() != 403 || se.Status.Reason != ReasonForbidden ||
			se.Status.Details.Name != "x" || se.Status.Details.Kind != "configmaps" || se.Status.Details.Group != "" {
			t.Errorf("got %#v\nwant message %s", err, c.want)
		}
	}
	if err := quotaExceeded(configmaps, "x", mvcc.ErrCompacted); err != mvcc.ErrCompacted {
		t.Errorf("another error changed: %v", err)
	}
}
