package lesson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"time"
)

// DefinitionFile is the name of a lesson's definition in its directory.
const DefinitionFile = "lesson.json"

// Lesson is one lesson's definition: everything about it that does not
// depend on the learner's language.
type Lesson struct {
	// Number and Dir come from the directory name ("01-etcd-revisions").
	Number int    `json:"number"`
	Dir    string `json:"dir"`
	Slug   string `json:"slug"`
	Setup  Setup  `json:"setup"`
	Steps  []Step `json:"steps"`
	// Class says whether, on a class's session, each student gets their
	// own copy of the lesson's names or everyone shares the article's.
	// Only the server reads it (package classnames): offline and on an
	// open session every learner has the article's names.
	Class json.RawMessage `json:"class,omitempty"`
}

// Setup is what a lesson starts from.
type Setup struct {
	// Fresh asks for a new, empty store (revision 1) where the session
	// can give one (offline). Revision numbers quoted in the texts assume
	// it. On a shared server session the objects are created if missing.
	Fresh bool `json:"fresh,omitempty"`
	// Settings are the session settings the lesson needs (bookmark
	// interval, automatic compaction interval, watch-cache lag), as
	// PUT /rvplay/v1/settings takes them.
	Settings json.RawMessage `json:"settings,omitempty"`
	// Objects are created in order through the Kubernetes API.
	Objects []json.RawMessage `json:"objects,omitempty"`
	// Clients are the lab's clients the lesson uses ("A", "B", "R").
	Clients []string `json:"clients,omitempty"`
}

// Step is one step: click-to-run actions, the "show me" solution (a
// sequence of those actions), the predicate that says the step is done,
// and traps: plausible action sequences that must not pass it.
type Step struct {
	ID       string     `json:"id"`
	Actions  []Action   `json:"actions,omitempty"`
	Solution []string   `json:"solution,omitempty"`
	Verify   *Predicate `json:"verify,omitempty"`
	Traps    []Trap     `json:"traps,omitempty"`
}

// Trap is a wrong way through a step: after its actions (from the step's
// start) the verify predicate must still fail. Note says, for authors,
// why it is wrong.
type Trap struct {
	Note    string   `json:"note"`
	Actions []Action `json:"actions"`
}

