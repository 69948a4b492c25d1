package apply

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
)

// managerKey identifies an entry the way kube does: the JSON of the entry
// without fields and time; appliers are keyed without apiVersion, so an
// applier keeps one entry across versions. Sorting keys sorts by manager name.
func managerKey(manager, operation, apiVersion, subresource string) string {
	var b strings.Builder
	b.WriteString(`{"manager":`)
	b.WriteString(strconv.Quote(manager))
	b.WriteString(`,"operation":`)
	b.WriteString(strconv.Quote(operation))
	if apiVersion != "" && operation != OperationApply {
		b.WriteString(`,"apiVersion":`)
		b.WriteString(strconv.Quote(apiVersion))
	}
	if subresource != "" {
		b.WriteString(`,"subresource":`)
		b.WriteString(strconv.Quote(subresource))
	}
	b.WriteByte('}')
	return b.String()
}

type keyParts struct {
	Manager     string `json:"manager"`
	Operation   string `json:"operation"`
	APIVersion  string `json:"apiVersion"`
	Subresource string `json:"subresource"`
}

// parseKey decodes a manager key. Every write parses the keys of all its
// entries (decoding and encoding managedFields), and there are few distinct
// keys, so parsed keys are remembered (a bounded memo, emptied when full).
func parseKey(k string) (keyParts, error) {
	parsedKeys.Lock()
	p, ok := parsedKeys.m[k]
	parsedKeys.Unlock()
	if ok {
		return p, nil
	}
	if err := json.Unmarshal([]byte(k), &p); err != nil {
		return keyParts{}, err
	}
	parsedKeys.Lock()
	if parsedKeys.m == nil || len(parsedKeys.m) >= maxParsedKeys {
		parsedKeys.m = map[string]keyParts{}
	}
	parsedKeys.m[k] = p
	parsedKeys.Unlock()
	return p, nil
}

const maxParsedKeys = 4096

var parsedKeys struct {
	sync.Mutex
	m map[string]keyParts
}

// printManager renders a manager key as kube's conflict messages do.
func printManager(key string) string {
	p, err := parseKey(key)
	if err != nil {
		return strconv.Quote(key)
	}
	s := strconv.Quote(p.Manager)
	if p.Subresource != "" {
		s += " with subresource " + strconv.Quote(p.Subresource)
	}
	if p.Operation == OperationUpdate {
		s += " using " + p.APIVersion
	}
	return s
}

// managedFieldsEntry is one entry of metadata.managedFields.
type managedFieldsEntry struct {
	Manager     string
	Operation   string
	APIVersion  string
	Time        string
	FieldsType  string
	FieldsV1    any
	Subresource string
}

func (e managedFieldsEntry) toMap() map[string]any {
	m := map[string]any{"manager": e.Manager, "operation": e.Operation, "fieldsType": e.FieldsType, "fieldsV1": e.FieldsV1}
	if e.APIVersion != "" {
		m["apiVersion"] = e.APIVersion
	}
	if e.Time != "" {
		m["time"] = e.Time
	}
	if e.Subresource != "" {
		m["subresource"] = e.Subresource
	}
	return m
}

const ancientChanges = "ancient-changes"
