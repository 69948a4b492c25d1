package kubediff

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	flagSeed       = flag.Uint64("kubediff.seed", 0, "run only this seed (0: seeds 1..kubediff.seeds)")
	flagSeeds      = flag.Int("kubediff.seeds", 5, "run seeds 1..N")
	flagOps        = flag.Int("kubediff.ops", 300, "requests per seed")
	flagNoKeep     = flag.Bool("kubediff.nokeep", false, "leave out the keep label and annotation (objects can lose all their managed fields)")
	flagTrace      = flag.Bool("kubediff.trace", false, "log every request and the reference's normalised answer")
	flagCacheSeeds = flag.Int("kubediff.cache-seeds", 2, "with the watch cache on, run only seeds 1..N (each future resourceVersion waits 3 s, on both sides at once: about half a minute a seed)")
	flagModes      = flag.String("kubediff.watch-cache", "both", "the watch cache of both sides: off (the reference's --watch-cache=false, rvplay's too), on (both sides' default) or both")
)

// A knownDifference is a way rvplay is known to answer differently from
// the generic API server. Each one met is printed when the test runs,
// never silently accepted. Divergent marks differences after which the two
// stores no longer hold the same state, so the sequence stops there.
type knownDifference struct {
	id, reason string
	divergent  bool
	match      func(o op, ref, rv map[string]any) bool
}

var knownDifferences = []knownDifference{
	{
		id: "list-rv0-limit-ignored",
		reason: "a list with resourceVersion=0 and a limit, watch cache off: the reference pages such a list from " +
			"etcd; a session with its watch cache off keeps rvplay's resourceVersion=0 model from before the cache " +
			"(kube-apiserver's default cache ignores the limit: one full page, no continue, spec/kube.md §1.3), which " +
			"its lessons rely on. With the watch cache on both ignore it. Continue tokens are reset on both sides afterwards",
		match: func(o op, ref, rv map[string]any) bool {
			if o.Verb != "list" || o.RV != "0" || o.Limit == 0 || ref["code"] != 200 || rv["code"] != 200 {
				return false
			}
			l, _ := rv["list"].(map[string]any)
			_, cont := l["continue"]
			_, rem := l["remainingItemCount"]
			return !cont && !rem
		},
	},
	{
		id: "watchlist-too-large-retry-after",
		reason: "a watch-list (sendInitialEvents=true) from a resourceVersion ahead of the store, watch cache off: both " +
			"end the stream at once with a 504 Timeout ERROR event \"Too large resource version\" whose " +
			"details.retryAfterSeconds etcd3's watcher draws at random between 1 and 3 on each side (with the watch " +
			"cache on, both wait 3 s and say 1)",
		match: func(o op, ref, rv map[string]any) bool {
			if o.Verb != "watch" || !o.SendInitial {
				return false
			}
			strip := func(m map[string]any) string {
				evs, _ := m["events"].([]any)
				var out []any
				for _, e := range evs {
					em, ok := e.(map[string]any)
					if !ok {
						out = append(out, e)
						continue
					}
					st, _ := em["status"].(map[string]any)
					d, _ := st["details"].(map[string]any)
					nd := map[string]any{}
					for k, v := range d {
						if k != "retryAfterSeconds" {
							nd[k] = v
						}
					}
					ns := map[string]any{}
					for k, v := range st {
						ns[k] = v
					}
					ns["details"] = nd
					out = append(out, map[string]any{"type": em["type"], "status": ns})
				}
				return canon(map[string]any{"code": m["code"], "end": m["end"], "events": out})
			}
			evs, _ := ref["events"].([]any)
			if len(evs) != 1 {
				return false
			}
			e, _ := evs[0].(map[string]any)
			st, _ := e["status"].(map[string]any)
			return st["code"] == 504.0 && strip(ref) == strip(rv)
		},
	},
	{
		id: "watch-prevkv-compacted",
		reason: "a watch from a revision at or after the last compaction whose events include an update of a key whose " +
			"previous version was compacted: the reference (watch cache off) reads etcd's watch with prev_kv, gets " +
			"PrevKv=nil and ends the stream with a 500 InternalError ERROR event; rvplay's store still gives the " +
			"previous value and its watch streams the events (with the watch cache on, both stream them)",
		match: func(o op, ref, rv map[string]any) bool {
			evs, _ := ref["events"].([]any)
			if o.Verb != "watch" || len(evs) == 0 || rv["code"] != 200 {
				return false
			}
			last, _ := evs[len(evs)-1].(map[string]any)
			st, _ := last["status"].(map[string]any)
			msg, _ := st["message"].(string)
			return st["code"] == 500.0 && strings.Contains(msg, "PrevKv=nil")
		},
	},
}

