package kubediff

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// side is one server under test and what the runner knows of its state.
type side struct {
	label      string
	c          *http.Client
	coll       string // collection URL: …/namespaces/default/<resource>
	gateway    string // etcd v3 JSON gateway base (…/v3)
	apiVersion string
	kind       string

	start int64 // store revision before the first op
	rev   int64 // store revision after the last op
	objs  map[string]*objState
	keep  bool // writes carry the keep label and annotation
	// lastTimes holds each managedFields entry's time as last answered,
	// by uid|manager|operation; writer is the manager of the request in
	// flight ("" for reads).
	lastTimes map[string]string
	writer    string
	cont      string // continue token of the last successful list
	// byWrites, when set, renders resourceVersions by the writes of the
	// sequence instead of relative to start (see relRV): for a server whose
	// compactor writes on its own between the requests.
	byWrites bool
	writes   []int64           // the resourceVersions the sequence's writes answered, in order
	uids     map[string]string // uid → "uid-N", by first appearance
	nextUID  int
}

type objState struct {
	rv, prev int64 // last known resourceVersion and the one before
	uid      string
}

func newSide(label string, c *http.Client, coll, gateway, apiVersion, kind string) *side {
	return &side{label: label, c: c, coll: coll, gateway: gateway, apiVersion: apiVersion, kind: kind,
		objs: map[string]*objState{}, uids: map[string]string{}, lastTimes: map[string]string{}}
}

// newSides are the two servers a sequence runs on: the reference's
// flunders and the rvplay session's configmaps.
func newSides(c *http.Client, ref reference, rvBase string) []*side {
	return []*side{
		newSide("sample-apiserver", c, ref.serverURL+"/apis/wardle.example.com/v1alpha1/namespaces/default/flunders", ref.etcdURL+"/v3", "wardle.example.com/v1alpha1", "Flunder"),
		newSide("rvplay", c, rvBase+"/api/v1/namespaces/default/configmaps", rvBase+"/v3", "v1", "ConfigMap"),
	}
}

// storeRevision reads the store's current revision through its etcd
// gateway (a range of one key answers with the header revision).
func (s *side) storeRevision() (int64, error) {
	resp, err := s.c.Post(s.gateway+"/kv/range", "application/json", strings.NewReader(`{"key":"AA==","limit":1}`))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var r struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return 0, err
	}
	return strconv.ParseInt(r.Header.Revision, 10, 64)
}

// An answer is one request and its response, raw and normalised.
type answer struct {
	req  string // method, URL, body
	raw  string
	norm any
}

// abs is the revision rel stands for: rel past the start, or with
// byWrites the rel-th write's (the start for 0).
func (s *side) abs(rel int64) int64 {
	if s.byWrites && rel > 0 && int(rel) <= len(s.writes) {
		return s.writes[rel-1]
	}
	return s.start + rel
}

// relRV renders an absolute resourceVersion relative to the side's start
// ("@N"); 0 and unparsable values are kept as they are.
//
// With byWrites, "@wK" is the revision of the sequence's K-th write and
// "@wK+" one after it that no write of the sequence made (kube's compactor
// writes compact_rev_key between requests, at times of its own).
func (s *side) relRV(v string) string {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n == 0 {
		return v
	}
	if s.byWrites {
		k := sort.Search(len(s.writes), func(i int) bool { return s.writes[i] > n })
		r := "@w" + strconv.Itoa(k)
		if k == 0 || s.writes[k-1] != n {
			r += "+"
		}
		return r
	}
	return "@" + strconv.FormatInt(n-s.start, 10)
}

func (s *side) uidAlias(u string) string {
	if u == "" || u == wrongUID {
		return u
	}
	if a, ok := s.uids[u]; ok {
		return a
	}
	s.nextUID++
	a := "uid-" + strconv.Itoa(s.nextUID)
	s.uids[u] = a
	return a
}

const (
	keepAnnotation = "kubediff/keep"
	keepLabel      = "keep"
)

const wrongUID = "00000000-0000-0000-0000-000000000000"

