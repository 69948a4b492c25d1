package classroom

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/engine/lesson"
	"github.com/rvplay/rvplay/engine/session"
)

// PushPath moves the class to a lesson step (POST {"lesson": "<slug>",
// "step": <n>}, the teacher's; step 0 is the lesson's introduction): the
// lesson's set-up is applied for the class, once, as the teacher, and
// every student's lab opens that step. GET answers the last push, which a
// browser also gets when its channel connects.
const PushPath = "/rvplay/v1/push"

// Push is one move of the class to a lesson step.
type Push struct {
	// ID orders pushes: a lab applies a push it has not applied yet. It is
	// the push's time in milliseconds (one more than the last if the
	// clock has not moved), so it keeps growing across server restarts.
	ID     int64     `json:"id"`
	Lesson string    `json:"lesson"`
	Step   int       `json:"step"`
	At     time.Time `json:"at"`
	By     string    `json:"by"`
}

// PushResult answers a push.
type PushResult struct {
	Kind string `json:"kind"`
	Push
	// Setup is what the lesson's set-up did, when this push applied it
	// (the first push into the lesson since the session was loaded or
	// reset).
	Setup *lesson.SetupResult `json:"setup,omitempty"`
	// Delivered counts the students' browsers the push was sent to.
	Delivered int `json:"delivered"`
}

// perLoad keeps what holds for one loaded store of a session: a store
// loaded again (after the session was unloaded) or reset starts afresh.
type perLoad[T any] struct {
	mu    sync.Mutex
	store *session.Session
	v     T
}

// with calls f with the value for s, made new by fresh if s is not the
// store it was kept for.
func (p *perLoad[T]) with(s *session.Session, fresh func() T, f func(*T)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.store != s {
		p.store, p.v = s, fresh()
	}
	f(&p.v)
}

func (p *perLoad[T]) forget() {
	p.mu.Lock()
	var zero T
	p.store, p.v = nil, zero
	p.mu.Unlock()
}

// setupOnce remembers the lessons set up in one loaded store of a
// session. A store loaded again or reset has lost the settings a set-up
// applied (they live in memory), so the next push into a lesson applies
// its set-up again; the objects it creates that are still there are left
// as they are. Its lock is held while a set-up runs: two pushes apply it
// once.
type setupOnce struct{ perLoad[map[string]bool] }

// apply runs setup for slug unless it ran in s already, and reports what
// it did (nil: nothing).
func (o *setupOnce) apply(s *session.Session, slug string, setup func() *lesson.SetupResult) (res *lesson.SetupResult) {
	o.with(s, func() map[string]bool { return map[string]bool{} }, func(done *map[string]bool) {
		if (*done)[slug] {
			return
		}
		res = setup()
		(*done)[slug] = true
	})
	return res
}

// newPush records the class's next push.
func (c *class) newPush(slug string, step int, by api.Principal) Push {
	at := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	id := at.UnixMilli()
	if c.push != nil && id <= c.push.ID {
		id = c.push.ID + 1
	}
	p := Push{ID: id, Lesson: slug, Step: step, At: at, By: by.ID}
	c.push = &p
	return p
}

func (c *class) lastPush() *Push {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.push == nil {
		return nil
	}
	p := *c.push
	return &p
}

// pushMessage is a push as the channel carries it.
type pushMessage struct {
	Type string `json:"type"`
	Push
}

func (h *Handler) servePush(w http.ResponseWriter, r *http.Request, info Session, p api.Principal) {
	c, ok := h.Registry.class(info.Name)
	if !ok {
		writeResponse(w, sessionNotFound(info.Name))
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		writeJSON(w, http.StatusOK, map[string]any{"kind": "Push", "push": c.lastPush()})
		return
	case http.MethodPost:
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		writeStatus(w, kube.NewMethodNotSupported("rvplay", "push", strings.ToLower(r.Method)))
		return
	}
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	req, err := decodePush(body)
	if err != nil {
		writeStatus(w, kube.NewBadRequest(err.Error()))
		return
	}
	catalog := h.Registry.opts.Session.Lessons
	var l *lesson.Lesson
	if catalog != nil {
		l = catalog.Lesson(req.Lesson)
	}
	if l == nil {
		writeStatus(w, kube.NewNotFound("rvplay", "lessons", req.Lesson))
		return
	}
	if req.Step > len(l.Steps) {
		writeStatus(w, kube.NewInvalid("rvplay", "Push", req.Lesson, []kube.FieldError{{Type: kube.CauseFieldValueInvalid,
			Field: "step", Value: strconv.Itoa(req.Step), Detail: "lesson " + strconv.Quote(req.Lesson) + " has steps 1 to " + strconv.Itoa(len(l.Steps)) + " (0: its introduction)"}}))
		return
	}
	loaded, release, err := h.Registry.Acquire(r.Context(), info.Name)
	if err != nil {
		writeResponse(w, registryError(PushPath, info.Name, err))
		return
	}
	defer release()
	s := loaded.Session()
	out := PushResult{Kind: "Push"}
	if s.Lessons != nil {
		ctx := api.WithPrincipal(context.WithoutCancel(r.Context()), p)
		before := s.Settings()
		out.Setup = c.setup.apply(s, l.Slug, func() *lesson.SetupResult { return s.Lessons.Setup(ctx, l) })
		if out.Setup != nil {
			h.Registry.keepSettings(info.Name, s, before)
		}
	}
	out.Push = c.newPush(l.Slug, req.Step, p)
	out.Delivered = c.broadcast(mustJSON(pushMessage{Type: "push", Push: out.Push}), func(conn *channelConn) bool { return !conn.teacher })
	h.Registry.opts.Logger.Info("class pushed to a lesson step", "session", info.Name, "lesson", l.Slug, "step", req.Step,
		"setup", out.Setup != nil, "delivered", out.Delivered)
	writeJSON(w, http.StatusOK, out)
}
