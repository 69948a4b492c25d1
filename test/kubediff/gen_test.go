package kubediff

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
)

// An op is one abstract request of a sequence. Everything that depends on
// a side (absolute resourceVersions, UIDs, continue tokens) is chosen by
// the runner from that side's own state, so the same op means the same
// thing on both servers.
type op struct {
	Verb string // create get update merge jsonpatch apply delete list compact watch

	Name   string
	Labels map[string]string // nil value: remove the label (merge patch)
	// Pre is the resourceVersion precondition: "" (none), "current",
	// "stale" (an older version of the object), "zero" (a create that
	// sends a resourceVersion).
	Pre     string
	PreUID  string // delete: "" | "current" | "wrong"
	Manager string // apply
	Force   bool

	// RV selects a read's resourceVersion: "" (unset), "0", "cur" (the
	// store's current revision), "old" (Rel), "future".
	RV       string
	Rel      int64
	RVM      string
	Limit    int
	Continue bool
	// BadContinue sends a continue token that is not one.
	BadContinue   bool
	Selector      string
	FieldSelector string

	// watch: SendInitial asks for a watch-list; Bookmarks allows them.
	SendInitial bool
	Bookmarks   bool
}

func (o op) String() string {
	var b strings.Builder
	b.WriteString(o.Verb)
	add := func(k string, v any) { fmt.Fprintf(&b, " %s=%v", k, v) }
	if o.Name != "" {
		add("name", o.Name)
	}
	if o.Labels != nil {
		keys := make([]string, 0, len(o.Labels))
		for k := range o.Labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, k+":"+o.Labels[k])
		}
		add("labels", "{"+strings.Join(parts, ",")+"}")
	}
	for _, kv := range []struct{ k, v string }{{"pre", o.Pre}, {"preUID", o.PreUID}, {"manager", o.Manager}, {"rv", o.RV}, {"rvm", o.RVM}, {"selector", o.Selector}, {"fieldSelector", o.FieldSelector}} {
		if kv.v != "" {
			add(kv.k, kv.v)
		}
	}
	if o.Force {
		add("force", true)
	}
	if o.RV == "old" || o.Verb == "compact" {
		add("rel", o.Rel)
	}
	if o.Limit != 0 {
		add("limit", o.Limit)
	}
	if o.Continue {
		add("continue", true)
	}
	if o.BadContinue {
		add("badContinue", true)
	}
	if o.SendInitial {
		add("sendInitialEvents", true)
	}
	if o.Bookmarks {
		add("allowWatchBookmarks", true)
	}
	return b.String()
}

// names are the objects a sequence plays with; the anchor (created first,
// never deleted) is not among them, so a watch that starts from the
// current state always has at least one initial event to wait for.
var names = []string{"a", "b", "c", "d", "e"}

const anchor = "anchor"

