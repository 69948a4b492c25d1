// Package etcddiff proves rvplay's etcd v3 JSON gateway equal to a real
// etcd's: a seeded generator produces random sequences of gateway requests
// (puts, deletes, ranges, txns, compactions and watches), a runner sends each
// request to every target in lockstep over real HTTP, and every answer is
// compared with the reference etcd's as JSON values, apart from the header
// fields that only a raft cluster has (cluster_id, member_id, raft_term).
//
// It is test tooling; product code must not import it.
package etcddiff

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strconv"
)

// OpKind names one kind of step in a sequence.
type OpKind string

const (
	OpRange       OpKind = "range"
	OpPut         OpKind = "put"
	OpDeleteRange OpKind = "deleterange"
	OpTxn         OpKind = "txn"
	OpCompact     OpKind = "compaction"
	OpWatchOpen   OpKind = "watch-open"
	OpWatchDrain  OpKind = "watch-drain"
)

// paths of the gateway endpoints, relative to a target's base URL.
var opPath = map[OpKind]string{
	OpRange:       "/v3/kv/range",
	OpPut:         "/v3/kv/put",
	OpDeleteRange: "/v3/kv/deleterange",
	OpTxn:         "/v3/kv/txn",
	OpCompact:     "/v3/kv/compaction",
	OpWatchOpen:   "/v3/watch",
}

// Op is one step: a gateway request, or for OpWatchDrain the instruction
// to read a watch until it has delivered its fence.
type Op struct {
	Index int
	Kind  OpKind
	Body  map[string]any
	// RawBody, when set, is sent instead of Body: malformed requests.
	RawBody []byte
	// Watch is the local handle of the watch an OpWatchOpen creates or an
	// OpWatchDrain reads.
	Watch *WatchSpec
}

// Path is the gateway path of the request.
func (o *Op) Path() string { return opPath[o.Kind] }

// WatchSpec is what the generator knows about a watch it opened.
type WatchSpec struct {
	ID     int
	Key    string // raw key bytes
	NoPut  bool
	NoDel  bool
	Start  int64
	Closes int // op index at which the watch is drained and closed
	// Compacted is set when the watch starts below the compacted revision:
	// etcd cancels it with compact_revision instead of delivering events.
	Compacted bool
	// Empty is set when key >= range_end: etcd refuses the watch at once.
	Empty bool
	// FenceRev is filled when the drain is queued: the revision of the last
	// fence write the watch must deliver (by its filters).
	FenceRev int64
}

// State is what the generator learns from the reference target's answers.
type State struct {
	Rev        int64 // current store revision (header.revision)
	CompactRev int64 // last successful compaction, -1 if none
	// LastDeleteRev is the revision of the last deleterange that deleted
	// something: compacting there leaves a tombstone at the boundary.
	LastDeleteRev int64
}

// keys is the small key space: prefixes of one another, so that prefix
// ranges, compares and history interact.
var keys = []string{"a", "a/1", "a/2", "ab", "b", "b/1", "c", "d\xff"}

// extraKeys are read or compared but rarely written: missing keys.
var extraKeys = []string{"zz", "a/3", "\xff"}

var values = []string{"", "0", "1", "2", "x", "yy", "zzz", "v"}

// Generator produces a deterministic op sequence from a seed and the
// reference's answers (only revisions flow back from the answers, and the
// reference is deterministic, so the sequence is a function of the seed).
type Generator struct {
	rng     *rand.Rand
	n       int // ops produced
	total   int
	st      State
	watches []*WatchSpec
	nextID  int
	queue   []*Op
	// hints remembers the last seen metadata of keys, so that compares
	// sometimes hit the exact current value and succeed.
	hints map[string]hint
}

type hint struct{ create, mod, version int64 }

// NewGenerator returns a generator of total ops for seed.
func NewGenerator(seed uint64, total int) *Generator {
	return &Generator{
		rng:   rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		total: total,
		st:    State{Rev: 1, CompactRev: -1},
		hints: map[string]hint{},
	}
}

// State returns what the generator currently believes.
func (g *Generator) State() State { return g.st }

