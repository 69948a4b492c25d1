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
				Slug string `json:"slug"`
			}
			if json.Unmarshal(b, &def) == nil && def.Slug != "" {
				slug = def.Slug
			}
			lessonIndex = append(lessonIndex, LessonRef{Dir: e.Name(), Number: n, Slug: slug})
		}
		sort.Slice(lessonIndex, func(i, j int) bool { return lessonIndex[i].Number < lessonIndex[j].Number })
	})
	return lessonIndex
}
