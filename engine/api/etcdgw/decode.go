package etcdgw

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// The decoder follows golang/protobuf 1.3's jsonpb.Unmarshaler, which etcd
// 3.4's gateway uses with AllowUnknownFields, step for step, because its
// quirks are visible to clients: the message is first split into a
// map[string]json.RawMessage (so the last of duplicate names wins and a
// non-object fails with encoding/json's "cannot unmarshal array into Go value
// of type map[string]json.RawMessage"); fields are then taken in proto
// declaration order, under the proto name or the lowerCamel JSON name (the
// camel one wins when both are present), oneof members after the plain
// fields; each value goes through encoding/json, so the error texts are
// encoding/json's own.

// field is one proto field of a message: its names and how to decode a value.
type field struct {
	name, camel string
	decode      func(raw []byte) error
}

// decodeMessage decodes a JSON object into the fields, then the oneof members.
func decodeMessage(raw []byte, fields []field, oneofs []field) error {
	return decodeMessageIn(raw, nil, where{}, fields, oneofs)
}

// decodeMessageIn is decodeMessage for a message at w in a txn body.
func decodeMessageIn(raw []byte, sp *spanned, w where, fields []field, oneofs []field) error {
	var buf [16]member
	ms, ok := splitObject(raw, buf[:0], sp, w)
	if !ok || referenceOnly {
		return decodeMessageReference(raw, fields, oneofs)
	}
	for _, fs := range [2][]field{fields, oneofs} {
		for i := range fs {
			if v, ok := lookup(ms, &fs[i]); ok {
				if err := fs[i].decode(v); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// referenceOnly turns the scanner off, for the tests that compare it with
// the reference path.
var referenceOnly bool

// decodeMessageReference is jsonpb's way, through encoding/json: the
// reference for decodeMessage's fast path, and the path for whatever the
// scanner leaves to it.
func decodeMessageReference(raw []byte, fields []field, oneofs []field) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return err
	}
	take := func(f *field) ([]byte, bool) {
		vName, okName := m[f.name]
		vCamel, okCamel := m[f.camel]
		if !okName && !okCamel {
			return nil, false
		}
		var v []byte
		if okName {
			v = vName
			delete(m, f.name)
		}
		if okCamel {
			v = vCamel
			delete(m, f.camel)
		}
		return v, true
	}
	for i := range fields {
		if v, ok := take(&fields[i]); ok {
			if err := fields[i].decode(v); err != nil {
				return err
			}
		}
	}
	if len(m) > 0 {
		for i := range oneofs {
			if v, ok := take(&oneofs[i]); ok {
				if err := oneofs[i].decode(v); err != nil {
					return err
				}
			}
		}
	}
	// Whatever is left is an unknown field, which etcd's gateway ignores.
	return nil
}

func bytesInto(dst *[]byte) func([]byte) error {
	return func(raw []byte) error {
		if b, ok := plainBytes(raw); ok && !referenceOnly {
			*dst = b
			return nil
		}
		var b []byte
		if err := json.Unmarshal(raw, &b); err != nil {
			return err
		}
		*dst = b
		return nil
	}
}

// int64Into accepts a JSON number or a JSON string holding one; jsonpb
// simply drops the quotes, so "1e2" fails like 1e2 does.
func int64Into(dst *int64) func([]byte) error {
	return func(raw []byte) error {
		if len(raw) >= 2 && raw[0] == '"' {
			raw = raw[1 : len(raw)-1]
		}
		if v, ok := plainInt64(raw); ok && !referenceOnly {
			*dst = v
			return nil
		}
		var v int64
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		if !bytes.Equal(raw, []byte("null")) {
			*dst = v
		}
		return nil
	}
}

func boolInto(dst *bool) func([]byte) error {
	return func(raw []byte) error {
		switch s := string(raw); {
		case referenceOnly:
		case s == "true":
			*dst = true
			return nil
		case s == "false":
			*dst = false
			return nil
		case s == "null":
			return nil
		}
		var v bool
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		if !bytes.Equal(raw, []byte("null")) {
			*dst = v
		}
		return nil
	}
}

// enum is a proto enum: its fully qualified Go type name (as etcd's
// generated code names it, which appears in error messages) and values.
type enum struct {
	goName string
	values map[string]int32
}

var (
	sortOrderEnum = &enum{"etcdserverpb.RangeRequest_SortOrder",
		map[string]int32{"NONE": 0, "ASCEND": 1, "DESCEND": 2}}
	sortTargetEnum = &enum{"etcdserverpb.RangeRequest_SortTarget",
		map[string]int32{"KEY": 0, "VERSION": 1, "CREATE": 2, "MOD": 3, "VALUE": 4}}
	compareResultEnum = &enum{"etcdserverpb.Compare_CompareResult",
		map[string]int32{"EQUAL": 0, "GREATER": 1, "LESS": 2, "NOT_EQUAL": 3}}
	compareTargetEnum = &enum{"etcdserverpb.Compare_CompareTarget",
		map[string]int32{"VERSION": 0, "CREATE": 1, "MOD": 2, "VALUE": 3, "LEASE": 4}}
	filterTypeEnum = &enum{"etcdserverpb.WatchCreateRequest_FilterType",
		map[string]int32{"NOPUT": 0, "NODELETE": 1}}
)

// decode reads an enum given by name (a JSON string, taken verbatim without
// unescaping, as jsonpb does) or by number (any int32, even one without a
// name: etcd 3.4 accepts sort_order 7).
func (e *enum) decode(raw []byte, dst *int32) error {
	if len(raw) >= 2 && raw[0] == '"' {
		s := raw[1 : len(raw)-1]
		n, ok := e.values[string(s)]
		if !ok {
			return fmt.Errorf("unknown value %q for enum %s", s, e.goName)
		}
		*dst = n
		return nil
	}
	var v int32
	if err := json.Unmarshal(raw, &v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return errors.New("json: cannot unmarshal " + te.Value + " into Go value of type " + e.goName)
		}
		return err
	}
	if !bytes.Equal(raw, []byte("null")) {
		*dst = v
	}
	return nil
}

func (e *enum) into(dst *int32) func([]byte) error {
	return func(raw []byte) error { return e.decode(raw, dst) }
}

// errNilElement answers a null inside a repeated message field. etcd 3.4's
// gateway panics on it while marshalling the gRPC request (net/http then drops
// the connection without an answer); this differs from etcd: we answer an
// InvalidArgument error, since a transport-neutral handler cannot drop a
// connection and must never panic.
func errNilElement(goField string) error {
	return fmt.Errorf("proto: repeated field %s has nil element", goField)
}

// repeatedMessages decodes a JSON array whose elements are messages, at w
// in a txn body. fits learns the number of elements first; when it answers
// false none is decoded.
func repeatedMessages(raw []byte, sp *spanned, w where, goField string, fits func(n int) bool, each func(raw []byte) error) error {
	var buf [8][]byte
	elems, ok := splitArray(raw, buf[:0], sp, w)
	if !ok || referenceOnly {
		var ref []json.RawMessage
		if err := json.Unmarshal(raw, &ref); err != nil {
			return err
		}
		elems = elems[:0]
		for _, e := range ref {
			elems = append(elems, e)
		}
	}
	if !fits(len(elems)) {
		return nil
	}
	for _, e := range elems {
		if bytes.Equal(e, []byte("null")) {
			return errNilElement(goField)
		}
		if err := each(e); err != nil {
			return err
		}
	}
	return nil
}

// isNull reports a JSON null, which for a message field means "not set".
func isNull(raw []byte) bool { return bytes.Equal(raw, []byte("null")) }

// decodeBody reads the first JSON value of body into a message with fn. An
// empty body is an empty message (grpc-gateway ignores io.EOF); anything
// after the first value is ignored, as the gateway's json.Decoder does.
func decodeBody(body []byte, fn func(raw []byte) error) error {
	return decodeBodyIn(body, nil, where{}, fn)
}

func decodeBodyIn(body []byte, sp *spanned, w where, fn func(raw []byte) error) error {
	if start, end, empty, ok := firstValue(body, sp, w); ok && !referenceOnly {
		if empty {
			return nil
		}
		return fn(body[start:end])
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if err == io.EOF {
			return nil
		}
		return err
	}
	return fn(raw)
}

func decodeRange(raw []byte, r *mvcc.RangeRequest) error {
	return decodeMessage(raw, []field{
		{"key", "key", bytesInto(&r.Key)},
		{"range_end", "rangeEnd", bytesInto(&r.RangeEnd)},
		{"limit", "limit", int64Into(&r.Limit)},
		{"revision", "revision", int64Into(&r.Revision)},
		{"sort_order", "sortOrder", sortOrderEnum.into((*int32)(&r.SortOrder))},
		{"sort_target", "sortTarget", sortTargetEnum.into((*int32)(&r.SortTarget))},
		{"serializable", "serializable", boolInto(&r.Serializable)},
		{"keys_only", "keysOnly", boolInto(&r.KeysOnly)},
		{"count_only", "countOnly", boolInto(&r.CountOnly)},
		{"min_mod_revision", "minModRevision", int64Into(&r.MinModRevision)},
		{"max_mod_revision", "maxModRevision", int64Into(&r.MaxModRevision)},
		{"min_create_revision", "minCreateRevision", int64Into(&r.MinCreateRevision)},
		{"max_create_revision", "maxCreateRevision", int64Into(&r.MaxCreateRevision)},
	}, nil)
}

func decodePut(raw []byte, r *mvcc.PutRequest) error {
	return decodeMessage(raw, []field{
		{"key", "key", bytesInto(&r.Key)},
		{"value", "value", bytesInto(&r.Value)},
		{"lease", "lease", int64Into(&r.Lease)},
		{"prev_kv", "prevKv", boolInto(&r.PrevKv)},
		{"ignore_value", "ignoreValue", boolInto(&r.IgnoreValue)},
		{"ignore_lease", "ignoreLease", boolInto(&r.IgnoreLease)},
	}, nil)
}

func decodeDeleteRange(raw []byte, r *mvcc.DeleteRangeRequest) error {
	return decodeMessage(raw, []field{
		{"key", "key", bytesInto(&r.Key)},
		{"range_end", "rangeEnd", bytesInto(&r.RangeEnd)},
		{"prev_kv", "prevKv", boolInto(&r.PrevKv)},
	}, nil)
}

func decodeCompaction(raw []byte, r *mvcc.CompactionRequest) error {
	return decodeMessage(raw, []field{
		{"revision", "revision", int64Into(&r.Revision)},
		{"physical", "physical", boolInto(&r.Physical)},
	}, nil)
}

// decodeRequestOp decodes the oneof RequestOp. A member given as null leaves
// the op empty, which etcd then refuses with "etcdserver: key not found".
// budget is as for txn.
func (d txnDecoder) decodeRequestOp(raw []byte, op *mvcc.RequestOp, nesting uint8, budget int) error {
	sp := d.sp.of(raw)
	return decodeMessageIn(raw, sp.track(), where{opShape, nesting}, nil, []field{
		{"request_range", "requestRange", func(v []byte) error {
			*op = mvcc.RequestOp{}
			if isNull(v) {
				return nil
			}
			op.Range = &mvcc.RangeRequest{}
			return decodeRange(v, op.Range)
		}},
		{"request_put", "requestPut", func(v []byte) error {
			*op = mvcc.RequestOp{}
			if isNull(v) {
				return nil
			}
			op.Put = &mvcc.PutRequest{}
			return decodePut(v, op.Put)
		}},
		{"request_delete_range", "requestDeleteRange", func(v []byte) error {
			*op = mvcc.RequestOp{}
			if isNull(v) {
				return nil
			}
			op.DeleteRange = &mvcc.DeleteRangeRequest{}
			return decodeDeleteRange(v, op.DeleteRange)
		}},
		{"request_txn", "requestTxn", func(v []byte) error {
			*op = mvcc.RequestOp{}
			if isNull(v) {
				return nil
			}
			op.Txn = &mvcc.TxnRequest{}
			return d.decodeTxn(v, op.Txn, nesting+1, budget)
		}},
	})
}

func decodeCompare(raw []byte, c *mvcc.Compare) error {
	return decodeMessage(raw, []field{
		{"result", "result", compareResultEnum.into((*int32)(&c.Result))},
		{"target", "target", compareTargetEnum.into((*int32)(&c.Target))},
		{"key", "key", bytesInto(&c.Key)},
		{"range_end", "rangeEnd", bytesInto(&c.RangeEnd)},
	}, []field{
		{"version", "version", int64Into(&c.Version)},
		{"create_revision", "createRevision", int64Into(&c.CreateRevision)},
		{"mod_revision", "modRevision", int64Into(&c.ModRevision)},
		{"value", "value", bytesInto(&c.Value)},
		{"lease", "lease", int64Into(&c.Lease)},
	})
}

// A txn's op budget is etcd's --max-txn-ops: no list of a txn may be
// longer than it, and a nested txn gets what its parent's longest list
// leaves (checkTxn). etcd decodes the whole request before it checks this;
// decoding follows the budget as it goes, so that a body of thousands of
// nested txns, or of one list of thousands of ops, costs what the first
// 128 of them cost rather than all of them (issue 10). A list that is
// certainly over budget is not decoded: it is replaced by one of the
// over-budget lists, longer than the budget, so that CheckTxn refuses the
// txn holding it exactly where etcd's check would. This differs from etcd
// in one way: a decoding error further inside such a list, or a message
// size over the gRPC limit (which etcd checks first), is not reported; the
// op count error is.

// txnDecoder decodes a txn body: its spans let the split of a nested txn
// jump over what the split of its parent already scanned.
type txnDecoder struct {
	sp     *spans
	maxOps int
}

// overBudgetOps and overBudgetCompares stand for a list that was not
// decoded: one longer than any list the budget admits.
func (d txnDecoder) overBudgetOps() []mvcc.RequestOp { return make([]mvcc.RequestOp, d.maxOps+1) }
func (d txnDecoder) overBudgetCompares() []mvcc.Compare {
	return make([]mvcc.Compare, d.maxOps+1)
}

// decodeTxnBody decodes a whole /v3/kv/txn body into t, with maxOps the
// store's --max-txn-ops.
func decodeTxnBody(body []byte, t *mvcc.TxnRequest, maxOps int) error {
	d := txnDecoder{maxOps: maxOps}
	if len(body) >= minSpannedBody {
		d.sp = &spans{body: body}
	}
	sp := d.sp.of(body)
	return decodeBodyIn(body, sp.track(), where{txnShape, 0}, func(raw []byte) error {
		return d.decodeTxn(raw, t, 0, maxOps)
	})
}

// decodeTxn decodes a txn nested nesting levels deep whose op budget is at
// most budget.
func (d txnDecoder) decodeTxn(raw []byte, t *mvcc.TxnRequest, nesting uint8, budget int) error {
	if budget < 0 {
		// Its parent's lists left it no budget: any txn here is refused.
		*t = mvcc.TxnRequest{Success: d.overBudgetOps()}
		return nil
	}
	opc := 0 // the longest list so far: the txn's op count is at least that
	fits := func(n int) bool {
		opc = max(opc, n)
		return n <= budget
	}
	ops := func(v []byte, goField string, dst *[]mvcc.RequestOp) error {
		*dst = nil
		sp := d.sp.of(v)
		return repeatedMessages(v, sp.track(), where{opListShape, nesting}, goField, func(n int) bool {
			if !fits(n) {
				*dst = d.overBudgetOps()
				return false
			}
			return true
		}, func(v []byte) error {
			*dst = append(*dst, mvcc.RequestOp{})
			// A nested txn may use what the longest list leaves.
			return d.decodeRequestOp(v, &(*dst)[len(*dst)-1], nesting, budget-opc)
		})
	}
	sp := d.sp.of(raw)
	return decodeMessageIn(raw, sp.track(), where{txnShape, nesting}, []field{
		{"compare", "compare", func(v []byte) error {
			t.Compare = nil
			sp := d.sp.of(v)
			return repeatedMessages(v, sp.track(), where{compareListShape, nesting}, "Compare", func(n int) bool {
				if !fits(n) {
					t.Compare = d.overBudgetCompares()
					return false
				}
				return true
			}, func(e []byte) error {
				t.Compare = append(t.Compare, mvcc.Compare{})
				return decodeCompare(e, &t.Compare[len(t.Compare)-1])
			})
		}},
		{"success", "success", func(v []byte) error { return ops(v, "Success", &t.Success) }},
		{"failure", "failure", func(v []byte) error { return ops(v, "Failure", &t.Failure) }},
	}, nil)
}

// watchRequest is etcdserverpb.WatchRequest: exactly one of the three is set
// (or none, which etcd ignores).
type watchRequest struct {
	create   *WatchCreate
	cancel   *int64
	progress bool
}

func decodeWatchRequest(raw []byte, w *watchRequest) error {
	return decodeMessage(raw, nil, []field{
		{"create_request", "createRequest", func(v []byte) error {
			*w = watchRequest{}
			if isNull(v) {
				return nil
			}
			w.create = &WatchCreate{}
			return decodeWatchCreate(v, w.create)
		}},
		{"cancel_request", "cancelRequest", func(v []byte) error {
			*w = watchRequest{}
			if isNull(v) {
				return nil
			}
			w.cancel = new(int64)
			return decodeMessage(v, []field{{"watch_id", "watchId", int64Into(w.cancel)}}, nil)
		}},
		{"progress_request", "progressRequest", func(v []byte) error {
			*w = watchRequest{}
			if isNull(v) {
				return nil
			}
			w.progress = true
			return decodeMessage(v, nil, nil)
		}},
	})
}

func decodeWatchCreate(raw []byte, c *WatchCreate) error {
	return decodeMessage(raw, []field{
		{"key", "key", bytesInto(&c.Key)},
		{"range_end", "rangeEnd", bytesInto(&c.RangeEnd)},
		{"start_revision", "startRevision", int64Into(&c.StartRevision)},
		{"progress_notify", "progressNotify", boolInto(&c.ProgressNotify)},
		{"filters", "filters", func(v []byte) error {
			// A repeated enum: each element is decoded like a single enum,
			// so a null element is the zero value (NOPUT).
			var elems []json.RawMessage
			if err := json.Unmarshal(v, &elems); err != nil {
				return err
			}
			c.Filters = nil
			for _, e := range elems {
				var n int32
				if err := filterTypeEnum.decode(e, &n); err != nil {
					return err
				}
				c.Filters = append(c.Filters, mvcc.WatchFilter(n))
			}
			return nil
		}},
		{"prev_kv", "prevKv", boolInto(&c.PrevKv)},
		{"watch_id", "watchId", int64Into(&c.WatchID)},
		{"fragment", "fragment", boolInto(&c.Fragment)},
	}, nil)
}

// decodeEmpty decodes a message without fields (StatusRequest): only its
// shape is checked.
func decodeEmpty(raw []byte) error { return decodeMessage(raw, nil, nil) }
