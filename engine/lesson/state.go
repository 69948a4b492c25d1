package lesson

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/rvplay/rvplay/engine/kube/schema"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// State is what a predicate is evaluated against: the session's store,
// the record of exchanges (oldest first) and where the step began in it.
// Exchange predicates and misconceptions count only exchanges with a Seq
// above Since (made after the learner entered the step); rules that look
// back ("from the list's resourceVersion") see the whole record.
type State struct {
	Store     mvcc.ReadView
	Exchanges []Exchange
	Since     int64
}

// inScope reports whether Exchanges[i] may satisfy a predicate.
func (st *State) inScope(i int) bool { return st.Exchanges[i].Seq > st.Since }

// OfPrincipal returns the exchanges of record sent by principal ("" =
// everyone's): a student's verify looks at their own requests only.
func OfPrincipal(record []Exchange, principal string) []Exchange {
	if principal == "" {
		return record
	}
	out := make([]Exchange, 0, len(record))
	for _, e := range record {
		if e.Principal == principal {
			out = append(out, e)
		}
	}
	return out
}

// maxHistoryScan bounds how many revisions "recreated" looks back.
const maxHistoryScan = 100000

func (k *KeyCheck) eval(st *State) (bool, error) {
	kv, err := readKey(st.Store, k.Key, 0)
	if err != nil {
		return false, err
	}
	if k.Exists != nil && (kv != nil) != *k.Exists {
		return false, nil
	}
	if kv == nil {
		return k.Value == nil && k.Version == nil && k.MinVersion == 0 && (k.Recreated == nil || !*k.Recreated), nil
	}
	if k.Value != nil && string(kv.Value) != *k.Value {
		return false, nil
	}
	if k.Version != nil && kv.Version != *k.Version {
		return false, nil
	}
	if kv.Version < k.MinVersion {
		return false, nil
	}
	if k.Recreated != nil {
		existed := false
		floor := st.Store.CompactRev()
		for rev := kv.CreateRevision - 1; rev > floor && rev > 0 && kv.CreateRevision-rev <= maxHistoryScan; rev-- {
			old, err := readKey(st.Store, k.Key, rev)
			if err != nil {
				return false, err
			}
			if old != nil {
				existed = true
				break
			}
		}
		if existed != *k.Recreated {
			return false, nil
		}
	}
	return true, nil
}

// readKey reads key at rev (0: now); nil if it does not exist then.
func readKey(s mvcc.ReadView, key string, rev int64) (*mvcc.KeyValue, error) {
	resp, err := s.Range(context.Background(), &mvcc.RangeRequest{Key: []byte(key), Revision: rev})
	if err != nil {
		return nil, err
	}
	if len(resp.Kvs) == 0 {
		return nil, nil
	}
	return resp.Kvs[0], nil
}

// readPastRevision: an etcd range at a revision below the store's revision
// at the time, at which its key existed (checked in the store unless that
// revision has been compacted since; then the range's answer counts).
func readPastRevision(st *State, e *Exchange) bool {
	if e.Verb() != "range" || e.Revision <= 0 || e.Status != 200 || e.Key == "" {
		return false
	}
	if head := parseRV(e.ResourceVersion); head > 0 && e.Revision >= head {
		return false
	}
	if e.Revision <= st.Store.CompactRev() {
		return true // it was answered, so it was readable then
	}
	if e.RangeEnd != "" {
		resp, err := st.Store.Range(context.Background(), &mvcc.RangeRequest{Key: []byte(e.Key), RangeEnd: []byte(e.RangeEnd), Revision: e.Revision, CountOnly: true})
		return err == nil && resp.Count > 0
	}
	kv, err := readKey(st.Store, e.Key, e.Revision)
	return err == nil && kv != nil
}