// Action is one click-to-run action. Exactly one of Run, Client, Compact,
// Settings and Wait says what it is.
type Action struct {
	ID string `json:"id,omitempty"`

	// Run is a console command line, as the articles write it
	// ("etcdctl put k1 v1", "kubectl get deployment nginx -o yaml").
	Run string `json:"run,omitempty"`
	// Stdin is what the command reads from "-" (kubectl apply -f -).
	Stdin string `json:"stdin,omitempty"`

	// Client is the lab's client that performs Do (see ClientOps).
	Client string `json:"client,omitempty"`
	Do     string `json:"do,omitempty"`

	// Compact compacts the store: "head" at its current revision.
	Compact string `json:"compact,omitempty"`
	// Settings changes session settings (as Setup.Settings).
	Settings json.RawMessage `json:"settings,omitempty"`
	// Wait lets time pass ("6s"): the lab waits, tests step a fake clock.
	Wait string `json:"wait,omitempty"`

	// Parameters of client operations.
	Resource  string `json:"resource,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	// Set assigns fields (dotted paths) of the client's last read copy
	// before an update ("spec.replicas": 5).
	Set map[string]any `json:"set,omitempty"`
	// ResourceVersion: for update, "keep" (default: send the one read)
	// or "drop" (send none: an unconditional update); for get, list and
	// watch, the query parameter, or "list" (the client's last list's),
	// "last" (the last one its watch delivered), "item" (an item's from
	// its last list, older than the list's).
	ResourceVersion      string `json:"resourceVersion,omitempty"`
	ResourceVersionMatch string `json:"resourceVersionMatch,omitempty"`
	Limit                int64  `json:"limit,omitempty"`
	// Continue: "last" sends the continue token of the client's last list.
	Continue            string `json:"continue,omitempty"`
	AllowWatchBookmarks bool   `json:"allowWatchBookmarks,omitempty"`
	SendInitialEvents   *bool  `json:"sendInitialEvents,omitempty"`
	Subresource         string `json:"subresource,omitempty"`
	// PatchType is "merge", "json" or "strategic"; Patch the patch.
	PatchType string          `json:"patchType,omitempty"`
	Patch     json.RawMessage `json:"patch,omitempty"`
	// Object is the body of create and apply.
	Object       json.RawMessage `json:"object,omitempty"`
	FieldManager string          `json:"fieldManager,omitempty"`
	Force        bool            `json:"force,omitempty"`
	// Backoff names client-go's retry timing for retryOnConflict:
	// "DefaultRetry" or "DefaultBackoff".
	Backoff string `json:"backoff,omitempty"`
	// Read is how retryOnConflict re-reads: "fresh" (default, a GET
	// without resourceVersion) or "cache" (resourceVersion=0).
	Read string `json:"read,omitempty"`
	// WatchList makes startReflector use watch-list (KEP-3157).
	WatchList bool `json:"watchList,omitempty"`
}

// ClientOps are the operations a lab client performs (Action.Do):
//
//	get, list, create, update, patch, apply, delete  one request each
//	watch, stopWatch        open (one at a time) and close a watch
//	retryOnConflict         GET, apply Set, PUT; again on 409 (Backoff)
//	startReflector, stopReflector   client-go's list-then-watch loop
//	disconnect, reconnect   the client's connection drops (its streams end,
//	                        its requests wait) and comes back
//
// The session's deployment controller is no client: a lesson runs or
// pauses it with the setting "controllers".
var ClientOps = []string{
	"get", "list", "create", "update", "patch", "apply", "delete",
	"watch", "stopWatch", "retryOnConflict",
	"startReflector", "stopReflector", "disconnect", "reconnect",
}

// Kind says what sort of action a is: "run", "client", "compact",
// "settings" or "wait".
func (a *Action) Kind() string {
	switch {
	case a.Run != "":
		return "run"
	case a.Client != "":
		return "client"
	case a.Compact != "":
		return "compact"
	case len(a.Settings) > 0:
		return "settings"
	case a.Wait != "":
		return "wait"
	}
	return ""
}

func (a *Action) check() error {
	n := 0
	for _, set := range []bool{a.Run != "", a.Client != "", a.Compact != "", len(a.Settings) > 0, a.Wait != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		return errors.New("an action has exactly one of run, client, compact, settings and wait")
	}
	switch a.Kind() {
	case "client":
		if !contains(ClientOps, a.Do) {
			return fmt.Errorf("client %s: unknown operation %q (known: %s)", a.Client, a.Do, strings.Join(ClientOps, ", "))
		}
		if a.Backoff != "" && a.Backoff != "DefaultRetry" && a.Backoff != "DefaultBackoff" {
			return fmt.Errorf("unknown backoff %q", a.Backoff)
		}
		if a.Read != "" && a.Read != "fresh" && a.Read != "cache" {
			return fmt.Errorf("unknown read %q", a.Read)
		}
		if a.Do == "update" && a.ResourceVersion != "" && a.ResourceVersion != "keep" && a.ResourceVersion != "drop" {
			return fmt.Errorf("update: resourceVersion is keep or drop, not %q", a.ResourceVersion)
		}
	case "compact":
		if a.Compact != "head" {
			return fmt.Errorf("compact: %q (only \"head\")", a.Compact)
		}
	case "wait":
		if _, err := a.WaitDuration(); err != nil {
			return err
		}
	}
	return nil
}

// WaitDuration parses Wait.
func (a *Action) WaitDuration() (time.Duration, error) {
	d, err := time.ParseDuration(a.Wait)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("wait: %q is not a positive duration", a.Wait)
	}
	return d, nil
}

// Action returns the step's action with id, or nil.
func (s *Step) Action(id string) *Action {
	for i := range s.Actions {
		if s.Actions[i].ID == id {
			return &s.Actions[i]
		}
	}
	return nil
}

// SolutionActions are the actions "show me" runs, in order.
func (s *Step) SolutionActions() []Action {
	out := make([]Action, 0, len(s.Solution))
	for _, id := range s.Solution {
		if a := s.Action(id); a != nil {
			out = append(out, *a)
		}
	}
	return out
}

// isSlug: lower-case letters and digits in words joined by single dashes
// ("etcd-revisions"). Hand-written rather than a regexp: the regexp
// package would cost the WebAssembly build about 100 KB gzip.
func isSlug(s string) bool {
	if s == "" || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// isClientName: a letter, then up to 15 letters, digits or dashes.
func isClientName(s string) bool {
	if s == "" || len(s) > 16 || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// splitDir splits "01-etcd-revisions" into 1 and "etcd-revisions".
func splitDir(dir string) (int, string, bool) {
	if len(dir) < 4 || dir[2] != '-' || dir[0] < '0' || dir[0] > '9' || dir[1] < '0' || dir[1] > '9' || !isSlug(dir[3:]) {
		return 0, "", false
	}
	return int(dir[0]-'0')*10 + int(dir[1]-'0'), dir[3:], true
}

// Parse reads one definition; dir is its directory's name.
func Parse(dir string, data []byte) (*Lesson, error) {
	n, slug, ok := splitDir(dir)
	if !ok {
		return nil, fmt.Errorf("lesson directory %q: want <nn>-<slug>, e.g. 01-etcd-revisions", dir)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var l Lesson
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("%s/%s: %w", dir, DefinitionFile, err)
	}
	if l.Number != 0 && l.Number != n {
		return nil, fmt.Errorf("%s: number %d does not match the directory", dir, l.Number)
	}
	l.Number, l.Dir = n, dir
	if l.Slug != slug {
		return nil, fmt.Errorf("%s: slug %q does not match the directory (want %q)", dir, l.Slug, slug)
	}
	if err := l.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return &l, nil
}

func (l *Lesson) check() error {
	if len(l.Steps) == 0 {
		return errors.New("a lesson has at least one step")
	}
	for _, c := range l.Setup.Clients {
		if !isClientName(c) {
			return fmt.Errorf("setup: client name %q", c)
		}
	}
	for i, o := range l.Setup.Objects {
		var obj struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(o, &obj); err != nil || obj.APIVersion == "" || obj.Kind == "" || obj.Metadata.Name == "" {
			return fmt.Errorf("setup: object %d needs apiVersion, kind and metadata.name", i)
		}
	}
	if len(l.Setup.Settings) > 0 && !isJSONObject(l.Setup.Settings) {
		return errors.New("setup: settings is a JSON object")
	}
	seen := map[string]bool{}
	for i := range l.Steps {
		s := &l.Steps[i]
		if !isSlug(s.ID) || seen[s.ID] {
			return fmt.Errorf("step %d: id %q is missing, malformed or repeated", i+1, s.ID)
		}
		seen[s.ID] = true
		ids := map[string]bool{}
		for j := range s.Actions {
			a := &s.Actions[j]
			if a.ID == "" || ids[a.ID] {
				return fmt.Errorf("step %s: action %d needs an id of its own", s.ID, j+1)
			}
			ids[a.ID] = true
			if err := a.check(); err != nil {
				return fmt.Errorf("step %s, action %s: %w", s.ID, a.ID, err)
			}
		}
		for _, id := range s.Solution {
			if !ids[id] {
				return fmt.Errorf("step %s: solution names %q, which is not one of its actions", s.ID, id)
			}
		}
		if s.Verify != nil && len(s.Solution) == 0 {
			return fmt.Errorf("step %s: a step with a verify predicate has a solution", s.ID)
		}
		for k, t := range s.Traps {
			if s.Verify == nil {
				return fmt.Errorf("step %s: traps need a verify predicate", s.ID)
			}
			if t.Note == "" || len(t.Actions) == 0 {
				return fmt.Errorf("step %s: trap %d needs a note and actions", s.ID, k+1)
			}
			for m := range t.Actions {
				if err := t.Actions[m].check(); err != nil {
					return fmt.Errorf("step %s, trap %d: %w", s.ID, k+1, err)
				}
			}
		}
	}
	return nil
}

// Catalog is the set of lessons, in order.
type Catalog struct {
	lessons []*Lesson
	// read, set by Open, reads the lessons on first use instead.
	read func() []*Lesson
}

// Open checks every lesson of fsys as Load does and returns a catalog
// that reads them again on first use: read, they are some 300 KB of live
// heap, which every collection of a server's heap marks, and most of a
// server's requests never ask for a lesson. A broken lesson still fails
// at once. fsys must not change (an embed.FS): a second read that failed
// would leave the catalog without lessons.
func Open(fsys fs.FS) (*Catalog, error) {
	if _, err := Load(fsys); err != nil {
		return nil, err
	}
	return &Catalog{read: sync.OnceValue(func() []*Lesson {
		c, err := Load(fsys)
		if err != nil {
			return nil
		}
		return c.lessons
	})}, nil
}

// Load reads every <nn>-<slug>/lesson.json of fsys.
func Load(fsys fs.FS) (*Catalog, error) {
	dirs, err := lessonDirs(fsys)
	if err != nil {
		return nil, err
	}
	c := &Catalog{}
	numbers, slugs := map[int]string{}, map[string]string{}
	for _, dir := range dirs {
		f := dir + "/" + DefinitionFile
		data, err := fs.ReadFile(fsys, f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		l, err := Parse(dir, data)
		if err != nil {
			return nil, err
		}
		if d, ok := numbers[l.Number]; ok {
			return nil, fmt.Errorf("%s and %s have the same number", d, l.Dir)
		}
		if d, ok := slugs[l.Slug]; ok {
			return nil, fmt.Errorf("%s and %s have the same slug", d, l.Dir)
		}
		numbers[l.Number], slugs[l.Slug] = l.Dir, l.Dir
		c.lessons = append(c.lessons, l)
	}
	sort.Slice(c.lessons, func(i, j int) bool { return c.lessons[i].Number < c.lessons[j].Number })
	return c, nil
}

// lessonDirs lists the directories at the top of fsys, in no particular
// order (Load sorts the lessons by number). It reads the directory itself
// rather than through fs.Glob or fs.ReadDir, which sort and match
// patterns: 11 KB gzip of the WebAssembly build for a listing that needs
// neither.
func lessonDirs(fsys fs.FS) ([]string, error) {
	root, err := fsys.Open(".")
	if err != nil {
		return nil, err
	}
	defer root.Close()
	rd, ok := root.(fs.ReadDirFile)
	if !ok {
		return nil, fmt.Errorf("lesson: the root of %T is not a directory", fsys)
	}
	entries, err := rd.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	return dirs, nil
}

// Lessons returns the lessons in order.
func (c *Catalog) Lessons() []*Lesson {
	if c.read != nil {
		return c.read()
	}
	return c.lessons
}

// Lesson returns the lesson with slug, or nil.
func (c *Catalog) Lesson(slug string) *Lesson {
	for _, l := range c.Lessons() {
		if l.Slug == slug {
			return l
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func isJSONObject(raw json.RawMessage) bool {
	var m map[string]any
	return json.Unmarshal(raw, &m) == nil && m != nil
}