// Resource-name swaps: the reference's names are rewritten to rvplay's.
var nameSwaps = strings.NewReplacer(
	// sample-apiserver's etcd prefix is /registry/wardle.example.com and
	// the group resource adds the group again.
	"/registry/wardle.example.com/wardle.example.com/flunders/", "/registry/configmaps/",
	"/registry/wardle.example.com/flunders/", "/registry/configmaps/",
	"flunders.wardle.example.com", "configmaps",
	"Flunder.wardle.example.com", "ConfigMap",
	"wardle.example.com/v1alpha1", "v1",
	"FlunderList", "ConfigMapList",
	"flunders", "configmaps",
	"Flunder", "ConfigMap",
)

// Numbers in messages that are resourceVersions.
var rvInMessage = []*regexp.Regexp{
	regexp.MustCompile(`(?i)(resource ?version[^0-9"]{0,40}?)(\d+)`),
	regexp.MustCompile(`(current: )(\d+)`),
	regexp.MustCompile(`(too old resource version: \d+ \()(\d+)`),
	regexp.MustCompile(`(required revision )(\d+)`),
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

func (s *side) normMessage(m string) string {
	m = nameSwaps.Replace(m)
	for _, re := range rvInMessage {
		m = re.ReplaceAllStringFunc(m, func(x string) string {
			sub := re.FindStringSubmatch(x)
			return sub[1] + s.relRV(sub[2])
		})
	}
	return uuidRE.ReplaceAllStringFunc(m, s.uidAlias)
}

// do sends one request and returns the status code and body.
func (s *side) do(ctx context.Context, method, u, contentType, body string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "kubediff/1.0")
	resp, err := s.c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// normBody normalises a JSON response: a Status, a list or an object.
func (s *side) normBody(code int, b []byte) any {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return map[string]any{"code": code, "body": s.normMessage(strings.TrimSpace(string(b)))}
	}
	out := map[string]any{"code": code}
	kind, _ := m["kind"].(string)
	switch {
	case kind == "Status":
		out["status"] = s.normStatus(m)
	case strings.HasSuffix(kind, "List"):
		out["list"] = s.normList(m)
	case kind != "":
		out["object"] = s.normObject(m)
	default:
		// etcd gateway answers (compaction). etcd 3.4's gateway also
		// repeats the message as "error", 3.6's does not: only the
		// message and the gRPC code are compared.
		if msg, ok := m["message"]; ok {
			out["message"] = s.normMessage(fmt.Sprint(msg))
		}
		if c, ok := m["code"]; ok {
			out["grpcCode"] = c
		}
	}
	return out
}

func (s *side) normStatus(m map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"status", "reason", "code"} {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	if msg, ok := m["message"].(string); ok {
		out["message"] = s.normMessage(msg)
	}
	if d, ok := m["details"].(map[string]any); ok {
		nd := map[string]any{}
		for k, v := range d {
			switch k {
			case "group":
				if v == "wardle.example.com" {
					v = ""
				}
				if v != "" {
					nd[k] = v
				}
			case "kind", "name":
				nd[k] = nameSwaps.Replace(fmt.Sprint(v))
			case "uid":
				nd[k] = s.uidAlias(fmt.Sprint(v))
			case "causes":
				var cs []any
				for _, c := range v.([]any) {
					cm := c.(map[string]any)
					nc := map[string]any{}
					for ck, cv := range cm {
						if str, ok := cv.(string); ok {
							cv = s.normMessage(str)
						}
						nc[ck] = cv
					}
					cs = append(cs, nc)
				}
				// Server-side apply conflicts reach the causes in Go map
				// order over managers (structured-merge-diff's
				// ConflictsFromManagers), so the reference's order is not
				// deterministic: compare them as a set.
				sort.Slice(cs, func(i, j int) bool { return mustJSON(cs[i]) < mustJSON(cs[j]) })
				nd[k] = cs
			default:
				nd[k] = v
			}
		}
		out["details"] = nd
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		if c, ok := md["continue"].(string); ok && c != "" {
			out["continue"] = true
		}
	}
	return out
}

