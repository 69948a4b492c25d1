package lessons_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/engine/lesson"
	"github.com/rvplay/rvplay/web/lessons"
)

var marker = regexp.MustCompile(`(?m)^<!--\s*(.*?)\s*-->\s*$`)

// sections counts a text's hints and says whether it has a real-cluster
// note, refusing unknown markers (and accepting the flag
// compares-revisions, which flags).
func sections(text string) (hints int, realCluster bool, err error) {
	for _, m := range marker.FindAllStringSubmatch(text, -1) {
		switch m[1] {
		case "hint":
			hints++
		case "real-cluster":
			realCluster = true
		case classNote:
		case comparesRevisions:
		default:
			return 0, false, fmt.Errorf("unknown marker <!-- %s -->", m[1])
		}
	}
	return hints, realCluster, nil
}

// comparesRevisions flags a text that compares revision numbers: on a
// server whose sessions share an etcd cluster the lab adds that they jump
// when other sessions write (web/lessons/README.md).
const comparesRevisions = "compares-revisions"

// classNote starts an introduction's note for a class session: which
// numbers its texts quote stay the article's there (web/lessons/README.md).
const classNote = "class"

// flags are a text's flag markers.
func flags(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range marker.FindAllStringSubmatch(text, -1) {
		if m[1] == comparesRevisions || m[1] == classNote {
			out[m[1]] = true
		}
	}
	return out
}

// Every lesson has its English texts, one per step plus the introduction;
// every other language has the same files, each starting with a title, and
// the same number of hints per step as the English.
func TestEveryLanguageHasEveryTextWithTheSameHints(t *testing.T) {
	files := lessons.Files()
	for _, l := range catalog(t).Lessons() {
		langs, err := fs.ReadDir(files, l.Dir)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"00.md"}
		for i := range l.Steps {
			want = append(want, fmt.Sprintf("%02d.md", i+1))
		}
		englishHints := map[string]int{}
		englishFlags := map[string]bool{}
		hasEnglish := false
		for _, lang := range langs {
			if lang.IsDir() && lang.Name() == "en" {
				hasEnglish = true
			}
		}
		if !hasEnglish {
			t.Errorf("%s has no English texts", l.Dir)
			continue
		}
		order := []string{"en"}
		for _, lang := range langs {
			if lang.IsDir() && lang.Name() != "en" {
				order = append(order, lang.Name())
			}
		}
		for _, lang := range order {
			dir := path.Join(l.Dir, lang)
			entries, err := fs.ReadDir(files, dir)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range entries {
				got = append(got, e.Name())
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s: files %v, want %v", dir, got, want)
				continue
			}
			for n, name := range want {
				b, err := fs.ReadFile(files, path.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				text := string(b)
				if !strings.HasPrefix(text, "# ") {
					t.Errorf("%s/%s does not start with a # title", dir, name)
				}
				hints, _, err := sections(text)
				if err != nil {
					t.Errorf("%s/%s: %v", dir, name, err)
				}
				if lang == "en" {
					englishHints[name] = hints
					if n > 0 && l.Steps[n-1].Verify != nil && hints == 0 {
						t.Errorf("%s/%s: a step to achieve has at least one hint", dir, name)
					}
				} else if hints != englishHints[name] {
					t.Errorf("%s/%s has %d hints, the English %d", dir, name, hints, englishHints[name])
				}
				for _, flag := range []string{comparesRevisions, classNote} {
					flagged := flags(text)[flag]
					if lang == "en" {
						englishFlags[flag+name] = flagged
					} else if flagged != englishFlags[flag+name] {
						t.Errorf("%s/%s: <!-- %s --> %v, in English %v", dir, name, flag, flagged, englishFlags[flag+name])
					}
				}
				if flags(text)[classNote] && n > 0 {
					t.Errorf("%s/%s: <!-- %s --> in a step: a class note is the introduction's", dir, name, classNote)
				}
			}
		}
	}
}

// The commands a step's text shows in console blocks, in every language,
// are the ones its run actions perform, so "show me" does what the text
// says.
func TestConsoleBlocksShowTheStepsCommands(t *testing.T) {
	block := regexp.MustCompile("(?s)```console\n(.*?)```")
	files := lessons.Files()
	for _, l := range catalog(t).Lessons() {
		langs, err := fs.ReadDir(files, l.Dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, lang := range langs {
			if lang.IsDir() {
				consoleBlocksMatch(t, files, l, lang.Name(), block)
			}
		}
	}
}

func consoleBlocksMatch(t *testing.T, files fs.FS, l *lesson.Lesson, lang string, block *regexp.Regexp) {
	t.Helper()
	{
		for i, s := range l.Steps {
			name := path.Join(l.Dir, lang, fmt.Sprintf("%02d.md", i+1))
			b, err := fs.ReadFile(files, name)
			if err != nil {
				continue // the file test reports it
			}
			runs := map[string]bool{}
			for _, a := range s.Actions {
				if a.Run != "" {
					runs[a.Run] = true
				}
			}
			for _, m := range block.FindAllStringSubmatch(string(b), -1) {
				for _, line := range strings.Split(strings.TrimSpace(m[1]), "\n") {
					if !runs[line] {
						t.Errorf("%s shows %q, which is none of its step's run actions", name, line)
					}
				}
			}
		}
	}
}

// A lesson that turns the session's watch cache off, away from
// kube-apiserver's default (--watch-cache=true), says so in an "in a real
// cluster" note, in every language, naming the flag: why it does, and
// what a learner would see with it on.
func TestALessonWithoutTheWatchCacheSaysSoInARealClusterNote(t *testing.T) {
	files := lessons.Files()
	for _, l := range catalog(t).Lessons() {
		var settings struct {
			WatchCache string `json:"watchCache"`
		}
		if len(l.Setup.Settings) > 0 {
			if err := json.Unmarshal(l.Setup.Settings, &settings); err != nil {
				t.Fatal(err)
			}
		}
		if settings.WatchCache != "off" {
			continue
		}
		langs, err := fs.ReadDir(files, l.Dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, lang := range langs {
			if !lang.IsDir() {
				continue
			}
			dir := path.Join(l.Dir, lang.Name())
			texts, _ := fs.Glob(files, path.Join(dir, "*.md"))
			said := false
			for _, name := range texts {
				b, err := fs.ReadFile(files, name)
				if err != nil {
					t.Fatal(err)
				}
				_, note, _ := strings.Cut(string(b), "<!-- real-cluster -->")
				said = said || strings.Contains(note, "`--watch-cache")
			}
			if !said {
				t.Errorf("%s turns the watch cache off and no real-cluster note of %s says so (name `--watch-cache`)", l.Dir, dir)
			}
		}
	}
}

// A step's text opens with what the step does, in words or as the command
// to run, never with a manifest: at 1440x900 a manifest first (lesson 11
// step 1's 36 lines of JSON) filled the panel, and what the step teaches
// was below the fold.
func TestAStepTextDoesNotOpenWithAManifest(t *testing.T) {
	files := lessons.Files()
	texts, err := fs.Glob(files, "*/*/[0-9]*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range texts {
		if path.Base(name) == "00.md" {
			continue
		}
		b, err := fs.ReadFile(files, name)
		if err != nil {
			t.Fatal(err)
		}
		_, body, _ := strings.Cut(string(b), "\n")
		first, _, _ := strings.Cut(strings.TrimLeft(body, " \n"), "\n")
		if strings.HasPrefix(first, "```") && first != "```console" {
			t.Errorf("%s opens with a %s block: say first what the step does", name, first)
		}
	}
}
