package lesson

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// The control paths the Service answers, under a session's base URL.
const (
	// LessonsPath lists the lessons (GET); LessonsPath/<slug> is one
	// definition (GET); LessonsPath/<slug>/setup prepares the session
	// (POST); LessonsPath/<slug>/steps/<n>/verify evaluates step n,
	// counted from 1 (POST, body {"since": <seq>}); ProgressPath lists the
	// steps verify found completed.
	LessonsPath = "/rvplay/v1/lessons"
	// MisconceptionsPath lists the detectors and what they found (GET).
	MisconceptionsPath = "/rvplay/v1/misconceptions"
)

// Service answers a session's lesson routes. The session builds it with
// its store, itself (set-up requests go through the session's own APIs,
// so they are recorded and watched like any client's) and its record.
type Service struct {
	Catalog *Catalog
	Store   mvcc.ReadView
	// Handler is the session: set-up sends its requests there.
	Handler api.Handler
	// Exchanges returns the session's record, oldest first: principal's
	// own exchanges (all that the record keeps of them), or everyone's for
	// "".
	Exchanges func(principal string) []Exchange
	// Now stamps progress (default: the wall clock).
	Now func() time.Time
	// Passed, if set, is told of each step a principal passes for the
	// first time, as it is found (the server records a class's progress).
	Passed func(p api.Principal, lesson string, step int, at time.Time)
	// Own, if set, gives p the lesson l with their own names (a student
	// of a class's session: package classnames), which its definition,
	// set-up and verify then use. Nil: everyone has the article's names,
	// as offline.
	Own func(l *Lesson, p api.Principal) *Lesson

	progress progressBook
}

// Handles reports whether path is one of the Service's.
func Handles(path string) bool {
	return path == LessonsPath || strings.HasPrefix(path, LessonsPath+"/") || path == MisconceptionsPath
}

// VerifyRequest is the body of a verify call.
type VerifyRequest struct {
	// Since is the Seq of the newest exchange when the learner entered
	// the step: only later exchanges can complete it.
	Since int64 `json:"since"`
}

// VerifyResponse is the answer of a verify call.
type VerifyResponse struct {
	Lesson string `json:"lesson"`
	Step   int    `json:"step"`
	Result
	// Seq is the newest exchange in the record: the lab passes it as
	// Since when it moves to the next step.
	Seq int64 `json:"seq"`
}

// Verify evaluates step n (from 1) of the lesson l (nil: none called
// slug) for principal ("" = everyone's exchanges).
func (s *Service) Verify(l *Lesson, slug string, n int, since int64, principal string) (*VerifyResponse, error) {
	if l == nil {
		return nil, errNoLesson(slug)
	}
	if n < 1 || n > len(l.Steps) {
		return nil, kube.NewNotFound("rvplay", "steps", slug+"/"+strconv.Itoa(n))
	}
	record := s.record(principal)
	out := &VerifyResponse{Lesson: slug, Step: n, Seq: lastSeq(record)}
	step := &l.Steps[n-1]
	if step.Verify == nil {
		out.Passed = true // a step to read: nothing to achieve
		return out, nil
	}
	st := &State{Store: s.Store, Exchanges: record, Since: since}
	res, err := step.Verify.Eval(st)
	if err != nil {
		return nil, kube.NewInternalError(err)
	}
	out.Result = res
	return out, nil
}

// record is principal's exchanges ("": everyone's), oldest first.
func (s *Service) record(principal string) []Exchange {
	if s.Exchanges == nil {
		return nil
	}
	return OfPrincipal(s.Exchanges(principal), principal)
}

func lastSeq(record []Exchange) int64 {
	if len(record) == 0 {
		return 0
	}
	return record[len(record)-1].Seq
}

func errNoLesson(slug string) error { return kube.NewNotFound("rvplay", "lessons", slug) }