func (s *side) normList(m map[string]any) map[string]any {
	out := map[string]any{}
	md, _ := m["metadata"].(map[string]any)
	out["resourceVersion"] = s.relRV(fmt.Sprint(md["resourceVersion"]))
	if c, _ := md["continue"].(string); c != "" {
		out["continue"] = true
	}
	if r, ok := md["remainingItemCount"]; ok {
		out["remainingItemCount"] = r
	}
	var items []string
	list, _ := m["items"].([]any)
	for _, it := range list {
		o := it.(map[string]any)
		imd, _ := o["metadata"].(map[string]any)
		items = append(items, fmt.Sprintf("%v%s", imd["name"], s.relRV(fmt.Sprint(imd["resourceVersion"]))))
	}
	out["items"] = items
	if list == nil {
		out["items"] = m["items"] // null vs [] matters
	}
	return out
}

func (s *side) normObject(m map[string]any) map[string]any {
	out := map[string]any{"kind": nameSwaps.Replace(fmt.Sprint(m["kind"]))}
	md, _ := m["metadata"].(map[string]any)
	for k, v := range md {
		switch k {
		case "name", "namespace", "labels", "annotations", "generation", "finalizers":
			out[k] = v
		case "resourceVersion":
			out[k] = s.relRV(fmt.Sprint(v))
		case "uid":
			out[k] = s.uidAlias(fmt.Sprint(v))
		case "deletionTimestamp", "creationTimestamp":
			out[k] = v != nil
		case "managedFields":
			var mfs []any
			uid := fmt.Sprint(md["uid"])
			for _, e := range v.([]any) {
				em := e.(map[string]any)
				ne := map[string]any{}
				for ek, ev := range em {
					switch ek {
					case "time":
						// The writer's own entry gets the request's time
						// (which second is not deterministic); every other
						// entry must keep the time it had.
						key := uid + "|" + fmt.Sprint(em["manager"]) + "|" + fmt.Sprint(em["operation"])
						prev, seen := s.lastTimes[key]
						switch {
						case ev == nil:
							ne[ek] = "none"
						case em["manager"] == s.writer || !seen:
							ne[ek] = "set"
						case prev == ev:
							ne[ek] = "kept"
						default:
							ne[ek] = "changed"
						}
						s.lastTimes[key] = fmt.Sprint(ev)
					case "apiVersion":
						ne[ek] = nameSwaps.Replace(fmt.Sprint(ev))
					default:
						ne[ek] = ev
					}
				}
				mfs = append(mfs, ne)
			}
			// kube orders the entries by operation, then timestamp
			// (one-second resolution), then manager: the order depends on
			// when the requests ran, so compare them as a set. The times
			// themselves are not compared either: which second a write
			// falls in is not deterministic.
			sort.Slice(mfs, func(i, j int) bool { return mustJSON(mfs[i]) < mustJSON(mfs[j]) })
			out[k] = mfs
		default:
			out["metadata."+k] = v
		}
	}
	return out
}

