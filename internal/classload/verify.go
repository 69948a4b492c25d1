package classload

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// The checks compare what the clients saw with the session's history h:
// the events of the shared namespace's ConfigMaps, in revision order, from
// the first revision through one every watcher reached.

// checkWrites finds every writer's writes in h, in order: each
// acknowledged write exactly where its answer put it (a delete, which kube
// answers with a Status, as the next event of its object), a write whose
// answer never came there or not, and no event of a writer's object that
// no write of theirs explains. It fills in the revision of each delete
// and of each uncertain write that was made, and returns what it found
// wrong.
func checkWrites(h []event, writers []*writer) []string {
	byName := map[string][]event{}
	for _, e := range h {
		byName[e.name] = append(byName[e.name], e)
	}
	var problems []string
	for _, w := range writers {
		mine := map[string][]*write{}
		for i := range w.writes {
			wr := &w.writes[i]
			mine[wr.name] = append(mine[wr.name], wr)
		}
		for _, o := range w.objects {
			if p := matchWrites(o.name, mine[o.name], byName[o.name]); p != "" {
				problems = append(problems, p)
			}
		}
	}
	return problems
}

// matchWrites matches one object's writes, in the order they were sent,
// with its events in h.
func matchWrites(name string, writes []*write, events []event) string {
	next := 0
	for i, wr := range writes {
		if next < len(events) && wr.uncertain {
			// The event is this write's unless it is the next
			// acknowledged write's.
			e := events[next]
			if e.typ == wr.kind.eventType() && !(i+1 < len(writes) && acknowledges(writes[i+1], e)) {
				wr.rv = e.rv
				next++
			}
			continue
		}
		if wr.uncertain {
			continue
		}
		if next >= len(events) || !acknowledges(wr, events[next]) {
			got := "nothing"
			if next < len(events) {
				got = fmt.Sprintf("%s@%d", events[next].typ, events[next].rv)
			}
			return fmt.Sprintf("acknowledged %s of %s (revision %s) is not in the history: its next event there is %s",
				wr.kind.eventType(), name, revisionOf(wr), got)
		}
		if wr.kind == opDelete {
			wr.rv = events[next].rv
		}
		next++
	}
	if next < len(events) {
		e := events[next]
		return fmt.Sprintf("the history has %s of %s at revision %d, which no write made", e.typ, name, e.rv)
	}
	return ""
}

// acknowledges says whether e is the acknowledged write wr.
func acknowledges(wr *write, e event) bool {
	return !wr.uncertain && e.typ == wr.kind.eventType() && (wr.kind == opDelete || e.rv == wr.rv)
}

func revisionOf(wr *write) string {
	if wr.kind == opDelete {
		return "unknown: a delete's answer is a Status"
	}
	return fmt.Sprint(wr.rv)
}

// checkWatcher compares each of a watcher's segments with h: its list must
// be the state at its resourceVersion, and its events exactly h's after
// that, up to the last resourceVersion it knew. It returns the first
// difference of each segment.
func checkWatcher(h []event, w *watcher) []string {
	var problems []string
	for si, seg := range w.segments {
		where := fmt.Sprintf("%s, segment %d (from %d)", w.student.ID, si, seg.from)
		if seg.listed != nil {
			if p := compareState(stateAt(h, seg.from), seg.listed); p != "" {
				problems = append(problems, fmt.Sprintf("%s: its list %s", where, p))
			}
		}
		lo, _ := slices.BinarySearchFunc(h, seg.from+1, func(e event, rv int64) int { return cmp.Compare(e.rv, rv) })
		hi, _ := slices.BinarySearchFunc(h, seg.to+1, func(e event, rv int64) int { return cmp.Compare(e.rv, rv) })
		if p := compareEvents(h[lo:hi], seg.events); p != "" {
			problems = append(problems, fmt.Sprintf("%s to %d: %s", where, seg.to, p))
		}
	}
	return problems
}

// stateAt is every object of h at revision rv: its name and the revision
// of its last write.
func stateAt(h []event, rv int64) map[string]int64 {
	s := map[string]int64{}
	for _, e := range h {
		if e.rv > rv {
			break
		}
		if e.typ == "DELETED" {
			delete(s, e.name)
		} else {
			s[e.name] = e.rv
		}
	}
	return s
}

func compareState(want, got map[string]int64) string {
	var diffs []string
	for name, rv := range want {
		if g, ok := got[name]; !ok {
			diffs = append(diffs, fmt.Sprintf("misses %s@%d", name, rv))
		} else if g != rv {
			diffs = append(diffs, fmt.Sprintf("has %s@%d, not @%d", name, g, rv))
		}
	}
	for name, rv := range got {
		if _, ok := want[name]; !ok {
			diffs = append(diffs, fmt.Sprintf("has %s@%d, which did not exist", name, rv))
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	slices.Sort(diffs)
	return strings.Join(diffs, ", ")
}

// compareEvents describes the first difference between the events a
// watcher should have seen and those it saw.
func compareEvents(want, got []event) string {
	for i := range max(len(want), len(got)) {
		switch {
		case i >= len(got):
			return fmt.Sprintf("lost %d events from %s on (%d seen)", len(want)-i, describe(want[i]), len(got))
		case i >= len(want):
			return fmt.Sprintf("%d events past the history's, from %s on", len(got)-i, describe(got[i]))
		case !got[i].same(want[i]):
			kind := "lost"
			switch {
			case (i > 0 && got[i].rv <= got[i-1].rv) || got[i].rv < want[i].rv:
				kind = "repeated or out of order"
			case got[i].rv == want[i].rv:
				kind = "wrong"
			case slices.ContainsFunc(got[i+1:], want[i].same):
				kind = "out of order"
			}
			return fmt.Sprintf("event %d %s: saw %s where the history has %s", i, kind, describe(got[i]), describe(want[i]))
		}
	}
	return ""
}

// same says whether two events are one, whenever they arrived.
func (e event) same(o event) bool { return e.rv == o.rv && e.typ == o.typ && e.name == o.name }

func describe(e event) string { return fmt.Sprintf("%s %s@%d", e.typ, e.name, e.rv) }
