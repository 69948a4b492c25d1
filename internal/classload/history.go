package classload

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// The session's own history is the oracle of the checks: what its store
// recorded, read with the teacher's token through the etcd gateway, where
// a Kubernetes object is the key /registry/<resource>/<namespace>/<name>.
const historyPrefix = "/registry/configmaps/" + Namespace + "/"

// currentRevision is the session's store's revision.
func (cl *Class) currentRevision(ctx context.Context) (int64, error) {
	var r struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	// A range of one key that cannot exist: only the header matters.
	if err := cl.c.json(ctx, http.MethodPost, cl.URL("/v3/kv/range"), cl.TeacherToken, []byte(`{"key":"AA==","count_only":true}`), http.StatusOK, &r); err != nil {
		return 0, err
	}
	return strconv.ParseInt(r.Header.Revision, 10, 64)
}

// compact compacts the session's history before rev, as a teacher may.
func (cl *Class) compact(ctx context.Context, rev int64) error {
	return cl.c.json(ctx, http.MethodPost, cl.URL("/v3/kv/compaction"), cl.TeacherToken, fmt.Appendf(nil, `{"revision":"%d","physical":true}`, rev), http.StatusOK, nil)
}

// history returns the events of the shared namespace's ConfigMaps at
// revisions from through upTo, read by watching every key from from until
// an event at upTo or later arrives (every revision has an event; those
// past upTo are left out).
func (cl *Class) history(ctx context.Context, from, upTo int64) ([]event, error) {
	if from > upTo {
		return nil, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	body := fmt.Sprintf(`{"create_request":{"key":"AA==","range_end":"AA==","start_revision":"%d"}}`, from)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cl.URL("/v3/watch"), strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+cl.TeacherToken)
	resp, err := (&http.Client{Transport: cl.c.http.Transport}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("watching the history from %d: %d", from, resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 64<<20)
	var out []event
	for sc.Scan() {
		var f struct {
			Result struct {
				Canceled        bool   `json:"canceled"`
				CompactRevision string `json:"compact_revision"`
				CancelReason    string `json:"cancel_reason"`
				Events          []struct {
					Type string `json:"type"`
					Kv   struct {
						Key            []byte `json:"key"`
						CreateRevision string `json:"create_revision"`
						ModRevision    string `json:"mod_revision"`
					} `json:"kv"`
				} `json:"events"`
			} `json:"result"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			return nil, fmt.Errorf("history: %v in %q", err, sc.Bytes())
		}
		if f.Error != nil {
			return nil, fmt.Errorf("history: %s", f.Error.Message)
		}
		if f.Result.Canceled {
			return nil, fmt.Errorf("history from %d: canceled (compacted at %s) %s", from, f.Result.CompactRevision, f.Result.CancelReason)
		}
		done := false
		for _, e := range f.Result.Events {
			rev, _ := strconv.ParseInt(e.Kv.ModRevision, 10, 64)
			if rev >= upTo {
				done = true // a revision's events come in one response
			}
			name, ok := strings.CutPrefix(string(e.Kv.Key), historyPrefix)
			if rev > upTo || !ok || strings.Contains(name, "/") {
				continue
			}
			typ := "MODIFIED"
			switch {
			case e.Type == "DELETE":
				typ = "DELETED"
			case e.Kv.CreateRevision == e.Kv.ModRevision:
				typ = "ADDED"
			}
			out = append(out, event{rv: rev, typ: typ, name: name})
		}
		if done {
			return out, nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("history from %d ended before revision %d", from, upTo)
}