// track updates what the runner knows of an object from a response.
func (s *side) track(name string, code int, b []byte, deleted bool) {
	if code >= 300 {
		return
	}
	if deleted {
		delete(s.objs, name)
		return
	}
	var m struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name            string `json:"name"`
			UID             string `json:"uid"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if json.Unmarshal(b, &m) != nil || m.Kind == "Status" || m.Metadata.Name == "" {
		return
	}
	rv, _ := strconv.ParseInt(m.Metadata.ResourceVersion, 10, 64)
	if n := len(s.writes); s.byWrites && (n == 0 || rv > s.writes[n-1]) {
		s.writes = append(s.writes, rv)
	}
	o := s.objs[m.Metadata.Name]
	if o == nil || o.uid != m.Metadata.UID {
		s.objs[m.Metadata.Name] = &objState{rv: rv, uid: m.Metadata.UID}
		return
	}
	if rv != o.rv {
		o.prev, o.rv = o.rv, rv
	}
}

// preRV resolves an object precondition on this side.
func (s *side) preRV(name, pre string) string {
	o := s.objs[name]
	switch pre {
	case "current":
		if o == nil {
			return strconv.FormatInt(s.rev, 10)
		}
		return strconv.FormatInt(o.rv, 10)
	case "stale":
		if o == nil {
			return strconv.FormatInt(s.abs(1), 10)
		}
		if o.prev != 0 {
			return strconv.FormatInt(o.prev, 10)
		}
		return strconv.FormatInt(o.rv-1, 10)
	case "zero":
		return strconv.FormatInt(s.abs(3), 10)
	}
	return ""
}

func (s *side) readRV(o op) string {
	switch o.RV {
	case "cur":
		return strconv.FormatInt(s.rev, 10)
	case "old":
		return strconv.FormatInt(s.abs(o.Rel), 10)
	case "future":
		return strconv.FormatInt(s.rev+40, 10)
	}
	return o.RV
}

func (s *side) body(name string, labels map[string]string, rv string, nullRemovals bool) map[string]any {
	md := map[string]any{"name": name}
	// With keep, every write also sets the label keep=1 (merge patches
	// never remove it) and every full object the annotation
	// kubediff/keep, so no object ever loses all its managed fields: after
	// that, both servers stop recording non-apply managers for it (kube's
	// skipNonAppliedManager; TestEmptiedLabels covers that case), which
	// would leave the rest of a sequence little managedFields to compare.
	if len(labels) > 0 || s.keep {
		l := map[string]any{}
		if s.keep {
			l[keepLabel] = "1"
		}
		for k, v := range labels {
			if v == "" {
				if nullRemovals {
					l[k] = nil
				}
				continue
			}
			l[k] = v
		}
		md["labels"] = l
	}
	if rv != "" {
		md["resourceVersion"] = rv
	}
	if !nullRemovals && s.keep {
		md["annotations"] = map[string]any{keepAnnotation: "1"}
	}
	return map[string]any{"apiVersion": s.apiVersion, "kind": s.kind, "metadata": md}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// exec runs one op on this side.
func (s *side) exec(o op, seq int) answer {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	item := s.coll + "/" + o.Name
	var method, u, ct, body string
	deleted := false
	switch o.Verb {
	case "create":
		method, u, ct = "POST", s.coll, "application/json"
		body = mustJSON(s.body(o.Name, o.Labels, s.preRV(o.Name, o.Pre), false))
	case "get":
		method, u = "GET", item
		if rv := s.readRV(o); rv != "" {
			u += "?resourceVersion=" + rv
		}
	case "update":
		method, u, ct = "PUT", item, "application/json"
		b := s.body(o.Name, o.Labels, s.preRV(o.Name, o.Pre), false)
		switch o.PreUID {
		case "current":
			if obj := s.objs[o.Name]; obj != nil {
				b["metadata"].(map[string]any)["uid"] = obj.uid
			}
		case "wrong":
			b["metadata"].(map[string]any)["uid"] = wrongUID
		}
		body = mustJSON(b)
	case "merge":
		method, u, ct = "PATCH", item, "application/merge-patch+json"
		b := s.body(o.Name, o.Labels, s.preRV(o.Name, o.Pre), true)
		body = mustJSON(map[string]any{"metadata": b["metadata"]})
	case "jsonpatch":
		method, u, ct = "PATCH", item, "application/json-patch+json"
		l := map[string]string{}
		if s.keep {
			l[keepLabel] = "1"
		}
		for k, v := range o.Labels {
			l[k] = v
		}
		ops := []any{map[string]any{"op": "add", "path": "/metadata/labels", "value": l}}
		if rv := s.preRV(o.Name, o.Pre); rv != "" {
			ops = append(ops, map[string]any{"op": "replace", "path": "/metadata/resourceVersion", "value": rv})
		}
		body = mustJSON(ops)
	case "apply":
		method, u, ct = "PATCH", item+"?fieldManager="+o.Manager, "application/apply-patch+yaml"
		if o.Force {
			u += "&force=true"
		}
		body = mustJSON(s.body(o.Name, o.Labels, s.preRV(o.Name, o.Pre), false))
	case "delete":
		method, u, ct = "DELETE", item, "application/json"
		opts := map[string]any{"kind": "DeleteOptions", "apiVersion": "v1"}
		pre := map[string]any{}
		if rv := s.preRV(o.Name, o.Pre); rv != "" {
			pre["resourceVersion"] = rv
		}
		switch o.PreUID {
		case "current":
			if obj := s.objs[o.Name]; obj != nil {
				pre["uid"] = obj.uid
			} else {
				pre["uid"] = wrongUID
			}
		case "wrong":
			pre["uid"] = wrongUID
		}
		if len(pre) > 0 {
			opts["preconditions"] = pre
		}
		body = mustJSON(opts)
		deleted = true
	case "list":
		q := url.Values{}
		if rv := s.readRV(o); rv != "" || o.RV == "0" {
			q.Set("resourceVersion", rv)
		}
		if o.RVM != "" {
			q.Set("resourceVersionMatch", o.RVM)
		}
		if o.Limit != 0 {
			q.Set("limit", strconv.Itoa(o.Limit))
		}
		if o.Continue && s.cont != "" {
			q.Set("continue", s.cont)
		}
		if o.BadContinue {
			q.Set("continue", "bm90LWEtdG9rZW4")
		}
		if o.Selector != "" {
			q.Set("labelSelector", o.Selector)
		}
		if o.FieldSelector != "" {
			q.Set("fieldSelector", o.FieldSelector)
		}
		method, u = "GET", s.coll+"?"+q.Encode()
	case "compact":
		method, u, ct = "POST", s.gateway+"/kv/compaction", "application/json"
		body = fmt.Sprintf(`{"revision":"%d","physical":true}`, s.abs(o.Rel))
	case "watch":
		return s.watch(o, seq)
	default:
		panic("unknown verb " + o.Verb)
	}
	switch o.Verb {
	case "apply":
		s.writer = o.Manager
	case "create", "update", "merge", "jsonpatch":
		s.writer = "kubediff" // the User-Agent up to its first /
	default:
		s.writer = ""
	}
	req := method + " " + u
	if body != "" {
		req += "\n" + body
	}
	code, b, err := s.do(ctx, method, u, ct, body)
	if err != nil {
		return answer{req: req, raw: err.Error(), norm: map[string]any{"transportError": true}}
	}
	if o.Verb == "list" && code == 200 {
		var l struct {
			Metadata struct {
				Continue string `json:"continue"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(b, &l)
		s.cont = l.Metadata.Continue
	}
	if o.Verb != "list" && o.Verb != "compact" {
		s.track(o.Name, code, b, deleted)
	}
	return answer{req: req, raw: string(b), norm: s.normBody(code, b)}
}