// rangeFound: an etcd range found a key at the revision it read (its
// "revision", else the store's revision it answered with).
func rangeFound(st *State, e *Exchange) bool {
	if e.Verb() != "range" || e.Status != 200 || e.Key == "" {
		return false
	}
	rev := e.Revision
	if rev <= 0 {
		rev = parseRV(e.ResourceVersion)
	}
	if rev <= 0 || rev <= st.Store.CompactRev() {
		return false // cannot be told any more
	}
	resp, err := st.Store.Range(context.Background(), &mvcc.RangeRequest{Key: []byte(e.Key), RangeEnd: []byte(e.RangeEnd), Revision: rev, CountOnly: true})
	return err == nil && resp.Count > 0
}

// ObjectKey is the etcd key kube-apiserver stores an object under.
func ObjectKey(resource, namespace, name string) string {
	if namespace == "" {
		return "/registry/" + resource + "/" + name
	}
	return "/registry/" + resource + "/" + namespace + "/" + name
}

func (o *ObjectCheck) eval(st *State) (bool, error) {
	kv, err := readKey(st.Store, ObjectKey(o.Resource, o.Namespace, o.Name), 0)
	if err != nil {
		return false, err
	}
	if o.Exists != nil && (kv != nil) != *o.Exists {
		return false, nil
	}
	if kv == nil {
		return len(o.Fields) == 0 && len(o.Same) == 0 && len(o.Differ) == 0 && o.FieldManager == "", nil
	}
	var obj map[string]any
	if err := json.Unmarshal(kv.Value, &obj); err != nil {
		return false, nil // not a JSON object: no field can match
	}
	if meta, ok := obj["metadata"].(map[string]any); ok {
		meta["resourceVersion"] = formatRV(kv.ModRevision)
	}
	for path, want := range o.Fields {
		got, ok := field(obj, path)
		if want == nil {
			if ok {
				return false, nil
			}
			continue
		}
		if !ok || !schema.JSONEqual(got, want) {
			return false, nil
		}
	}
	for _, pair := range o.Same {
		a, okA := field(obj, pair[0])
		b, okB := field(obj, pair[1])
		if okA != okB || !schema.JSONEqual(a, b) {
			return false, nil
		}
	}
	for _, pair := range o.Differ {
		a, okA := field(obj, pair[0])
		b, okB := field(obj, pair[1])
		if okA == okB && schema.JSONEqual(a, b) {
			return false, nil
		}
	}
	if o.FieldManager != "" && !managesField(obj, o.FieldManager, o.ManagesField) {
		return false, nil
	}
	return true, nil
}

// field reads a dotted path ("spec.replicas"); a segment in brackets
// names a map key containing dots ("metadata.annotations[deployment.kubernetes.io/revision]").
func field(obj map[string]any, path string) (any, bool) {
	var cur any = obj
	for _, seg := range splitPath(path) {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = m[seg]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

func splitPath(path string) []string {
	var out []string
	for path != "" {
		if path[0] == '[' {
			end := strings.IndexByte(path, ']')
			if end < 0 {
				return append(out, path)
			}
			out = append(out, path[1:end])
			path = strings.TrimPrefix(path[end+1:], ".")
			continue
		}
		i := strings.IndexAny(path, ".[")
		if i < 0 {
			return append(out, path)
		}
		out = append(out, path[:i])
		path = strings.TrimPrefix(path[i:], ".")
	}
	return out
}

// managesField: a managedFields entry of manager has f:<seg>... for path.
func managesField(obj map[string]any, manager, path string) bool {
	meta, _ := obj["metadata"].(map[string]any)
	entries, _ := meta["managedFields"].([]any)
	for _, e := range entries {
		m, _ := e.(map[string]any)
		if m["manager"] != manager {
			continue
		}
		var cur any = m["fieldsV1"]
		ok := true
		for _, seg := range splitPath(path) {
			mm, isMap := cur.(map[string]any)
			if !isMap {
				ok = false
				break
			}
			if cur, ok = mm["f:"+seg]; !ok {
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func formatRV(rev int64) string { return strconv.FormatInt(rev, 10) }