// Done reports whether the sequence is complete (every watch drained).
func (g *Generator) Done() bool {
	return g.n >= g.total && len(g.queue) == 0 && len(g.watches) == 0
}

// Next returns the next op.
func (g *Generator) Next() *Op {
	op := g.next()
	op.Index = g.n
	g.n++
	return op
}

func (g *Generator) next() *Op {
	if len(g.queue) > 0 {
		op := g.queue[0]
		g.queue = g.queue[1:]
		return op
	}
	// Close a watch that is due (or all of them at the end).
	for i, w := range g.watches {
		if g.n >= w.Closes || g.n >= g.total {
			g.watches = append(g.watches[:i], g.watches[i+1:]...)
			return g.closeWatch(w)
		}
	}
	r := g.rng.IntN(100)
	switch {
	case r < 24:
		return g.genRange()
	case r < 46:
		return g.genPut()
	case r < 56:
		return g.genDelete()
	case r < 90:
		return &Op{Kind: OpTxn, Body: safeTxn(g.genTxn(0))}
	case r < 95:
		// Compactions only while no watch is open: whether etcd cancels an
		// unsynced watcher depends on timing, which is not deterministic.
		if len(g.watches) == 0 {
			return g.genCompact()
		}
		return g.genRange()
	case r < 98 && len(g.watches) < 3:
		return g.genWatchOpen()
	case r < 99:
		return g.genBad()
	default:
		return g.genRange()
	}
}

// Observe feeds the reference's answer to op back: status and parsed body.
func (g *Generator) Observe(op *Op, status int, body any) {
	m, _ := body.(map[string]any)
	if status != 200 || m == nil {
		return
	}
	if op.Kind == OpWatchOpen || op.Kind == OpWatchDrain {
		return
	}
	if h, ok := m["header"].(map[string]any); ok {
		if rev, err := strconv.ParseInt(str(h["revision"]), 10, 64); err == nil && rev > 0 {
			g.st.Rev = rev
		}
	}
	if op.Kind == OpCompact {
		g.st.CompactRev = asInt(op.Body["revision"])
	}
	if op.Kind == OpDeleteRange && asInt(m["deleted"]) > 0 {
		g.st.LastDeleteRev = g.st.Rev
	}
	g.learnKVs(m)
}

// learnKVs records key metadata from any kvs/prev_kv found in an answer.
func (g *Generator) learnKVs(v any) {
	switch x := v.(type) {
	case map[string]any:
		if k, ok := x["key"].(string); ok {
			if _, hasMod := x["mod_revision"]; hasMod {
				kb, _ := base64.StdEncoding.DecodeString(k)
				g.hints[string(kb)] = hint{
					create:  asInt(x["create_revision"]),
					mod:     asInt(x["mod_revision"]),
					version: asInt(x["version"]),
				}
			}
		}
		for _, c := range x {
			g.learnKVs(c)
		}
	case []any:
		for _, c := range x {
			g.learnKVs(c)
		}
	}
}

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case fmt.Stringer:
		return x.String()
	case nil:
		return ""
	default:
		return fmt.Sprint(x)
	}
}

func asInt(v any) int64 {
	n, _ := strconv.ParseInt(str(v), 10, 64)
	return n
}

// --- helpers producing JSON fields the way etcd's gateway accepts them ---

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// i64 encodes an int64 as etcd's JSON does (a string), or sometimes as a
// JSON number, which the gateway must accept too.
func (g *Generator) i64(n int64) any {
	if g.rng.IntN(4) == 0 {
		return n
	}
	return strconv.FormatInt(n, 10)
}

// enum sends an enum by name, or sometimes by number.
func (g *Generator) enum(names []string, i int) any {
	if g.rng.IntN(5) == 0 {
		return i
	}
	return names[i]
}

func (g *Generator) chance(pct int) bool { return g.rng.IntN(100) < pct }

func (g *Generator) key() string {
	if g.chance(12) {
		return extraKeys[g.rng.IntN(len(extraKeys))]
	}
	return keys[g.rng.IntN(len(keys))]
}