// watchEvent is a decoded event of a watch stream.
type watchEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// watch opens a watch, waits until it is established (its initial events
// are in, for the forms that have them), makes one fence write (a merge
// patch of the anchor's annotation, the same on both sides whatever the
// watch answered) and reads until the fence's event, an ERROR or the end
// of the stream. Timed-out reads are recorded as such: a server that
// never sends what the other sends shows up as a difference, not a hang.
func (s *side) watch(o op, seq int) answer {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	q := url.Values{"watch": {"1"}}
	if rv := s.readRV(o); rv != "" || o.RV == "0" {
		q.Set("resourceVersion", rv)
	}
	if o.RVM != "" {
		q.Set("resourceVersionMatch", o.RVM)
	}
	if o.SendInitial {
		q.Set("sendInitialEvents", "true")
	}
	if o.Bookmarks {
		q.Set("allowWatchBookmarks", "true")
	}
	if o.Selector != "" {
		q.Set("labelSelector", o.Selector)
	}
	u := s.coll + "?" + q.Encode()
	fence := fmt.Sprintf("f%d", seq)
	fenceBody := fmt.Sprintf(`{"metadata":{"annotations":{"fence":%q}}}`, fence)
	reqText := "GET " + u + "\n(then fence: PATCH " + anchor + " " + fenceBody + ")"

	live := len(s.objs) // objects whose state initial events report
	if o.Selector != "" {
		// Count the matching objects with a list the comparison does not
		// see (reads do not move the revision).
		lctx, lcancel := context.WithTimeout(context.Background(), 10*time.Second)
		code, b, err := s.do(lctx, "GET", s.coll+"?labelSelector="+url.QueryEscape(o.Selector), "", "")
		lcancel()
		var l struct {
			Items []json.RawMessage `json:"items"`
		}
		if err == nil && code == 200 && json.Unmarshal(b, &l) == nil {
			live = len(l.Items)
		}
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "kubediff/1.0")
	resp, err := s.c.Do(req)
	var events []any
	var raw bytes.Buffer
	out := map[string]any{}
	fenceWrite := func() {
		fctx, fcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer fcancel()
		code, b, err := s.do(fctx, "PATCH", s.coll+"/"+anchor, "application/merge-patch+json", fenceBody)
		if err != nil || code != 200 {
			out["fenceFailed"] = fmt.Sprintf("%d %s %v", code, b, err)
		}
		s.track(anchor, code, b, false)
	}
	if err != nil {
		fenceWrite()
		out["transportError"] = true
		return answer{req: reqText, raw: err.Error(), norm: out}
	}
	defer resp.Body.Close()
	out["code"] = resp.StatusCode
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		fenceWrite()
		return answer{req: reqText, raw: string(b), norm: s.normBody(resp.StatusCode, b)}
	}
	ch := make(chan watchEvent, 64)
	go func() {
		defer close(ch)
		dec := json.NewDecoder(io.TeeReader(resp.Body, &raw))
		for {
			var ev watchEvent
			if err := dec.Decode(&ev); err != nil {
				return
			}
			ch <- ev
		}
	}()
	type meta struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name            string            `json:"name"`
			ResourceVersion string            `json:"resourceVersion"`
			Annotations     map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	initial := o.RV == "" || o.RV == "0" || o.SendInitial
	waitEnd := o.SendInitial && o.Bookmarks
	added := 0
	fenced := !initial // exact-revision watches need no wait
	if fenced {
		fenceWrite()
	}
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	end := ""
	gotError := false
