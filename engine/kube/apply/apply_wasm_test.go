//go:build js && wasm

package apply

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/kube/schema"
)

var (
	wasmConfigMap = schema.ForGVK("v1", "ConfigMap")
	wasmNow       = time.Date(2026, 11, 22, 1, 45, 6, 0, time.UTC)
)

func storedWithManagedFields() map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "m", "managedFields": []any{map[string]any{
			"manager": "alice", "operation": "Apply", "fieldsType": "FieldsV1", "time": "2026-11-22T01:45:06Z",
			"fieldsV1": map[string]any{"f:data": map[string]any{"f:a": map[string]any{}}}}}},
		"data": map[string]any{"a": "1"}}
}

func TestApplyInTheBrowserBuildAnswersBadRequestNamingTheSizeBudget(t *testing.T) {
	cfg := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "m"}, "data": map[string]any{"a": "1"}}
	out, err := Apply(wasmConfigMap, "v1", nil, cfg, Write{Manager: "alice", Now: wasmNow}, false)
	var be *BadRequestError
	if out != nil || !errors.As(err, &be) || be.Message != UnavailableMessage {
		t.Fatalf("got %v, %v; want a *BadRequestError with UnavailableMessage", out, err)
	}
}

func TestApplyInTheBrowserBuildStillChecksVersionAndKindFirst(t *testing.T) {
	cfg := map[string]any{"apiVersion": "v2", "kind": "ConfigMap", "metadata": map[string]any{"name": "m"}}
	_, err := Apply(wasmConfigMap, "v1", nil, cfg, Write{Manager: "alice", Now: wasmNow}, false)
	if err == nil || err.Error() != "invalid object type: /v2, Kind=ConfigMap" {
		t.Fatalf("got %v", err)
	}
}

func TestUpdateInTheBrowserBuildCarriesStoredManagedFieldsOver(t *testing.T) {
	old := storedWithManagedFields()
	upd := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "m"}, "data": map[string]any{"a": "2", "b": "1"}}
	if err := UpdateManagedFields(wasmConfigMap, "v1", old, upd, Write{Manager: "bob", Now: wasmNow.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	want := storedWithManagedFields()["metadata"].(map[string]any)["managedFields"]
	if got := upd["metadata"].(map[string]any)["managedFields"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("managedFields = %v, want the stored ones %v", got, want)
	}
}

func TestUpdateInTheBrowserBuildHonoursClientManagedFields(t *testing.T) {
	sent := []any{map[string]any{"manager": "carol", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{}}}
	upd := map[string]any{"metadata": map[string]any{"name": "m", "managedFields": sent}}
	UpdateManagedFields(wasmConfigMap, "v1", storedWithManagedFields(), upd, Write{Manager: "bob"})
	if got := upd["metadata"].(map[string]any)["managedFields"]; !reflect.DeepEqual(got, sent) {
		t.Fatalf("client-sent managedFields replaced: %v", got)
	}
	reset := map[string]any{"metadata": map[string]any{"name": "m", "managedFields": []any{}}}
	UpdateManagedFields(wasmConfigMap, "v1", storedWithManagedFields(), reset, Write{Manager: "bob"})
	if _, ok := reset["metadata"].(map[string]any)["managedFields"]; ok {
		t.Fatal("an explicit [] must clear managedFields")
	}
	status := map[string]any{"metadata": map[string]any{"name": "m", "managedFields": []any{}}}
	UpdateManagedFields(wasmConfigMap, "v1", storedWithManagedFields(), status, Write{Manager: "bob", Subresource: "status"})
	if _, ok := status["metadata"].(map[string]any)["managedFields"]; !ok {
		t.Fatal("a subresource write must keep the stored managedFields")
	}
}
