package classroom

import (
	"strconv"
	"time"

	"github.com/rvplay/rvplay/engine/lesson"
	"github.com/rvplay/rvplay/engine/session"
	"github.com/rvplay/rvplay/engine/sqlite"
)

// A class's misconceptions, counted: the lesson engine's detectors run
// over each student's exchanges (their own ring of the session's record,
// --exchange-record-per-student), which are in memory and bounded, so what
// they find is written to storage as it
// is found: when the teacher's dashboard asks, when results are
// exported, and before the session's store is unloaded or reset. Each
// finding is counted once, under the lesson its person was in when the
// exchange that shows it happened.

// maxLessonHistory bounds the lesson changes kept per person for that.
const maxLessonHistory = 32

// lessonChange is when a person's browser reported a lesson.
type lessonChange struct {
	at     time.Time
	lesson string
}

// noteLessonLocked records that who moved to lesson now.
func (c *class) noteLessonLocked(id, lesson string, now time.Time) {
	h := c.history[id]
	if n := len(h); n > 0 && h[n-1].lesson == lesson {
		return
	}
	if len(h) == maxLessonHistory {
		h = append(h[:0], h[1:]...)
	}
	c.history[id] = append(h, lessonChange{at: now, lesson: lesson})
}

// lessonAt is the lesson person id was in at t, as their browser
// reported it ("" when none was reported before t).
func (c *class) lessonAt(id string, t time.Time) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.history[id]
	for i := len(h) - 1; i >= 0; i-- {
		if !h[i].at.After(t) {
			return h[i].lesson
		}
	}
	return ""
}

// tally is what one loaded store's findings came to so far: the store's
// epoch (which names its exchanges uniquely across loads, since each load
// numbers its record from 1), the findings stored already, and when the
// dashboard may have the detectors run again.
type tally struct {
	epoch  string
	stored map[string]bool // detector + "/" + exchange
	next   time.Time
}

// tallyShare bounds the time the detectors take for a dashboard's polls: a
// run that took d is not repeated before 10·d has passed (10% of a core
// at most, per session), however often the dashboard asks. A full record
// of 50,000 exchanges takes about 300 ms (BENCHMARKS.md).
const tallyShare = 10

// tallyFindings runs the detectors over s's record and stores what is new.
// Unless force (the record is about to go, or the results are exported),
// it skips a run that would come sooner than tallyShare allows.
func (r *Registry) tallyFindings(name string, s *session.Session, force bool) {
	c, ok := r.class(name)
	if !ok {
		return
	}
	c.tally.with(s, func() tally {
		return tally{epoch: strconv.FormatInt(r.opts.Clock.Now().UnixNano(), 36), stored: map[string]bool{}}
	}, func(t *tally) {
		start := time.Now()
		if !force && start.Before(t.next) {
			return
		}
		defer func() { t.next = time.Now().Add(tallyShare * time.Since(start)) }()
		var add []sqlite.Finding
		// Each student's own ring: the detectors look at one client of
		// one person at a time, and a student's ring holds more of theirs
		// than the session's ring, which the class shares.
		for _, student := range s.Record.Students() {
			record := s.LessonExchanges(student)
			for _, f := range lesson.FindAll(record) {
				e := &record[f.Index]
				exchange := t.epoch + "/" + strconv.FormatInt(e.Seq, 10)
				if t.stored[f.Detector+"/"+exchange] {
					continue
				}
				add = append(add, sqlite.Finding{Detector: f.Detector, Exchange: exchange, Principal: f.Principal,
					Lesson: c.lessonAt(f.Principal, e.Time), FoundAt: e.Time})
			}
		}
		if err := r.store.AddFindings(name, add); err != nil {
			r.opts.Logger.Error("recording the class's findings failed", "session", name, "err", err)
			return
		}
		for _, f := range add {
			t.stored[f.Detector+"/"+f.Exchange] = true
		}
	})
}