func (g *Generator) writeKey() string { return keys[g.rng.IntN(len(keys))] }

func (g *Generator) value() string { return values[g.rng.IntN(len(values))] }

// prefixEnd is clientv3.GetPrefixRangeEnd: the key after every key with
// the prefix (increment the last byte below 0xff), or "\x00" for "to the
// end" when the prefix is all 0xff.
func prefixEnd(p string) string {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return "\x00"
}

// keyRange picks a key and range_end: single key, prefix, from-key, the
// whole key space, an explicit interval (possibly empty or inverted).
func (g *Generator) keyRange(body map[string]any) (key, end string) {
	switch r := g.rng.IntN(100); {
	case r < 40:
		key = g.key()
	case r < 65:
		key = g.key()
		end = prefixEnd(key)
	case r < 75:
		key, end = g.key(), "\x00"
	case r < 85:
		key, end = "\x00", "\x00"
	default:
		key, end = g.key(), g.key()
	}
	body["key"] = b64(key)
	if end != "" {
		body["range_end"] = b64(end)
	}
	return key, end
}

// readRev picks a read revision: current (0 or negative), an old one, the
// compacted revision itself, a compacted one, or a future one.
func (g *Generator) readRev() int64 {
	cur, cmp := g.st.Rev, g.st.CompactRev
	switch r := g.rng.IntN(100); {
	case r < 40:
		return 0
	case r < 43:
		return -1
	case r < 75:
		lo := max(cmp, 1)
		return lo + g.rng.Int64N(cur-lo+1)
	case r < 80:
		return cur
	case r < 86 && cmp > 0:
		return cmp
	case r < 92 && cmp > 1:
		return 1 + g.rng.Int64N(cmp-1)
	default:
		return cur + 1 + g.rng.Int64N(3)
	}
}

func (g *Generator) anyRev() int64 { return g.rng.Int64N(g.st.Rev + 2) }

var sortOrders = []string{"NONE", "ASCEND", "DESCEND"}
var sortTargets = []string{"KEY", "VERSION", "CREATE", "MOD", "VALUE"}

func (g *Generator) rangeBody() map[string]any {
	body := map[string]any{}
	g.keyRange(body)
	if rev := g.readRev(); rev != 0 {
		body["revision"] = g.i64(rev)
	}
	if g.chance(25) {
		body["limit"] = g.i64(1 + g.rng.Int64N(3))
	}
	if g.chance(10) {
		body["count_only"] = true
	}
	if g.chance(15) {
		body["keys_only"] = true
	}
	if g.chance(30) {
		body["sort_order"] = g.enum(sortOrders, g.rng.IntN(3))
		body["sort_target"] = g.enum(sortTargets, g.rng.IntN(5))
	} else if g.chance(5) {
		// A target without an order: etcd sorts ascending.
		body["sort_target"] = g.enum(sortTargets, 1+g.rng.IntN(4))
	}
	for _, f := range []string{"min_mod_revision", "max_mod_revision", "min_create_revision", "max_create_revision"} {
		if g.chance(8) {
			body[f] = g.i64(g.anyRev())
		}
	}
	if g.chance(10) {
		body["serializable"] = true
	}
	return body
}

func (g *Generator) genRange() *Op {
	body := g.rangeBody()
	if g.chance(1) {
		body["key"] = "" // etcdserver: key is not provided
		delete(body, "range_end")
	}
	return &Op{Kind: OpRange, Body: body}
}

func (g *Generator) putBody() map[string]any {
	k := g.writeKey()
	if g.chance(2) {
		k = g.key()
	}
	body := map[string]any{"key": b64(k)}
	if v := g.value(); v != "" {
		body["value"] = b64(v)
	}
	if g.chance(30) {
		body["prev_kv"] = true
	}
	if g.chance(6) {
		body["ignore_value"] = true
		if !g.chance(20) {
			delete(body, "value") // else: etcdserver: value is provided (if a value was drawn)
		}
	}
	if g.chance(4) {
		body["ignore_lease"] = true
	}
	if g.chance(1) {
		body["key"] = ""
	}
	return body
}

