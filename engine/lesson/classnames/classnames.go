// Package classnames gives each student of a class's session their own
// names in a lesson. All students of a class share one store, so the
// article's names collide: lesson 1 checks that k1 is at version 1, and
// thirty students putting k1 break each other's check. A lesson's
// definition says in its "class" object which of its names each student
// gets a copy of, or that its names are shared because the lesson is
// about people racing on one object (lessons 3 and 4). A name a lesson
// does not list stays everyone's: lesson 6 gives each student their own
// d, which their step creates and deletes, on the ConfigMaps a, b and c
// that the whole class writes and the teacher compacts:
//
//	"class": {"names": ["k1", "k2", "k3"], "revisions": {"6": "k1"}}
//	"class": {"names": ["x"], "namespace": true}
//	"class": {"names": ["d"]}
//	"class": {"shared": "two people race on one Deployment"}
//
// For a student, a name n becomes n-<their id> (the id is a DNS-1123 label,
// so the result is a valid object name and etcd key part); with
// "namespace" the namespace default becomes the student's own namespace
// (named by their id, created when they joined); "revisions" maps a
// revision the article quotes in a command (etcdctl get k1 --rev=6) to the
// create_revision of the student's copy of a key, read from the store
// when the definition is asked for and then kept: the article's 6 is the
// key's first creation, which the lesson's next steps delete and
// recreate (the server keeps what an Owner learned with the class's
// progress: Learned, Restore). The rewriting covers the set-up's
// objects, every action (console commands, their stdin manifests, client
// operations), the verify predicates and the traps; the definition served
// to the student carries the map it applied ("own") so that the lab
// rewrites the code in the lesson's texts the same way.
//
// The teacher, an open session and the offline lab keep the article's
// names: the package is the server's (the WebAssembly build never links
// it; lesson.Service.Own is nil there).
package classnames

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/engine/lesson"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// Class is a lesson's "class" object.
type Class struct {
	// Shared says why everyone works on the article's names (a lesson
	// about people racing on one object). Exclusive with Names,
	// Namespace and Revisions.
	Shared string `json:"shared,omitempty"`
	// Names are the lesson's keys and object names each student gets
	// their own copy of.
	Names []string `json:"names,omitempty"`
	// Namespace: the namespace default is the student's own namespace
	// (lessons that list and watch a namespace's objects).
	Namespace bool `json:"namespace,omitempty"`
	// Revisions maps a revision quoted in a command, a client action or
	// a text to what it stands for: the name of the key whose
	// create_revision it is in the article ("6": "k1"), an etcd key as
	// the article writes it, whose words become the student's as in a
	// command ("6": "/registry/configmaps/default/a": a set-up object's
	// first resourceVersion, in the student's namespace), or "+N", N past
	// the store's revision when the step begins (a resourceVersion too new
	// to be served).
	Revisions map[string]string `json:"revisions,omitempty"`
	// Own is what a served definition's names became for its student
	// (name -> own name, "default" -> their namespace, "6" -> revision).
	Own map[string]string `json:"own,omitempty"`
}