// Serve answers the lesson routes; other paths get 404.
func (s *Service) Serve(ctx context.Context, req *api.Request) *api.Response {
	p := api.PrincipalFrom(ctx)
	if req.Path == MisconceptionsPath {
		if req.Method != "GET" {
			return errorResponse(kube.NewMethodNotSupported("rvplay", "misconceptions", strings.ToLower(req.Method)))
		}
		return jsonResponse(200, s.misconceptions(p))
	}
	rest := strings.Trim(strings.TrimPrefix(req.Path, LessonsPath), "/")
	parts := strings.Split(rest, "/")
	l := s.Catalog.Lesson(parts[0])
	if l != nil && s.Own != nil {
		l = s.Own(l, p)
	}
	switch {
	case rest == "" && req.Method == "GET":
		return jsonResponse(200, map[string]any{"lessons": s.Catalog.Lessons()})
	case req.Path == ProgressPath && req.Method == "GET":
		who := p.ID
		if p.Role == api.RoleTeacher {
			who = ""
		}
		return jsonResponse(200, map[string]any{"progress": s.progress.list(who)})
	case len(parts) == 1 && req.Method == "GET":
		if l == nil {
			return errorResponse(errNoLesson(parts[0]))
		}
		return jsonResponse(200, l)
	case len(parts) == 2 && parts[1] == "setup" && req.Method == "POST":
		if l == nil {
			return errorResponse(errNoLesson(parts[0]))
		}
		return jsonResponse(200, s.Setup(ctx, l))
	case len(parts) == 4 && parts[1] == "steps" && parts[3] == "verify" && req.Method == "POST":
		n, err := strconv.Atoi(parts[2])
		if err != nil {
			return errorResponse(kube.NewBadRequest(fmt.Sprintf("step %q is not a number", parts[2])))
		}
		var body VerifyRequest
		if len(req.Body) > 0 {
			if err := json.Unmarshal(req.Body, &body); err != nil {
				return errorResponse(kube.NewBadRequest("verify: the body is {\"since\": <seq>}: " + err.Error()))
			}
		}
		principal := ""
		if p.Role != api.RoleTeacher {
			principal = p.ID
		}
		out, err := s.Verify(l, parts[0], n, body.Since, principal)
		if err != nil {
			return errorResponse(err)
		}
		if out.Passed {
			now := time.Now
			if s.Now != nil {
				now = s.Now
			}
			at := now()
			if s.progress.pass(p, out.Lesson, out.Step, at) && s.Passed != nil {
				s.Passed(p, out.Lesson, out.Step, at)
			}
		}
		return jsonResponse(200, out)
	case len(parts) <= 4 && (parts[0] != ""):
		return errorResponse(kube.NewMethodNotSupported("rvplay", "lessons", strings.ToLower(req.Method)))
	}
	return errorResponse(kube.NewNotFound("rvplay", "lessons", rest))
}

// Misconceptions is the answer of GET /rvplay/v1/misconceptions.
type Misconceptions struct {
	Detectors []*Detector `json:"detectors"`
	// Counts per detector, and per detector per principal.
	Counts      map[string]int            `json:"counts"`
	ByPrincipal map[string]map[string]int `json:"byPrincipal"`
	Findings    []Finding                 `json:"findings"`
}

// misconceptions runs the detectors over the record: the whole class's for
// the teacher, a student's own otherwise.
func (s *Service) misconceptions(p api.Principal) *Misconceptions {
	who := p.ID
	if p.Role == api.RoleTeacher {
		who = ""
	}
	record := s.record(who)
	out := &Misconceptions{Detectors: Detectors, Counts: map[string]int{}, ByPrincipal: map[string]map[string]int{}, Findings: FindAll(record)}
	for _, d := range Detectors {
		out.Counts[d.Name] = 0
	}
	for _, f := range out.Findings {
		out.Counts[f.Detector]++
		if out.ByPrincipal[f.Detector] == nil {
			out.ByPrincipal[f.Detector] = map[string]int{}
		}
		out.ByPrincipal[f.Detector][f.Principal]++
	}
	if out.Findings == nil {
		out.Findings = []Finding{}
	}
	return out
}

func jsonResponse(code int, v any) *api.Response {
	body, err := json.Marshal(v)
	if err != nil {
		return errorResponse(kube.NewInternalError(err))
	}
	return &api.Response{Status: code, Header: api.Header{"Content-Type": {"application/json"}}, Body: append(body, '\n')}
}

func errorResponse(err error) *api.Response {
	se := kube.AsStatus(err)
	return &api.Response{Status: se.Code(), Header: api.Header{"Content-Type": {"application/json"}}, Body: se.JSON()}
}