func (g *Generator) genPut() *Op { return &Op{Kind: OpPut, Body: g.putBody()} }

func (g *Generator) deleteBody() map[string]any {
	body := map[string]any{}
	switch r := g.rng.IntN(100); {
	case r < 45:
		body["key"] = b64(g.key())
	case r < 75:
		k := g.key()
		body["key"], body["range_end"] = b64(k), b64(prefixEnd(k))
	case r < 85:
		body["key"], body["range_end"] = b64(g.key()), b64(g.key())
	case r < 95:
		body["key"], body["range_end"] = b64(g.key()), b64("\x00")
	default:
		body["key"], body["range_end"] = b64("\x00"), b64("\x00")
	}
	if g.chance(40) {
		body["prev_kv"] = true
	}
	return body
}

func (g *Generator) genDelete() *Op {
	body := g.deleteBody()
	if g.chance(1) {
		body["key"] = ""
		delete(body, "range_end")
	}
	return &Op{Kind: OpDeleteRange, Body: body}
}

var compareTargets = []string{"VERSION", "CREATE", "MOD", "VALUE", "LEASE"}
var compareResults = []string{"EQUAL", "GREATER", "LESS", "NOT_EQUAL"}

func (g *Generator) compare() map[string]any {
	k := g.key()
	c := map[string]any{"key": b64(k)}
	if g.chance(8) {
		c["range_end"] = b64(prefixEnd(k))
	}
	t := g.rng.IntN(5)
	if t == 4 && !g.chance(30) {
		t = g.rng.IntN(4)
	}
	c["target"] = g.enum(compareTargets, t)
	c["result"] = g.enum(compareResults, g.rng.IntN(4))
	h, known := g.hints[k]
	pick := func(exact int64) int64 {
		switch r := g.rng.IntN(10); {
		case r < 5 && known:
			return exact
		case r < 7:
			return 0
		default:
			return g.anyRev()
		}
	}
	switch t {
	case 0:
		if v := pick(h.version); v != 0 || g.chance(50) {
			c["version"] = g.i64(min(v, 5))
		}
	case 1:
		if v := pick(h.create); v != 0 || g.chance(50) {
			c["create_revision"] = g.i64(v)
		}
	case 2:
		if v := pick(h.mod); v != 0 || g.chance(50) {
			c["mod_revision"] = g.i64(v)
		}
	case 3:
		if v := g.value(); v != "" {
			c["value"] = b64(v)
		}
	case 4:
		// Only lease 0 exists in these sequences.
		if g.chance(50) {
			c["lease"] = g.i64(0)
		}
	}
	return c
}

// requestOp returns one txn operation; depth limits nesting.
func (g *Generator) requestOp(depth int) map[string]any {
	switch r := g.rng.IntN(100); {
	case r < 30:
		b := g.rangeBody()
		// Inside a txn, keep read revisions mostly valid so that the txn
		// does something; invalid ones still occur.
		if g.chance(60) {
			delete(b, "revision")
		}
		return map[string]any{"request_range": b}
	case r < 65:
		b := g.putBody()
		return map[string]any{"request_put": b}
	case r < 85:
		return map[string]any{"request_delete_range": g.deleteBody()}
	default:
		if depth >= 2 {
			return map[string]any{"request_range": g.rangeBody()}
		}
		return map[string]any{"request_txn": g.genTxn(depth + 1)}
	}
}

func (g *Generator) genTxn(depth int) map[string]any {
	body := map[string]any{}
	if depth == 0 && g.chance(2) {
		// The 128-op limit: exactly at the limit is fine, one more fails.
		n := 128 + g.rng.IntN(2)
		ops := make([]any, n)
		for i := range ops {
			ops[i] = map[string]any{"request_range": map[string]any{"key": b64(g.key())}}
		}
		branch := "success"
		if g.chance(50) {
			branch = "failure"
		}
		body[branch] = ops
		return body
	}
	nc := g.rng.IntN(4)
	if nc > 0 {
		var cs []any
		for i := 0; i < nc; i++ {
			cs = append(cs, g.compare())
		}
		body["compare"] = cs
	}
	for _, branch := range []string{"success", "failure"} {
		n := g.rng.IntN(4)
		if n == 0 {
			continue
		}
		var ops []any
		for i := 0; i < n; i++ {
			ops = append(ops, g.requestOp(depth))
		}
		body[branch] = ops
	}
	return body
}