loop:
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				end = "closed"
				if gotError {
					end = "error, then closed"
				}
				break loop
			}
			var m meta
			_ = json.Unmarshal(ev.Object, &m)
			switch ev.Type {
			case "ERROR":
				var st map[string]any
				_ = json.Unmarshal(ev.Object, &st)
				events = append(events, map[string]any{"type": "ERROR", "status": s.normStatus(st)})
				gotError = true
				// Go on reading: the stream should end now.
				continue
			case "BOOKMARK":
				if m.Metadata.Annotations["k8s.io/initial-events-end"] == "true" {
					events = append(events, fmt.Sprintf("BOOKMARK(initial-events-end)%s", s.relRV(m.Metadata.ResourceVersion)))
					if !fenced {
						fenced = true
						fenceWrite()
					}
				}
				// Other bookmarks come on a timer: not compared.
				continue
			}
			e := ev.Type + " " + m.Metadata.Name + s.relRV(m.Metadata.ResourceVersion)
			if f := m.Metadata.Annotations["fence"]; f != "" && m.Metadata.Name == anchor {
				if f == fence {
					e += " (this fence)"
				} else {
					e += " (earlier fence)"
				}
			}
			events = append(events, e)
			if ev.Type == "ADDED" {
				added++
			}
			if !fenced && !waitEnd && added >= live {
				fenced = true
				fenceWrite()
			}
			if m.Metadata.Name == anchor && m.Metadata.Annotations["fence"] == fence && ev.Type != "ADDED" {
				end = "fence"
				break loop
			}
		case <-timer.C:
			end = "timeout"
			if !fenced {
				fenced = true
				fenceWrite()
				timer.Reset(10 * time.Second)
				end = ""
				events = append(events, "(no initial-state end seen within 10s; fence written)")
				continue
			}
			if gotError {
				end = "error, stream not closed"
			}
			break loop
		}
	}
	if !fenced {
		fenceWrite()
	}
	out["events"] = events
	out["end"] = end
	return answer{req: reqText, raw: raw.String(), norm: out}
}