// Of reads l's class object; a lesson without one is an error (every
// lesson must decide).
func Of(l *lesson.Lesson) (*Class, error) {
	if len(l.Class) == 0 {
		return nil, fmt.Errorf("%s: no \"class\": say whether students share its names or get their own", l.Dir)
	}
	var c Class
	dec := json.NewDecoder(strings.NewReader(string(l.Class)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: class: %w", l.Dir, err)
	}
	own := len(c.Names) > 0 || c.Namespace || len(c.Revisions) > 0
	switch {
	case c.Shared != "" && own:
		return nil, fmt.Errorf("%s: class: shared names or own names, not both", l.Dir)
	case c.Shared == "" && !own:
		return nil, fmt.Errorf("%s: class: names to own, or why they are shared", l.Dir)
	case len(c.Own) > 0:
		return nil, fmt.Errorf("%s: class: \"own\" is the server's answer, not part of a definition", l.Dir)
	}
	for _, n := range c.Names {
		if n == "" || tokenEnd(n, 0) != len(n) {
			return nil, fmt.Errorf("%s: class: name %q is not one word", l.Dir, n)
		}
	}
	for rev, to := range c.Revisions {
		if !isRevision(rev) || !slices.Contains(c.Names, to) && !(strings.HasPrefix(to, "+") && isRevision(to[1:])) && !strings.HasPrefix(to, "/") {
			return nil, fmt.Errorf("%s: class: revision %q must be a number, and %q one of the names, an etcd key (/...) or +<number>", l.Dir, rev, to)
		}
	}
	return &c, nil
}

// Check reads the class object of every lesson of c.
func Check(c *lesson.Catalog) error {
	var errs []error
	for _, l := range c.Lessons() {
		if _, err := Of(l); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Owner gives students their own names in lessons, reading the revisions
// it maps from store. Its For is a lesson.Service's Own.
type Owner struct {
	store mvcc.ReadView

	mu    sync.Mutex
	cache map[string]*lesson.Lesson // lesson dir, own map -> rewritten lesson
	// created is the create_revision first seen of a student's own key
	// (by the key): lesson 1 deletes k1 and creates it again, and its 6
	// still means the first creation.
	created map[string]int64

	// Learned, if set, is told of each first creation as the Owner learns
	// it from the store (the server keeps them with the class's progress,
	// and Restore gives them back to the Owner of the session loaded
	// again). Set it before the Owner is used.
	Learned func(key string, rev int64)
}

// Restore gives o the first creations an earlier Owner of the same store
// learned (Learned), by key.
func (o *Owner) Restore(created map[string]int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for k, r := range created {
		remember(o.created, k, r)
	}
}

// maxCached bounds each of an Owner's maps (students x lessons x
// revisions seen).
const maxCached = 4096

// remember sets m[k], emptying m first when it is full: a bound on
// memory, not an LRU (what it forgets is read again from the store).
func remember[V any](m map[string]V, k string, v V) {
	if len(m) >= maxCached {
		clear(m)
	}
	m[k] = v
}

// New returns an Owner over store.
func New(store mvcc.ReadView) *Owner {
	return &Owner{store: store, cache: map[string]*lesson.Lesson{}, created: map[string]int64{}}
}

// For returns l as p works on it: with their own names if p is a student
// and l gives students their own; l itself otherwise, and when the
// rewriting fails (a definition that does not parse once rewritten is a
// bug the lessons' tests catch; the article's names still work).
func (o *Owner) For(l *lesson.Lesson, p api.Principal) *lesson.Lesson {
	if p.Role != api.RoleStudent || kube.IsDNS1123Label(p.ID) != nil {
		return l
	}
	c, err := Of(l)
	if err != nil || c.Shared != "" {
		return l
	}
	own := o.ownMap(c, p.ID)
	key := l.Dir + "\x00" + mapKey(own)
	o.mu.Lock()
	cached := o.cache[key]
	o.mu.Unlock()
	if cached != nil {
		return cached
	}
	out, err := Rewrite(l, c, own)
	if err != nil {
		return l
	}
	o.mu.Lock()
	remember(o.cache, key, out)
	o.mu.Unlock()
	return out
}

// Suffix is what a student's own names end with.
func Suffix(id string) string { return "-" + id }

// ownMap is what c's names become for the student id.
func (o *Owner) ownMap(c *Class, id string) map[string]string {
	own := map[string]string{}
	for _, n := range c.Names {
		own[n] = n + Suffix(id)
	}
	if c.Namespace {
		own["default"] = id
	}
	names := maps.Clone(own) // a key's words are names, not the revisions mapped below
	for rev, to := range c.Revisions {
		var r int64
		if ahead, ok := strings.CutPrefix(to, "+"); ok {
			// Between N and 2N past the store's revision, the same
			// for N revisions (so the rewritten lesson stays cached).
			n, _ := strconv.ParseInt(ahead, 10, 64)
			r = (o.store.Rev()/n + 2) * n
		} else if strings.HasPrefix(to, "/") {
			r = o.firstCreated(Words(to, names))
		} else {
			r = o.firstCreated(own[to])
		}
		if r > 0 {
			own[rev] = strconv.FormatInt(r, 10)
		}
	}
	return own
}

func isRevision(s string) bool {
	n, err := strconv.ParseInt(s, 10, 64)
	return err == nil && n > 0
}

// firstCreated is the create_revision of key's first generation this
// Owner saw (0: none yet), as long as it is not compacted away.
func (o *Owner) firstCreated(key string) int64 {
	o.mu.Lock()
	first, ok := o.created[key]
	o.mu.Unlock()
	if ok && first >= o.store.CompactRev() {
		return first
	}
	r := o.createRevision(key)
	if r > 0 {
		o.mu.Lock()
		remember(o.created, key, r)
		o.mu.Unlock()
		if o.Learned != nil {
			o.Learned(key, r)
		}
	}
	return r
}

// createRevision is key's create_revision now (0: it does not exist).
func (o *Owner) createRevision(key string) int64 {
	resp, err := o.store.Range(context.Background(), &mvcc.RangeRequest{Key: []byte(key)})
	if err != nil || len(resp.Kvs) == 0 {
		return 0
	}
	return resp.Kvs[0].CreateRevision
}

func mapKey(m map[string]string) string {
	b, _ := json.Marshal(m) // sorted keys
	return string(b)
}

// Rewrite returns a copy of l whose names are replaced as own says, with
// own recorded in its class object.
func Rewrite(l *lesson.Lesson, c *Class, own map[string]string) (*lesson.Lesson, error) {
	raw, err := json.Marshal(l)
	if err != nil {
		return nil, err
	}
	var def map[string]any
	if err := json.Unmarshal(raw, &def); err != nil {
		return nil, err
	}
	r := &rewriter{own: own, namespace: c.Namespace, ns: own["default"]}
	if setup, ok := def["setup"].(map[string]any); ok {
		for _, o := range list(setup["objects"]) {
			r.object(o)
		}
	}
	for _, s := range list(def["steps"]) {
		step, _ := s.(map[string]any)
		for _, a := range list(step["actions"]) {
			r.action(a)
		}
		for _, t := range list(step["traps"]) {
			trap, _ := t.(map[string]any)
			for _, a := range list(trap["actions"]) {
				r.action(a)
			}
		}
		if v, ok := step["verify"]; ok && v != nil {
			r.predicate(v)
		}
	}
	cc := *c
	cc.Own = own
	def["class"] = cc
	delete(def, "number")
	delete(def, "dir")
	data, err := json.Marshal(def)
	if err != nil {
		return nil, err
	}
	return lesson.Parse(l.Dir, data)
}

// rewriter replaces names in a definition's JSON tree, in the places that
// hold names: not in labels, images or container names, which share the
// article's words ("app: nginx", "nginx:1.14.2") but are not the object's
// name.
type rewriter struct {
	own       map[string]string
	namespace bool   // default -> ns
	ns        string // the student's namespace
}

func list(v any) []any { l, _ := v.([]any); return l }

// Words replaces every word of s that own names (a word is a run of
// letters, digits, '-', '_' and '.': "k1", "nginx-deployment", "6" in
// "--rev=6", "nginx" in "deployment/nginx" and in
// "/registry/deployments/default/nginx").
func Words(s string, own map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := tokenEnd(s, i)
		if j == i {
			b.WriteByte(s[i])
			i++
			continue
		}
		w := s[i:j]
		if r, ok := own[w]; ok {
			w = r
		}
		b.WriteString(w)
		i = j
	}
	return b.String()
}

// tokenEnd is where the word starting at i ends (i: no word there).
func tokenEnd(s string, i int) int {
	for i < len(s) {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			break
		}
		i++
	}
	return i
}

// str replaces m[field], a string, with fn of it.
func str(m map[string]any, field string, fn func(string) string) {
	if s, ok := m[field].(string); ok {
		m[field] = fn(s)
	}
}

func (r *rewriter) words(s string) string { return Words(s, r.own) }

// name replaces a whole name.
func (r *rewriter) name(s string) string {
	if n, ok := r.own[s]; ok {
		return n
	}
	return s
}

func (r *rewriter) object(v any) {
	o, _ := v.(map[string]any)
	meta, _ := o["metadata"].(map[string]any)
	if meta == nil {
		return
	}
	str(meta, "name", r.name)
	str(meta, "namespace", r.name)
	if _, set := meta["namespace"]; !set && r.namespace && o["kind"] != "Namespace" {
		meta["namespace"] = r.ns
	}
}

func (r *rewriter) action(v any) {
	a, _ := v.(map[string]any)
	if a == nil {
		return
	}
	str(a, "run", r.words)
	str(a, "stdin", r.manifest)
	str(a, "name", r.name)
	str(a, "namespace", r.name)
	str(a, "resourceVersion", r.name) // a number the class maps; "list", "keep"... are no names
	if _, set := a["namespace"]; !set && r.namespace && a["client"] != nil && a["resource"] != "namespaces" {
		a["namespace"] = r.ns
	}
	if o, ok := a["object"]; ok {
		r.object(o)
	}
}

// manifest replaces the name and namespace of a manifest's top-level
// metadata, and nothing else: its labels and containers keep the
// article's words. A YAML manifest has them as "metadata:" then
// "  name: nginx"; a JSON one (the body of a kubectl replace --raw, which
// the server reads as JSON) is decoded and encoded again.
func (r *rewriter) manifest(s string) string {
	if strings.HasPrefix(strings.TrimSpace(s), "{") {
		return r.jsonManifest(s)
	}
	lines := strings.Split(s, "\n")
	inMeta := false
	for i, line := range lines {
		switch {
		case line == "metadata:":
			inMeta = true
		case !strings.HasPrefix(line, " "):
			inMeta = false
		case inMeta:
			for _, f := range []string{"  name: ", "  namespace: "} {
				if v, ok := strings.CutPrefix(line, f); ok {
					lines[i] = f + r.name(strings.TrimSpace(v))
				}
			}
		}
	}
	return strings.Join(lines, "\n")
}

// jsonManifest is manifest for a JSON object (its keys come out sorted);
// what is not one object is left as it is, for the server to refuse.
func (r *rewriter) jsonManifest(s string) string {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var o map[string]any
	if err := dec.Decode(&o); err != nil || dec.More() {
		return s
	}
	meta, _ := o["metadata"].(map[string]any)
	if meta == nil {
		return s
	}
	str(meta, "name", r.name)
	str(meta, "namespace", r.name)
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(o); err != nil {
		return s
	}
	if strings.HasSuffix(s, "\n") {
		return b.String()
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// predicate replaces names in a predicate and the matches inside it.
func (r *rewriter) predicate(v any) {
	p, _ := v.(map[string]any)
	for k, x := range p {
		switch k {
		case "all", "any":
			for _, q := range list(x) {
				r.predicate(q)
			}
		case "not":
			r.predicate(x)
		case "key", "object", "exchange":
			r.match(x)
		case "sequence":
			seq, _ := x.(map[string]any)
			for _, m := range list(seq["steps"]) {
				r.match(m)
			}
		}
	}
}

// match replaces the names a key check, an object check or an exchange
// match names.
func (r *rewriter) match(v any) {
	m, _ := v.(map[string]any)
	if m == nil {
		return
	}
	str(m, "name", r.name)
	str(m, "namespace", r.name)
	str(m, "key", r.words)
	str(m, "keyPrefix", r.words)
}