func (g *Generator) genCompact() *Op {
	cur, cmp := g.st.Rev, g.st.CompactRev
	var rev int64
	switch r := g.rng.IntN(100); {
	case r < 3:
		rev = 0 // accepted once on a store never compacted
	case r < 12 && g.st.LastDeleteRev > cmp:
		rev = g.st.LastDeleteRev // a tombstone exactly at the compaction
	case r < 15:
		rev = cur
	case r < 75:
		lo := max(cmp+1, 1)
		if lo > cur {
			rev = cur
		} else {
			rev = lo + g.rng.Int64N(cur-lo+1)
		}
	case r < 85 && cmp >= 0:
		rev = g.rng.Int64N(cmp + 1) // compacted
	default:
		rev = cur + 1 + g.rng.Int64N(3) // future
	}
	body := map[string]any{"revision": g.i64(rev)}
	if g.chance(50) {
		body["physical"] = true
	}
	return &Op{Kind: OpCompact, Body: body}
}

func (g *Generator) genWatchOpen() *Op {
	w := &WatchSpec{ID: g.nextID}
	g.nextID++
	cr := map[string]any{}
	key, end := g.keyRange(cr)
	cur, cmp := g.st.Rev, g.st.CompactRev
	switch r := g.rng.IntN(100); {
	case r < 15:
		w.Start = 0
	case r < 25 && cmp > 0:
		// Exactly the compacted revision: still allowed, and the edge
		// where compaction's removals show; often over every key, so
		// that whatever was deleted there is in range.
		w.Start = cmp
		if g.chance(50) {
			cr["key"], cr["range_end"] = b64("\x00"), b64("\x00")
			key, end = "\x00", "\x00"
		}
	case r < 70:
		lo := max(cmp, 1)
		w.Start = lo + g.rng.Int64N(cur-lo+1)
	case r < 80 && cmp > 1:
		w.Start = 1 + g.rng.Int64N(cmp-1)
		w.Compacted = true
	default:
		w.Start = cur + 1 + g.rng.Int64N(2)
	}
	if w.Start != 0 {
		cr["start_revision"] = g.i64(w.Start)
	}
	if g.chance(50) {
		cr["prev_kv"] = true
	}
	switch r := g.rng.IntN(100); {
	case r < 20:
		w.NoPut = true
		cr["filters"] = []any{g.enum([]string{"NOPUT"}, 0)}
	case r < 40:
		w.NoDel = true
		cr["filters"] = []any{g.enum([]string{"NOPUT", "NODELETE"}, 1)}
	}
	switch {
	case end == "":
		w.Key = key
	case key == "\x00":
		w.Key = "a" // every key is in range
	default:
		w.Key = key
	}
	if end != "" && end != "\x00" && key >= end {
		w.Empty = true
	}
	w.Closes = g.n + 3 + g.rng.IntN(40)
	if !w.Empty {
		g.watches = append(g.watches, w)
	}
	return &Op{Kind: OpWatchOpen, Body: map[string]any{"create_request": cr}, Watch: w}
}

// closeWatch queues the fence writes (puts on a key inside the watched
// range until its revision reaches the watch's start, then a delete) and
// the drain; a compacted watch needs no fence: etcd cancels it.
func (g *Generator) closeWatch(w *WatchSpec) *Op {
	drain := &Op{Kind: OpWatchDrain, Watch: w}
	if w.Compacted {
		return drain
	}
	puts := int64(1)
	if w.Start > g.st.Rev+1 {
		puts = w.Start - g.st.Rev
	}
	for i := int64(0); i < puts; i++ {
		g.queue = append(g.queue, &Op{Kind: OpPut, Body: map[string]any{"key": b64(w.Key), "value": b64("fence")}})
	}
	g.queue = append(g.queue, &Op{Kind: OpDeleteRange, Body: map[string]any{"key": b64(w.Key)}})
	// The fence's revisions are known once the writes ran (FenceTarget).
	g.queue = append(g.queue, drain)
	op := g.queue[0]
	g.queue = g.queue[1:]
	return op
}

