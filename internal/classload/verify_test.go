package classload

import (
	"strings"
	"testing"
)

func ev(typ, name string, rv int64) event {
	return event{rv: rv, typ: typ, name: name, recv: rv * 1000}
}

func acked(kind opKind, name string, rv int64) write { return write{kind: kind, name: name, rv: rv} }

func unanswered(kind opKind, name string) write {
	return write{kind: kind, name: name, uncertain: true}
}

func writerOf(name string, writes ...write) *writer {
	return &writer{objects: []object{{name: name}}, writes: writes}
}

func TestEveryAcknowledgedWriteIsFoundWhereItsAnswerPutIt(t *testing.T) {
	h := []event{ev("ADDED", "a", 3), ev("MODIFIED", "a", 5), ev("DELETED", "a", 9), ev("ADDED", "a", 12)}
	w := writerOf("a", acked(opCreate, "a", 3), acked(opUpdate, "a", 5), acked(opDelete, "a", 0), acked(opCreate, "a", 12))
	if p := checkWrites(h, []*writer{w}); len(p) != 0 {
		t.Fatal(p)
	}
	if w.writes[2].rv != 9 {
		t.Fatalf("the delete's revision is %d, the history has 9", w.writes[2].rv)
	}
}

func TestAnAcknowledgedWriteMissingFromTheHistoryIsLost(t *testing.T) {
	h := []event{ev("ADDED", "a", 3), ev("MODIFIED", "a", 7)}
	w := writerOf("a", acked(opCreate, "a", 3), acked(opUpdate, "a", 5), acked(opUpdate, "a", 7))
	p := checkWrites(h, []*writer{w})
	if len(p) != 1 || !strings.HasPrefix(p[0], "acknowledged MODIFIED of a (revision 5)") {
		t.Fatal(p)
	}
	// A delete acknowledged but never made.
	h = []event{ev("ADDED", "a", 3)}
	w = writerOf("a", acked(opCreate, "a", 3), acked(opDelete, "a", 0))
	if p := checkWrites(h, []*writer{w}); len(p) != 1 || !strings.HasPrefix(p[0], "acknowledged DELETED of a") {
		t.Fatal(p)
	}
}

func TestAWriteWithoutAnAnswerMayOrMayNotHaveBeenMade(t *testing.T) {
	// Made: the writer read it back and updated on from it.
	h := []event{ev("ADDED", "a", 3), ev("MODIFIED", "a", 4), ev("MODIFIED", "a", 8)}
	w := writerOf("a", acked(opCreate, "a", 3), unanswered(opUpdate, "a"), acked(opUpdate, "a", 8))
	if p := checkWrites(h, []*writer{w}); len(p) != 0 {
		t.Fatal(p)
	}
	if w.writes[1].rv != 4 {
		t.Fatalf("the unanswered update made revision %d, the history says 4", w.writes[1].rv)
	}
	// Not made: the next update is the object's next event.
	h = []event{ev("ADDED", "a", 3), ev("MODIFIED", "a", 8)}
	w = writerOf("a", acked(opCreate, "a", 3), unanswered(opUpdate, "a"), acked(opUpdate, "a", 8))
	if p := checkWrites(h, []*writer{w}); len(p) != 0 || w.writes[1].rv != 0 {
		t.Fatal(p, w.writes[1].rv)
	}
	// A create not made, then made again: one ADDED, the acknowledged one.
	h = []event{ev("ADDED", "a", 6)}
	w = writerOf("a", unanswered(opCreate, "a"), acked(opCreate, "a", 6))
	if p := checkWrites(h, []*writer{w}); len(p) != 0 || w.writes[0].rv != 0 {
		t.Fatal(p, w.writes[0].rv)
	}
}

func TestAnEventNoWriteMadeIsReported(t *testing.T) {
	h := []event{ev("ADDED", "a", 3), ev("MODIFIED", "a", 4)}
	w := writerOf("a", acked(opCreate, "a", 3))
	if p := checkWrites(h, []*writer{w}); len(p) != 1 || !strings.Contains(p[0], "MODIFIED of a at revision 4, which no write made") {
		t.Fatal(p)
	}
}

func TestAWatcherMustSeeExactlyTheHistoryAfterItsList(t *testing.T) {
	h := []event{ev("ADDED", "a", 3), ev("ADDED", "b", 4), ev("MODIFIED", "a", 5), ev("DELETED", "b", 6), ev("MODIFIED", "a", 7)}
	watching := func(from, to int64, listed map[string]int64, events ...event) *watcher {
		return &watcher{student: Student{ID: "s"}, segments: []*segment{{from: from, to: to, listed: listed, events: events}}}
	}
	for _, c := range []struct {
		name string
		w    *watcher
		want string // in the problem; "" for none
	}{
		{"all of it", watching(4, 7, map[string]int64{"a": 3, "b": 4}, h[2], h[3], h[4]), ""},
		{"up to where it got", watching(4, 6, map[string]int64{"a": 3, "b": 4}, h[2], h[3]), ""},
		{"a list of another revision", watching(4, 7, map[string]int64{"a": 3}, h[2], h[3], h[4]), "its list misses b@4"},
		{"a lost event", watching(4, 7, map[string]int64{"a": 3, "b": 4}, h[2], h[4]), "event 1 lost: saw MODIFIED a@7 where the history has DELETED b@6"},
		{"a lost last event", watching(4, 7, map[string]int64{"a": 3, "b": 4}, h[2], h[3]), "lost 1 events from MODIFIED a@7 on"},
		{"a repeated event", watching(4, 7, map[string]int64{"a": 3, "b": 4}, h[2], h[2], h[3], h[4]), "event 1 repeated or out of order"},
		{"events out of order", watching(4, 7, map[string]int64{"a": 3, "b": 4}, h[3], h[2], h[4]), "event 0 out of order: saw DELETED b@6"},
		{"an event of its list again", watching(4, 7, map[string]int64{"a": 3, "b": 4}, h[1], h[2], h[3], h[4]), "event 0 repeated or out of order"},
		{"an event that never was", watching(4, 7, map[string]int64{"a": 3, "b": 4}, h[2], ev("MODIFIED", "b", 6), h[4]), "event 1 wrong"},
	} {
		p := checkWatcher(h, c.w)
		switch {
		case c.want == "" && len(p) != 0:
			t.Errorf("%s: %v", c.name, p)
		case c.want != "" && (len(p) != 1 || !strings.Contains(p[0], c.want)):
			t.Errorf("%s: %v, want %q", c.name, p, c.want)
		}
	}
}
