package classroom

import (
	"bytes"
	"encoding/csv"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/engine/lesson"
	"github.com/rvplay/rvplay/engine/sqlite"
)

// The class's results, for the teacher's records (GET, the teacher's):
// per person and lesson, the steps passed and the detectors' findings.
// They come from what the server stores of the class (progress.go,
// findings.go), so they are complete whether the session is loaded or not.
const (
	ResultsJSONPath = "/rvplay/v1/results.json"
	ResultsCSVPath  = "/rvplay/v1/results.csv"
)

// Results is the answer of GET ResultsJSONPath.
type Results struct {
	Kind      string             `json:"kind"`
	Session   string             `json:"session"`
	Exported  time.Time          `json:"exported"`
	Lessons   []ResultsLesson    `json:"lessons"`
	Detectors []*lesson.Detector `json:"detectors"`
	People    []ResultsPerson    `json:"people"`
}

// ResultsLesson names a lesson and its number of steps.
type ResultsLesson struct {
	Slug   string `json:"slug"`
	Number int    `json:"number"`
	Steps  int    `json:"steps"`
}

// ResultsPerson is one person's results: every student who joined, and
// anyone else with progress or findings (the teacher trying the lessons).
type ResultsPerson struct {
	ID      string         `json:"id"`
	Name    string         `json:"name,omitempty"`
	Lessons []PersonLesson `json:"lessons"`
}

// PersonLesson is one person's results in one lesson ("": outside any,
// for findings only).
type PersonLesson struct {
	Lesson     string         `json:"lesson"`
	Passed     []int          `json:"passed"`
	LastPassed *time.Time     `json:"lastPassed,omitempty"`
	Findings   map[string]int `json:"findings"`
}

func (h *Handler) serveResults(w http.ResponseWriter, r *http.Request, info Session, path string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeStatus(w, kube.NewMethodNotSupported("rvplay", "results", strings.ToLower(r.Method)))
		return
	}
	res, err := h.Registry.results(info.Name)
	if err != nil {
		writeResponse(w, registryError(path, info.Name, err))
		return
	}
	stamp := res.Exported.UTC().Format("20060102-1504")
	if path == ResultsCSVPath {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Disposition", `attachment; filename="rvplay-`+info.Name+`-`+stamp+`.csv"`)
		w.Write(res.CSV())
		return
	}
	w.Header().Set("Content-Disposition", `attachment; filename="rvplay-`+info.Name+`-`+stamp+`.json"`)
	writeJSON(w, http.StatusOK, res)
}

// results gathers session name's results from storage, after storing
// what its record holds that is not stored yet, if it is loaded.
func (r *Registry) results(name string) (*Results, error) {
	if s, release, ok := r.ifLoaded(name); ok {
		r.tallyFindings(name, s, true)
		release()
	}
	steps, err := r.store.ClassProgress(name)
	if err != nil {
		return nil, err
	}
	findings, err := r.store.ClassFindingCounts(name)
	if err != nil {
		return nil, err
	}
	out := &Results{Kind: "ClassResults", Session: name, Exported: r.opts.Clock.Now().UTC(), Detectors: lesson.Detectors, Lessons: []ResultsLesson{}}
	if c := r.opts.Session.Lessons; c != nil {
		for _, l := range c.Lessons() {
			out.Lessons = append(out.Lessons, ResultsLesson{Slug: l.Slug, Number: l.Number, Steps: len(l.Steps)})
		}
	}
	out.People = peopleResults(r.Students(name), steps, findings)
	return out, nil
}

// peopleResults arranges stored steps and findings per person and lesson:
// the students in the order they joined, then anyone else by ID; each
// person's lessons by slug.
func peopleResults(students []api.Principal, steps []sqlite.PassedStep, findings []sqlite.FindingCount) []ResultsPerson {
	byID := map[string]map[string]*PersonLesson{}
	names := map[string]string{}
	var order []string
	add := func(id string) map[string]*PersonLesson {
		if byID[id] == nil {
			byID[id] = map[string]*PersonLesson{}
			order = append(order, id)
		}
		return byID[id]
	}
	for _, p := range students {
		add(p.ID)
		names[p.ID] = p.Name
	}
	var others []string
	lessonOf := func(id, slug string) *PersonLesson {
		if byID[id] == nil {
			others = append(others, id)
			byID[id] = map[string]*PersonLesson{}
		}
		pl := byID[id][slug]
		if pl == nil {
			pl = &PersonLesson{Lesson: slug, Passed: []int{}, Findings: map[string]int{}}
			byID[id][slug] = pl
		}
		return pl
	}
	for _, st := range steps {
		pl := lessonOf(st.Principal, st.Lesson)
		pl.Passed = append(pl.Passed, st.Step)
		if at := st.PassedAt.UTC(); pl.LastPassed == nil || at.After(*pl.LastPassed) {
			pl.LastPassed = &at
		}
	}
	for _, f := range findings {
		lessonOf(f.Principal, f.Lesson).Findings[f.Detector] += f.N
	}
	sort.Strings(others)
	out := make([]ResultsPerson, 0, len(order)+len(others))
	for _, id := range append(order, others...) {
		rp := ResultsPerson{ID: id, Name: names[id], Lessons: []PersonLesson{}}
		for _, slug := range sortedKeys(byID[id]) {
			rp.Lessons = append(rp.Lessons, *byID[id][slug])
		}
		out = append(out, rp)
	}
	return out
}

// CSV is the results as a table: one row per person and lesson (a person
// without any: one row with an empty lesson), a column per detector.
func (res *Results) CSV() []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	steps := map[string]int{}
	for _, l := range res.Lessons {
		steps[l.Slug] = l.Steps
	}
	head := []string{"id", "name", "lesson", "steps", "passed", "passed_steps", "last_passed"}
	for _, d := range res.Detectors {
		head = append(head, d.Name)
	}
	w.Write(head)
	for _, p := range res.People {
		lessons := p.Lessons
		if len(lessons) == 0 {
			lessons = []PersonLesson{{Findings: map[string]int{}}}
		}
		for _, pl := range lessons {
			passed := make([]string, len(pl.Passed))
			for i, n := range pl.Passed {
				passed[i] = strconv.Itoa(n)
			}
			last := ""
			if pl.LastPassed != nil {
				last = pl.LastPassed.Format(time.RFC3339)
			}
			total := ""
			if n, ok := steps[pl.Lesson]; ok {
				total = strconv.Itoa(n)
			}
			row := []string{csvText(p.ID), csvText(p.Name), pl.Lesson, total, strconv.Itoa(len(pl.Passed)), strings.Join(passed, " "), last}
			for _, d := range res.Detectors {
				row = append(row, strconv.Itoa(pl.Findings[d.Name]))
			}
			w.Write(row)
		}
	}
	w.Flush()
	return b.Bytes()
}

// csvText keeps a display name from being read as a formula by a
// spreadsheet (CSV injection): a leading =, +, - or @ gets a quote.
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
