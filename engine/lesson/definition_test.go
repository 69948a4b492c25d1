package lesson

import (
	"strings"
	"testing"
	"testing/fstest"
)

const minimal = `{"slug": "demo", "steps": [{"id": "one", "actions": [{"id": "put", "run": "etcdctl put a b"}],
  "solution": ["put"], "verify": {"key": {"key": "a", "exists": true}}}]}`

func TestADefinitionTakesItsNumberAndSlugFromItsDirectory(t *testing.T) {
	l, err := Parse("07-demo", []byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	if l.Number != 7 || l.Dir != "07-demo" || l.Slug != "demo" {
		t.Fatalf("%+v", l)
	}
	if _, err := Parse("07-other", []byte(minimal)); err == nil || !strings.Contains(err.Error(), "does not match the directory") {
		t.Fatalf("a slug that differs from the directory: %v", err)
	}
	if _, err := Parse("demo", []byte(minimal)); err == nil {
		t.Fatal("a directory without a number is accepted")
	}
}

func TestMistakesInADefinitionAreErrorsNotPredicatesThatNeverHold(t *testing.T) {
	for _, tc := range []struct{ name, def, want string }{
		{"unknown field", `{"slug":"demo","steps":[{"id":"a","actoins":[]}]}`, `unknown field "actoins"`},
		{"unknown predicate", `{"slug":"demo","steps":[{"id":"a","actions":[{"id":"x","run":"x"}],"solution":["x"],"verify":{"keys":{}}}]}`, `unknown predicate "keys"`},
		{"two keys in a predicate", `{"slug":"demo","steps":[{"id":"a","actions":[{"id":"x","run":"x"}],"solution":["x"],"verify":{"key":{"key":"k"},"compacted":true}}]}`, "exactly one key"},
		{"unknown match field", `{"slug":"demo","steps":[{"id":"a","actions":[{"id":"x","run":"x"}],"solution":["x"],"verify":{"exchange":{"stauts":409}}}]}`, `unknown field "stauts"`},
		{"unknown detector", `{"slug":"demo","steps":[{"id":"a","actions":[{"id":"x","run":"x"}],"solution":["x"],"verify":{"detected":{"name":"nope"}}}]}`, `no detector "nope"`},
		{"unknown client operation", `{"slug":"demo","steps":[{"id":"a","actions":[{"id":"x","client":"A","do":"put"}]}]}`, `unknown operation "put"`},
		{"two kinds in an action", `{"slug":"demo","steps":[{"id":"a","actions":[{"id":"x","run":"x","wait":"1s"}]}]}`, "exactly one of"},
		{"solution names no action", `{"slug":"demo","steps":[{"id":"a","actions":[{"id":"x","run":"x"}],"solution":["y"],"verify":{"compacted":true}}]}`, `names "y"`},
		{"verify without solution", `{"slug":"demo","steps":[{"id":"a","verify":{"compacted":true}}]}`, "has a solution"},
		{"repeated step id", `{"slug":"demo","steps":[{"id":"a"},{"id":"a"}]}`, "repeated"},
		{"no steps", `{"slug":"demo","steps":[]}`, "at least one step"},
		{"bad wait", `{"slug":"demo","steps":[{"id":"a","actions":[{"id":"x","wait":"soon"}]}]}`, "not a positive duration"},
		{"object without name", `{"slug":"demo","setup":{"objects":[{"apiVersion":"v1","kind":"ConfigMap"}]},"steps":[{"id":"a"}]}`, "metadata.name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("01-demo", []byte(tc.def))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// A file or a directory without a lesson.json beside the lessons is not a lesson.
func TestACatalogIsOrderedByNumberAndRefusesTwoLessonsWithOneNumber(t *testing.T) {
	two := strings.Replace(minimal, `"demo"`, `"two"`, 1)
	c, err := Load(fstest.MapFS{
		"02-two/lesson.json":    {Data: []byte(two)},
		"01-demo/lesson.json":   {Data: []byte(minimal)},
		"01-demo/en/00.md":      {Data: []byte("# Demo")},
		"README.md":             {Data: []byte("# Lessons")},
		"shared/en/glossary.md": {Data: []byte("# Words")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if ls := c.Lessons(); len(ls) != 2 || ls[0].Slug != "demo" || ls[1].Slug != "two" || c.Lesson("two") != ls[1] || c.Lesson("x") != nil {
		t.Fatalf("%+v", ls)
	}
	_, err = Load(fstest.MapFS{
		"01-demo/lesson.json": {Data: []byte(minimal)},
		"01-two/lesson.json":  {Data: []byte(two)},
	})
	if err == nil || !strings.Contains(err.Error(), "same number") {
		t.Fatalf("two lessons numbered 01: %v", err)
	}
}

// Open refuses what Load refuses at once, and reads the lessons again
// only when someone asks for them: a server holds them only then.
func TestAnOpenedCatalogReadsItsLessonsOnFirstUse(t *testing.T) {
	two := strings.Replace(minimal, `"demo"`, `"two"`, 1)
	fsys := fstest.MapFS{"02-two/lesson.json": {Data: []byte(two)}, "01-demo/lesson.json": {Data: []byte(minimal)}}
	c, err := Open(fsys)
	if err != nil {
		t.Fatal(err)
	}
	fsys["03-late/lesson.json"] = &fstest.MapFile{Data: []byte(strings.Replace(minimal, `"demo"`, `"late"`, 1))}
	if ls := c.Lessons(); len(ls) != 3 || ls[0].Slug != "demo" || ls[2].Slug != "late" || c.Lesson("two") != ls[1] || c.Lesson("x") != nil {
		t.Fatalf("%+v", ls)
	}
	fsys["04-later/lesson.json"] = &fstest.MapFile{Data: []byte(strings.Replace(minimal, `"demo"`, `"later"`, 1))}
	if ls := c.Lessons(); len(ls) != 3 {
		t.Fatalf("read twice: %+v", ls)
	}
	if _, err := Open(fstest.MapFS{"01-demo/lesson.json": {Data: []byte(minimal)}, "01-two/lesson.json": {Data: []byte(two)}}); err == nil || !strings.Contains(err.Error(), "same number") {
		t.Fatalf("two lessons numbered 01: %v", err)
	}
}
