package lesson

import "sort"

// Detector finds one named mistake (or, for Kind "practice", one good
// habit) in a record of exchanges. A teacher's dashboard counts findings
// per detector and per principal; a lesson step may ask for one (to let a
// learner see a mistake happen).
type Detector struct {
	Name string `json:"name"`
	// Kind is "misconception" or "practice".
	Kind string `json:"kind"`
	// Find returns the findings, oldest first.
	Find func(record []Exchange) []Finding `json:"-"`
}

// Finding is one occurrence: the exchange that shows it (its index in the
// record it was found in) and its Seq.
type Finding struct {
	Detector  string `json:"detector"`
	Seq       int64  `json:"seq"`
	Index     int    `json:"-"`
	Principal string `json:"principal,omitempty"`
	Client    string `json:"client,omitempty"`
	UserAgent string `json:"userAgent,omitempty"`
}

// Detectors are the named detectors, in a stable order.
var Detectors = []*Detector{
	{Name: "retry-409-without-reread", Kind: "misconception", Find: retryWithoutReread},
	{Name: "update-without-resourceversion", Kind: "misconception", Find: updateWithoutResourceVersion},
	{Name: "watch-from-item-resourceversion", Kind: "misconception", Find: watchFromItem},
	{Name: "rewatch-after-410", Kind: "misconception", Find: rewatchAfterGone},
	{Name: "update-from-cached-read", Kind: "misconception", Find: updateFromCachedRead},
	{Name: "relist-after-410", Kind: "practice", Find: relistAfterGone},
}

// DetectorNamed returns the detector called name, or nil.
func DetectorNamed(name string) *Detector {
	for _, d := range Detectors {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// DetectorNames lists the detectors' names.
func DetectorNames() []string {
	out := make([]string, len(Detectors))
	for i, d := range Detectors {
		out[i] = d.Name
	}
	return out
}

// FindAll runs every detector over record, findings ordered by Seq.
func FindAll(record []Exchange) []Finding {
	var out []Finding
	for _, d := range Detectors {
		out = append(out, d.Find(record)...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

func finding(d string, record []Exchange, i int) Finding {
	e := &record[i]
	return Finding{Detector: d, Seq: e.Seq, Index: i, Principal: e.Principal, Client: e.Client, UserAgent: e.UserAgent}
}

func isWrite(v string) bool { return v == "update" || v == "patch" || v == "apply" }

// sameObject: same Kubernetes path, ignoring the subresource.
func sameObject(a, b *Exchange) bool {
	ta, okA := a.Target()
	tb, okB := b.Target()
	return okA && okB && ta.Name != "" && ta.Resource == tb.Resource && ta.Namespace == tb.Namespace && ta.Name == tb.Name
}

// retryWithoutReread: after a 409 Conflict on an update, the same client
// sends the same object again with the same (stale) resourceVersion,
// without having read a newer one: it can only conflict again.
func retryWithoutReread(record []Exchange) []Finding {
	var out []Finding
	for i := range record {
		c := &record[i]
		if c.Verb() != "update" || c.Status != 409 || c.Reason != "Conflict" || c.SentResourceVersion == "" {
			continue
		}
		for j := i + 1; j < len(record); j++ {
			n := &record[j]
			if n.Who() != c.Who() || !sameObject(c, n) {
				continue
			}
			if v := n.Verb(); v == "get" || v == "list" || v == "watch" {
				if n.Status == 200 {
					break // it read again
				}
				continue
			}
			if isWrite(n.Verb()) {
				if n.SentResourceVersion == c.SentResourceVersion {
					out = append(out, finding("retry-409-without-reread", record, j))
				}
				break
			}
		}
	}
	return out
}

// updateWithoutResourceVersion: a PUT that carried no resourceVersion
// succeeded: an unconditional update, which silently overwrites whatever
// another client wrote since this one read.
func updateWithoutResourceVersion(record []Exchange) []Finding {
	var out []Finding
	for i := range record {
		e := &record[i]
		if e.Verb() == "update" && e.Status == 200 && (e.SentResourceVersion == "" || e.SentResourceVersion == "0") {
			out = append(out, finding("update-without-resourceversion", record, i))
		}
	}
	return out
}

// watchFromItem: a watch started below the resourceVersion of the same
// client's last list (an item's): it replays changes the list already
// contained.
func watchFromItem(record []Exchange) []Finding {
	var out []Finding
	for i := range record {
		if watchStart(record, i) == "item" {
			out = append(out, finding("watch-from-item-resourceversion", record, i))
		}
	}
	return out
}

// gone reports whether e is a watch (or list) that ended in 410.
func gone(e *Exchange) bool {
	return e.Status == 410 || (e.Watch != nil && e.Watch.ErrorCode == 410)
}

// afterGone calls f with each 410 by a client and that client's next
// list or watch on the same path.
func afterGone(record []Exchange, f func(g, next int)) {
	for i := range record {
		g := &record[i]
		if v := g.Verb(); (v != "watch" && v != "list") || !gone(g) {
			continue
		}
		for j := i + 1; j < len(record); j++ {
			n := &record[j]
			if n.Who() == g.Who() && n.Path == g.Path && (n.Verb() == "watch" || n.Verb() == "list") {
				f(i, j)
				break
			}
		}
	}
}

// rewatchAfterGone: after a watch ended in 410, the client watched again
// from the same expired resourceVersion (or an older one) instead of
// listing.
func rewatchAfterGone(record []Exchange) []Finding {
	var out []Finding
	afterGone(record, func(g, next int) {
		n := &record[next]
		if n.Verb() != "watch" || record[g].Verb() != "watch" {
			return
		}
		rv := watchResourceVersion(n)
		if rv > 0 && rv <= watchResourceVersion(&record[g]) {
			out = append(out, finding("rewatch-after-410", record, next))
		}
	})
	return out
}

// relistAfterGone: after a 410 the client listed again (a complete new
// state) and the list succeeded: what client-go's reflector does.
func relistAfterGone(record []Exchange) []Finding {
	var out []Finding
	afterGone(record, func(g, next int) {
		n := &record[next]
		if n.Verb() == "list" && n.Status == 200 && n.Query.Get("continue") == "" {
			out = append(out, finding("relist-after-410", record, next))
		}
	})
	return out
}

// updateFromCachedRead: a write that got 409 Conflict carried the
// resourceVersion of the client's last read, which came from the watch
// cache (resourceVersion=0) and was already stale.
func updateFromCachedRead(record []Exchange) []Finding {
	var out []Finding
	for i := range record {
		w := &record[i]
		if !isWrite(w.Verb()) || w.Status != 409 || w.Reason != "Conflict" || w.SentResourceVersion == "" {
			continue
		}
		for j := i - 1; j >= 0; j-- {
			r := &record[j]
			if r.Who() != w.Who() || !sameObject(r, w) {
				continue
			}
			if r.Verb() == "get" && r.Status == 200 {
				if r.Query.Get("resourceVersion") == "0" && r.ResourceVersion == w.SentResourceVersion {
					out = append(out, finding("update-from-cached-read", record, i))
				}
				break
			}
		}
	}
	return out
}
