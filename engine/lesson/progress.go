package lesson

import (
	"sort"
	"sync"
	"time"

	"github.com/rvplay/rvplay/engine/api"
)

// ProgressPath lists who has completed which steps (GET): the teacher sees
// the class, a student their own.
const ProgressPath = LessonsPath + "/progress"

// Progress is one person's completed steps of one lesson, as verify found
// them. A session keeps it in memory; the server keeps a class's in its
// database too (Service.Passed and RestoreProgress), so that it outlives
// the session's time in memory.
type Progress struct {
	Principal string    `json:"principal"`
	Name      string    `json:"name,omitempty"`
	Lesson    string    `json:"lesson"`
	Steps     []int     `json:"steps"`
	Updated   time.Time `json:"updated"`
}

// progressBook records passed steps per principal and lesson.
type progressBook struct {
	mu    sync.Mutex
	byKey map[[2]string]*Progress
}

// pass records that p passed step of slug at; first reports whether p had
// not passed it before.
func (b *progressBook) pass(p api.Principal, slug string, step int, at time.Time) (first bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byKey == nil {
		b.byKey = map[[2]string]*Progress{}
	}
	k := [2]string{p.ID, slug}
	pr := b.byKey[k]
	if pr == nil {
		pr = &Progress{Principal: p.ID, Name: p.Name, Lesson: slug}
		b.byKey[k] = pr
	}
	if at.After(pr.Updated) {
		pr.Updated = at
	}
	if pr.Name == "" {
		pr.Name = p.Name
	}
	for _, s := range pr.Steps {
		if s == step {
			return false
		}
	}
	pr.Steps = append(pr.Steps, step)
	sort.Ints(pr.Steps)
	return true
}

// RestoreProgress adds progress recorded elsewhere (the server keeps a
// class's beyond the session's time in memory) to what the Service
// answers. It tells Passed nothing.
func (s *Service) RestoreProgress(ps []Progress) {
	for _, pr := range ps {
		for _, step := range pr.Steps {
			s.progress.pass(api.Principal{ID: pr.Principal, Name: pr.Name}, pr.Lesson, step, pr.Updated)
		}
	}
}

// Progress returns the progress of principal ("" = everyone's), ordered
// by principal and lesson.
func (s *Service) Progress(principal string) []Progress { return s.progress.list(principal) }

// list returns the progress of principal ("" = everyone's), ordered by
// principal and lesson.
func (b *progressBook) list(principal string) []Progress {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := []Progress{}
	for _, pr := range b.byKey {
		if principal == "" || pr.Principal == principal {
			c := *pr
			c.Steps = append([]int(nil), pr.Steps...)
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Principal != out[j].Principal {
			return out[i].Principal < out[j].Principal
		}
		return out[i].Lesson < out[j].Lesson
	})
	return out
}
