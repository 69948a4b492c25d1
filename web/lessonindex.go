package web

import (
	"encoding/json"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// LessonRef names one lesson for the page: its directory under
// static/lessons/, its number and its slug. The lab fetches the lesson's
// definition and texts from there as static files while the engine still
// loads, so that the lesson panel is ready when the lab is; set-up and
// verify are the session's routes.
type LessonRef struct {
	Dir    string `json:"dir"`
	Number int    `json:"number"`
	Slug   string `json:"slug"`
	// Steps counts the lesson's steps; Titles is its title in each
	// language it has (the first line of <lang>/00.md), so that the lesson
	// list shows without a request.
	Steps  int               `json:"steps"`
	Titles map[string]string `json:"titles"`
}

var (
	lessonIndexOnce sync.Once
	lessonIndex     []LessonRef
)

// LessonIndex lists the lessons embedded in web/lessons, in order.
func LessonIndex() []LessonRef {
	lessonIndexOnce.Do(func() {
		files := LessonFiles()
		entries, _ := fs.ReadDir(files, ".")
		for _, e := range entries {
			num, slug, ok := strings.Cut(e.Name(), "-")
			n, err := strconv.Atoi(num)
			if !e.IsDir() || !ok || err != nil {
				continue
			}
			b, err := fs.ReadFile(files, path.Join(e.Name(), "lesson.json"))
			if err != nil {
				continue
			}
			var def struct {
				Slug  string            `json:"slug"`
				Steps []json.RawMessage `json:"steps"`
			}
			if json.Unmarshal(b, &def) == nil && def.Slug != "" {
				slug = def.Slug
			}
			ref := LessonRef{Dir: e.Name(), Number: n, Slug: slug, Steps: len(def.Steps), Titles: map[string]string{}}
			langs, _ := fs.ReadDir(files, e.Name())
			for _, l := range langs {
				if !l.IsDir() {
					continue
				}
				intro, err := fs.ReadFile(files, path.Join(e.Name(), l.Name(), "00.md"))
				if err != nil {
					continue
				}
				first, _, _ := strings.Cut(string(intro), "\n")
				if title, ok := strings.CutPrefix(strings.TrimSpace(first), "# "); ok {
					// a copy: the title alone, not the whole text it was cut from
					ref.Titles[l.Name()] = strings.Clone(strings.TrimSpace(title))
				}
			}
			lessonIndex = append(lessonIndex, ref)
		}
		sort.Slice(lessonIndex, func(i, j int) bool { return lessonIndex[i].Number < lessonIndex[j].Number })
	})
	return lessonIndex
}