func matchKnown(o op, ref, rv any) *knownDifference {
	rm, _ := ref.(map[string]any)
	vm, _ := rv.(map[string]any)
	for i := range knownDifferences {
		if knownDifferences[i].match(o, rm, vm) {
			return &knownDifferences[i]
		}
	}
	return nil
}

func seeds() []uint64 {
	if *flagSeed != 0 {
		return []uint64{*flagSeed}
	}
	var s []uint64
	for i := 1; i <= *flagSeeds; i++ {
		s = append(s, uint64(i))
	}
	return s
}

// TestSequencesMatchGenericAPIServer runs each seed's sequence against a
// fresh sample-apiserver (flunders, over a fresh etcd 3.6) and a fresh
// rvplay server (configmaps) and compares every answer.
func TestSequencesMatchGenericAPIServer(t *testing.T) {
	buildAll(t)
	eachWatchCacheMode(t, func(t *testing.T, on bool) {
		for _, seed := range seeds() {
			if on && *flagSeed == 0 && seed > uint64(*flagCacheSeeds) {
				break
			}
			t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
				runSeed(t, seed, *flagOps)
			})
		}
	})
}

func runSeed(t *testing.T, seed uint64, ops int) {
	rng := rand.New(rand.NewPCG(seed, 0x6b756265))
	runSequence(t, seed, ops, !*flagNoKeep, func(st genState) op { return gen(rng, st) })
}