// genState is what the generator knows about the reference side, in
// revisions relative to the sequence's start.
type genState struct {
	cur       int64 // store revision
	compacted int64 // last successful compaction (0: none)
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

func genLabels(r *rand.Rand, removals bool) map[string]string {
	l := map[string]string{}
	for _, k := range []string{"x", "y", "z"} {
		switch r.IntN(4) {
		case 0:
			if removals {
				l[k] = "" // rendered as null in merge patches
			}
		case 1, 2:
			l[k] = pick(r, "1", "2", "3")
		}
	}
	return l
}

// oldRel picks a revision between the last compaction and now.
func oldRel(r *rand.Rand, s genState) int64 {
	lo := s.compacted
	if lo < 1 {
		lo = 1
	}
	if s.cur <= lo {
		return s.cur
	}
	return lo + r.Int64N(s.cur-lo+1)
}

// gen draws the next op. Weights favour writes (they make the history the
// reads and watches look at) while every read form appears in every seed
// of a few hundred ops.
func gen(r *rand.Rand, s genState) op {
	name := pick(r, names...)
	n := r.IntN(100)
	switch {
	case n < 14:
		o := op{Verb: "create", Name: name, Labels: genLabels(r, false)}
		if r.IntN(15) == 0 {
			o.Pre = "zero"
		}
		return o
	case n < 20:
		o := op{Verb: "get", Name: name, RV: pick(r, "", "", "0", "cur", "old", "future", "abc")}
		if o.RV == "old" {
			o.Rel = oldRel(r, s)
		}
		return o
	case n < 30:
		// PUT without a resourceVersion is not generated: flunders forbid
		// unconditional updates, configmaps allow them (strategy, not the
		// generic registry).
		o := op{Verb: "update", Name: name, Labels: genLabels(r, false), Pre: pick(r, "current", "current", "stale")}
		if r.IntN(10) == 0 {
			o.PreUID = pick(r, "current", "wrong") // metadata.uid in the body
		}
		return o
	case n < 38:
		return op{Verb: "merge", Name: name, Labels: genLabels(r, true), Pre: pick(r, "", "current", "stale")}
	case n < 44:
		return op{Verb: "jsonpatch", Name: name, Labels: genLabels(r, false), Pre: pick(r, "", "current", "stale")}
	case n < 58:
		o := op{Verb: "apply", Name: name, Labels: genLabels(r, false), Manager: pick(r, "m1", "m2", "m3"), Force: r.IntN(4) == 0}
		if r.IntN(8) == 0 {
			o.Pre = pick(r, "current", "stale")
		}
		return o
	case n < 66:
		return op{Verb: "delete", Name: name, Pre: pick(r, "", "", "current", "stale"), PreUID: pick(r, "", "", "current", "wrong")}
	case n < 84:
		return genList(r, s)
	case n < 88:
		o := op{Verb: "compact"}
		if s.cur > s.compacted && r.IntN(6) != 0 {
			o.Rel = s.compacted + 1 + r.Int64N(s.cur-s.compacted)
		} else {
			o.Rel = s.compacted // already compacted: an error on both
		}
		return o
	default:
		return genWatch(r, s)
	}
}

func genList(r *rand.Rand, s genState) op {
	o := op{Verb: "list"}
	if r.IntN(3) == 0 {
		// Go on from the previous page (if the side has a token); now and
		// then with a resourceVersion, which is refused.
		o.Continue = true
		o.Limit = pick(r, 1, 2, 3)
		if r.IntN(15) == 0 {
			o.BadContinue = true
		}
		switch r.IntN(8) {
		case 0:
			o.RV = "0"
		case 1:
			o.RV = "cur"
		case 2:
			o.RVM = "NotOlderThan"
		}
		return o
	}
	o.RV = pick(r, "", "0", "cur", "old", "old", "future")
	if r.IntN(30) == 0 {
		o.RV = "abc" // not a number
	}
	if o.RV == "old" {
		o.Rel = oldRel(r, s)
		if s.compacted > 1 && r.IntN(3) == 0 {
			o.Rel = r.Int64N(s.compacted) // compacted (or just at it)
		}
	}
	o.RVM = pick(r, "", "", "Exact", "NotOlderThan")
	if r.IntN(20) == 0 {
		o.RVM = "Sometimes" // unsupported value
	}
	o.Limit = pick(r, 0, 0, 1, 2, 3, 500)
	if r.IntN(30) == 0 {
		o.Limit = -1
	}
	if r.IntN(8) == 0 {
		o.Selector = pick(r, "x=1", "y!=2", "z")
	}
	if r.IntN(10) == 0 {
		o.FieldSelector = pick(r, "metadata.name=a", "metadata.name!=b", "metadata.namespace=default", "metadata.uid=x")
	}
	return o
}

func genWatch(r *rand.Rand, s genState) op {
	o := op{Verb: "watch"}
	if r.IntN(3) == 0 {
		o.SendInitial, o.Bookmarks, o.RVM = true, true, "NotOlderThan"
		o.RV = pick(r, "", "0", "cur", "old")
		if r.IntN(15) == 0 {
			// Too large: rvplay, like the watch cache, waits 3s first.
			o.RV = "future"
		}
		if r.IntN(6) == 0 {
			o.Bookmarks = false
		}
	} else {
		o.RV = pick(r, "", "0", "cur", "old", "old")
		o.Bookmarks = r.IntN(2) == 0
	}
	if r.IntN(4) == 0 {
		// The anchor always has x=1 and is the fence, so it matches;
		// other objects move in and out of the selection (ADDED /
		// DELETED on selector transitions).
		o.Selector = pick(r, "x=1", "x in (1,2)", "y!=2,x")
	}
	if o.RV == "old" {
		o.Rel = oldRel(r, s)
		// The edges of compaction: a watch from RV N starts at N+1, so
		// N = compacted-1 is the oldest that works and anything below is
		// too old.
		if s.compacted > 2 && r.IntN(2) == 0 {
			o.Rel = s.compacted - 1 - r.Int64N(2)
		}
	}
	return o
}
