package kubediff

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// compactRevKey reads kube's compactor's bookkeeping through a side's etcd
// gateway: the revision it last compacted to (compact_rev_key's value)
// and how many rounds it made (the key's version).
func (s *side) compactRevKey() (compacted, rounds int64, err error) {
	resp, err := s.c.Post(s.gateway+"/kv/range", "application/json",
		strings.NewReader(`{"key":"`+base64.StdEncoding.EncodeToString([]byte("compact_rev_key"))+`"}`))
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	var r struct {
		Kvs []struct {
			Value   []byte `json:"value"`
			Version string `json:"version"`
		} `json:"kvs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return 0, 0, err
	}
	if len(r.Kvs) == 0 {
		return 0, 0, nil
	}
	compacted, _ = strconv.ParseInt(string(r.Kvs[0].Value), 10, 64)
	rounds, _ = strconv.ParseInt(r.Kvs[0].Version, 10, 64)
	return compacted, rounds, nil
}

var pastWrite = regexp.MustCompile(`(@w\d+)\+`)

// afterWrites reads "@wK+" as "@wK": a revision a compactor round wrote
// after the K-th write is, to a cache, as good as the write's (the
// reference's cache reaches it on etcd's progress notifications, every
// 5 s here; rvplay's when a read asks for progress), and the rounds of
// the two sides fall at times of their own.
func afterWrites(s string) string { return pastWrite.ReplaceAllString(s, "$1") }

// waitFor polls cond (every 50 ms, up to limit) and says what never held
// when it does not.
func waitFor(limit time.Duration, what string, cond func() bool) (time.Duration, error) {
	began := time.Now()
	for !cond() {
		if time.Since(began) > limit {
			return 0, fmt.Errorf("not within %v: %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(began), nil
}

// TestTheCompactorsCompactions runs kube-apiserver's own compaction
// (the reference's --etcd-compaction-interval, rvplay's
// --compaction-interval, 2 s on both) and reads at the revisions it
// compacted, watch cache off and on. Its rounds write compact_rev_key at
// times of their own (the reference runs several compactors, one per
// storage), so resourceVersions are compared by the sequence's writes
// ("@wK", whether the K-th write's or one a round wrote after it). Once the compactor compacted past the writes:
//
//   - without the cache, every read at a compacted revision is etcd's 410
//     (a list's "The resourceVersion for the provided list is too old.",
//     a watch's ERROR event with "… watch is too old.");
//   - with it, an Exact list is served from the cache's snapshots until
//     the cache's own compactor reads compact_rev_key (every 15 s in
//     kube's cacher), then falls through to etcd's 410; a watch or a
//     watch-list from a compacted revision is served from the cache's
//     window, which compaction does not shorten (kube's "too old resource
//     version: N (M)" comes from the window alone), and so is a get or a
//     list not older than it.
func TestTheCompactorsCompactions(t *testing.T) {
	buildAll(t)
	compactionInterval = 2 * time.Second
	defer func() { compactionInterval = 0 }()
	eachWatchCacheMode(t, func(t *testing.T, on bool) {
		c := newClient()
		ref := startReference(t, c)
		rvBase := startRvplay(t)
		sides := newSides(c, ref, rvBase)
		writes := []op{
			{Verb: "create", Name: anchor, Labels: map[string]string{"x": "1"}},              // w1
			{Verb: "create", Name: "a", Labels: map[string]string{"x": "1"}},                 // w2
			{Verb: "update", Name: "a", Labels: map[string]string{"x": "2"}, Pre: "current"}, // w3
			{Verb: "create", Name: "b", Labels: map[string]string{"x": "1"}},                 // w4
		}
		reads := []op{
			{Verb: "list", RV: "old", Rel: 2, RVM: "Exact"},
			{Verb: "list", RV: "old", Rel: 3, Limit: 1},
			{Verb: "list", RV: "old", Rel: 2, RVM: "NotOlderThan"},
			{Verb: "get", Name: "a", RV: "old", Rel: 2},
			{Verb: "watch", RV: "old", Rel: 2},
			{Verb: "watch", RV: "old", Rel: 2, SendInitial: true, Bookmarks: true, RVM: "NotOlderThan"},
			{Verb: "list"},
		}
		// Each side waits for its own compactor: both at once (bothSides).
		answers := make([][]answer, len(sides))
		failed := make([]error, len(sides))
		bothSides(sides, func(i int, s *side) {
			answers[i], failed[i] = compactAndRead(t, s, writes, reads)
		})
		for _, err := range failed {
			if err != nil {
				t.Fatal(err)
			}
		}
		for j, o := range reads {
			a, b := afterWrites(canon(answers[0][j].norm)), afterWrites(canon(answers[1][j].norm))
			t.Logf("%s\n  %s", o, a)
			if a != b {
				t.Errorf("%s: the answers differ\n--- sample-apiserver (normalised):\n%s\n--- rvplay (normalised):\n%s\n--- sample-apiserver raw:\n%s\n--- rvplay raw:\n%s",
					o, indent(a), indent(b), clip(answers[0][j].raw), clip(answers[1][j].raw))
			}
		}
	})
}

// compactAndRead makes the writes on s, waits until its compactor has
// compacted past them and its cache refuses an Exact list at a compacted
// revision, then answers the reads.
func compactAndRead(t *testing.T, s *side, writes, reads []op) ([]answer, error) {
	s.byWrites = true
	ctx, cancel := ctxTimeout(10 * time.Second)
	code, b, err := s.do(ctx, "GET", s.coll, "", "")
	cancel()
	if err != nil || code != 200 {
		return nil, fmt.Errorf("%s: first list: %d %s %v", s.label, code, b, err)
	}
	if s.start, err = s.storeRevision(); err != nil {
		return nil, err
	}
	for j, o := range writes {
		if a := s.exec(o, j); a.norm.(map[string]any)["code"].(int) >= 300 {
			return nil, fmt.Errorf("%s: %s: %s", s.label, o, a.raw)
		}
	}
	last := s.writes[len(s.writes)-1]
	took, err := waitFor(30*time.Second, s.label+"'s compactor compacting past the writes", func() bool {
		compacted, _, err := s.compactRevKey()
		return err == nil && compacted >= last
	})
	if err != nil {
		return nil, err
	}
	// The cache's compactor drops its snapshots within its period: until
	// then it serves the Exact list (not compared).
	served, err := waitFor(40*time.Second, s.label+" refusing an Exact list at a compacted revision", func() bool {
		a := s.exec(op{Verb: "list", RV: "old", Rel: 2, RVM: "Exact"}, 0)
		return a.norm.(map[string]any)["code"] == 410
	})
	if err != nil {
		return nil, err
	}
	t.Logf("%s: compacted past the writes %v after them; an Exact list refused %v later", s.label, took.Round(time.Millisecond), served.Round(time.Millisecond))
	var answers []answer
	for j, o := range reads {
		answers = append(answers, s.exec(o, len(writes)+j))
	}
	return answers, nil
}