// runSequence runs ops requests on fresh servers (the anchor's creation
// first, then next's ops) and fails at the first difference that is not a
// known one. keep adds the keep label and annotation to every write (see
// side.body). seed only labels the output.
func runSequence(t *testing.T, seed uint64, ops int, keep bool, next func(genState) op) {
	c := newClient()
	ref := startReference(t, c)
	rvBase := startRvplay(t)
	sides := newSides(c, ref, rvBase)
	for _, s := range sides {
		// rvplay creates a session's namespaces on the session's first
		// Kubernetes request: touch the API before taking the start.
		ctx, cancel := ctxTimeout(10 * time.Second)
		code, b, err := s.do(ctx, "GET", s.coll, "", "")
		cancel()
		if err != nil || code != 200 {
			t.Fatalf("%s: first list: %d %s %v", s.label, code, b, err)
		}
		r, err := s.storeRevision()
		if err != nil {
			t.Fatalf("%s: store revision: %v", s.label, err)
		}
		s.start, s.rev = r, r
	}
	t.Logf("seed %d: starting revisions: sample-apiserver's etcd %d, rvplay %d", seed, sides[0].start, sides[1].start)

	for _, s := range sides {
		s.keep = keep
	}
	st := genState{}
	known := map[string]int{}
	tally := map[string]int{}
	slow := map[string]time.Duration{} // requests that took over a second
	// The anchor exists for the whole sequence (see names).
	seq := []op{{Verb: "create", Name: anchor, Labels: map[string]string{"x": "1"}}}
	for i := 0; i < ops; i++ {
		var o op
		if i < len(seq) {
			o = seq[i]
		} else {
			o = next(st)
		}
		var ans [2]answer
		var took [2]time.Duration
		var revErr [2]error
		bothSides(sides, func(j int, s *side) {
			began := time.Now()
			ans[j] = s.exec(o, i)
			took[j] = time.Since(began)
			s.rev, revErr[j] = s.storeRevision()
		})
		for j, s := range sides {
			if took[j] > time.Second {
				slow[s.label+": "+o.Verb+" rv="+o.RV] += took[j]
			}
			if revErr[j] != nil {
				t.Fatalf("%s: store revision: %v", s.label, revErr[j])
			}
		}
		a, b := canon(ans[0].norm), canon(ans[1].norm)
		tally[outcome(o, ans[0].norm)]++
		if *flagTrace {
			t.Logf("#%d %s\n  %s", i, o, a)
		}
		if a != b {
			if k := matchKnown(o, ans[0].norm, ans[1].norm); k != nil {
				known[k.id]++
				if o.Verb == "list" {
					for _, s := range sides {
						s.cont = ""
					}
				}
				t.Logf("seed %d request #%d: known difference %q (%s):\n  op: %s\n  sample-apiserver: %s\n  rvplay:           %s", seed, i, k.id, k.reason, o, a, b)
				if k.divergent {
					t.Logf("seed %d: stopping at request #%d, the stores now differ (known difference %q)", seed, i, k.id)
					break
				}
			} else {
				t.Fatalf("seed %d: first difference at request #%d: %s\n"+
					"rerun: go test -run '%s' -kubediff.seed=%d -kubediff.ops=%d\n"+
					"--- sample-apiserver request:\n%s\n--- sample-apiserver answer (normalised):\n%s\n--- rvplay request:\n%s\n--- rvplay answer (normalised):\n%s\n"+
					"--- sample-apiserver raw:\n%s\n--- rvplay raw:\n%s",
					seed, i, o, t.Name(), seed, i+1, ans[0].req, indent(a), ans[1].req, indent(b), clip(ans[0].raw), clip(ans[1].raw))
			}
		}
		// The generator follows the reference.
		st.cur = sides[0].rev - sides[0].start
		if o.Verb == "compact" {
			if m, ok := ans[0].norm.(map[string]any); ok && m["code"] == 200 {
				st.compacted = o.Rel
			}
		}
	}
	var kinds []string
	for k := range tally {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var sum strings.Builder
	for _, k := range kinds {
		fmt.Fprintf(&sum, " %s×%d", k, tally[k])
	}
	t.Logf("seed %d: what the reference answered:%s", seed, sum.String())
	for k, d := range slow {
		t.Logf("seed %d: slow requests (over 1s each): %s: %v in all", seed, k, d.Round(time.Millisecond))
	}
	for id, n := range known {
		t.Logf("seed %d: known difference %q met %d times", seed, id, n)
		fmt.Fprintf(os.Stderr, "kubediff: %s: known difference %q met %d times\n", t.Name(), id, n)
	}
}

// bothSides runs f for each side at once and waits for both. The sides
// are servers of their own and f touches only its side's state, so each
// still sees the same requests in the same order; only one side's waits
// (a watch cache's 3 s for a future resourceVersion, a watch until its
// fence, a compactor's period) overlap the other's instead of following
// them.
func bothSides(sides []*side, f func(j int, s *side)) {
	var wg sync.WaitGroup
	for j, s := range sides {
		wg.Go(func() { f(j, s) })
	}
	wg.Wait()
}

// outcome names an answer for the coverage summary: verb, code, reason,
// and for watches how the stream ended.
func outcome(o op, norm any) string {
	m, _ := norm.(map[string]any)
	k := fmt.Sprintf("%s:%v", o.Verb, m["code"])
	if st, ok := m["status"].(map[string]any); ok && st["reason"] != nil {
		k += ":" + fmt.Sprint(st["reason"])
	}
	if e, ok := m["end"]; ok {
		k += ":" + fmt.Sprint(e)
	}
	if o.Verb == "apply" && o.Force {
		k += "(force)"
	}
	return k
}

func canon(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func indent(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 4000 {
		return s[:4000] + "…"
	}
	return s
}