// FenceTarget returns the revision of the last event a watch must deliver
// before the drain stops, given the revision after the fence delete.
func (w *WatchSpec) FenceTarget(revAfterFence int64) int64 {
	if w.NoDel {
		return revAfterFence - 1 // the last fence put
	}
	return revAfterFence
}

// safeTxn drops ignore_value/ignore_lease from the puts of a txn that also
// deletes: etcd checks that such a put's key exists before the txn runs, so
// when an earlier delete of the same txn removes the key (a from-key delete
// escapes etcd's duplicate-key check) the apply fails half-way and etcd
// 3.4 panics. Such a sequence cannot be compared.
func safeTxn(txn map[string]any) map[string]any {
	if !hasOp(txn, "request_delete_range") {
		return txn
	}
	walkOps(txn, func(op map[string]any) {
		if p, ok := op["request_put"].(map[string]any); ok {
			delete(p, "ignore_value")
			delete(p, "ignore_lease")
		}
	})
	return txn
}

func hasOp(txn map[string]any, kind string) bool {
	found := false
	walkOps(txn, func(op map[string]any) {
		if _, ok := op[kind]; ok {
			found = true
		}
	})
	return found
}

// walkOps calls fn for every request op of txn and its nested txns.
func walkOps(txn map[string]any, fn func(map[string]any)) {
	for _, branch := range []string{"success", "failure"} {
		ops, _ := txn[branch].([]any)
		for _, o := range ops {
			op := o.(map[string]any)
			fn(op)
			if nested, ok := op["request_txn"].(map[string]any); ok {
				walkOps(nested, fn)
			}
		}
	}
}

// badBodies are malformed or ill-typed requests: the gateway must answer
// them with etcd's error, not a panic or a different error.
var badBodies = []string{
	`garbage`,
	``,
	`[]`,
	`null`,
	`{"key":5}`,
	`{"key":"not base64!"}`,
	`{"key":"YQ==","limit":"abc"}`,
	`{"key":"YQ==","limit":1.5}`,
	`{"key":"YQ==","sort_order":"SIDEWAYS"}`,
	`{"key":"YQ==",}`,
	`{"key":"YQ==","count_only":"true"}`,
	`{"key":"YQ=="} {"key":"Yg=="}`,
	`{"key":"YQ==","unknown_field":1}`,
	`{"key":"_w=="}`,
	`{"key":"YQ"}`,
	`{"key":"YQ==","revision":"99999999999999999999"}`,
	`{"key":"YQ==","revision":-0}`,
	`{"key":"YQ==","keys_only":1}`,
	`{"key":"YQ==","range_end":null}`,
}

// A RequestOp with two of its oneof fields set is left out: etcd 3.4's
// decoder picks one of them at random (map order), so it cannot be compared.
var badTxnBodies = []string{
	`{"compare":[{"target":"NOPE","key":"YQ=="}]}`,
	`{"compare":[{"result":"EQUALS","key":"YQ=="}]}`,
	`{"compare":{"key":"YQ=="}}`,
	`{"success":[{}]}`,
	`{"success":[{"request_put":null}]}`,
	`{"compare":[{"key":"YQ==","target":"VALUE","value":"???"}]}`,
}

func (g *Generator) genBad() *Op {
	if g.chance(30) {
		return &Op{Kind: OpTxn, RawBody: []byte(badTxnBodies[g.rng.IntN(len(badTxnBodies))])}
	}
	kinds := []OpKind{OpRange, OpPut, OpDeleteRange, OpCompact}
	return &Op{Kind: kinds[g.rng.IntN(len(kinds))], RawBody: []byte(badBodies[g.rng.IntN(len(badBodies))])}
}
