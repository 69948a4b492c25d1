package classroom

import (
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/lesson"
	"github.com/rvplay/rvplay/engine/lesson/classnames"
	"github.com/rvplay/rvplay/engine/session"
	"github.com/rvplay/rvplay/engine/sqlite"
)

// keepProgress makes a class's lesson progress outlive the session's time
// in memory: the steps passed so far (in storage) are restored into the
// session just loaded, and each step passed from now on is written to
// storage as verify finds it.
func (r *Registry) keepProgress(name string, s *session.Session) error {
	if s.Lessons == nil {
		return nil
	}
	steps, err := r.store.ClassProgress(name)
	if err != nil {
		return err
	}
	s.Lessons.RestoreProgress(progressOf(steps, r.displayNames(name)))
	s.Lessons.Passed = func(p api.Principal, slug string, step int, at time.Time) {
		if err := r.store.AddPassedSteps(name, []sqlite.PassedStep{{Principal: p.ID, Lesson: slug, Step: step, PassedAt: at}}); err != nil {
			r.opts.Logger.Error("recording a passed lesson step failed", "session", name, "principal", p.ID,
				"lesson", slug, "step", step, "err", err)
		}
	}
	return nil
}

// keepFirstCreations makes the revisions at which students' own keys were
// first created outlive the session's time in memory, as its progress
// does: lesson 1's --rev=6 is the student's k1's first creation, which
// the lesson deletes and recreates, so a server that restarted after the
// recreation would otherwise read the recreation and quote it.
func (r *Registry) keepFirstCreations(name string, o *classnames.Owner) error {
	created, err := r.store.ClassFirstCreations(name)
	if err != nil {
		return err
	}
	o.Restore(created)
	o.Learned = func(key string, rev int64) {
		if err := r.store.AddFirstCreation(name, key, rev); err != nil {
			r.opts.Logger.Error("recording a key's first creation failed", "session", name, "key", key, "revision", rev, "err", err)
		}
	}
	return nil
}

// progressOf groups stored steps (ordered by principal, lesson and step)
// into the lesson engine's Progress, one per principal and lesson.
func progressOf(steps []sqlite.PassedStep, names map[string]string) []lesson.Progress {
	var out []lesson.Progress
	for _, st := range steps {
		n := len(out)
		if n == 0 || out[n-1].Principal != st.Principal || out[n-1].Lesson != st.Lesson {
			out = append(out, lesson.Progress{Principal: st.Principal, Name: names[st.Principal], Lesson: st.Lesson})
			n++
		}
		pr := &out[n-1]
		pr.Steps = append(pr.Steps, st.Step)
		if st.PassedAt.After(pr.Updated) {
			pr.Updated = st.PassedAt
		}
	}
	return out
}

// displayNames maps the IDs of session name's people to their names.
func (r *Registry) displayNames(name string) map[string]string {
	out := map[string]string{teacher.ID: teacher.Name}
	for _, p := range r.Students(name) {
		out[p.ID] = p.Name
	}
	return out
}
