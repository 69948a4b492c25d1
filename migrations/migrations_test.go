package migrations

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestEmbeddedMigrationsAreOrderedFromOne(t *testing.T) {
	ms, err := List(FS)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("no migrations embedded")
	}
	for i, m := range ms {
		if m.Version != i+1 {
			t.Errorf("migration %d is %q (version %d): versions must be 1, 2, 3... without gaps", i, m.Name, m.Version)
		}
		if strings.TrimSpace(m.SQL) == "" {
			t.Errorf("%s is empty", m.Name)
		}
	}
}

func TestListSortsByVersionNotByName(t *testing.T) {
	fsys := fstest.MapFS{
		"10_ten.sql":   {Data: []byte("SELECT 10;")},
		"0002_two.sql": {Data: []byte("SELECT 2;")},
		"1_one.sql":    {Data: []byte("SELECT 1;")},
		"README.md":    {Data: []byte("ignored")},
	}
	ms, err := List(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, m := range ms {
		got = append(got, m.Version)
	}
	if len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 10 {
		t.Fatalf("versions %v, want [1 2 10]", got)
	}
}

func TestListRejectsAmbiguousNames(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"no number":     {"init.sql": {Data: []byte("SELECT 1;")}},
		"zero":          {"0000_zero.sql": {Data: []byte("SELECT 1;")}},
		"same version":  {"0001_a.sql": {Data: []byte("SELECT 1;")}, "1_b.sql": {Data: []byte("SELECT 1;")}},
		"no underscore": {"0001.sql": {Data: []byte("SELECT 1;")}},
		"negative":      {"-1_x.sql": {Data: []byte("SELECT 1;")}},
	} {
		if _, err := List(fsys); err == nil {
			t.Errorf("%s: List accepted %v", name, fsys)
		}
	}
}

func TestAFirstLineMarksAMigrationToRunOutsideATransaction(t *testing.T) {
	ms, err := List(fstest.MapFS{
		"0001_a.sql": {Data: []byte("-- rvplay: no transaction\nVACUUM;")},
		"0002_b.sql": {Data: []byte("SELECT 1;\n-- rvplay: no transaction\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !ms[0].NoTransaction || ms[1].NoTransaction {
		t.Fatalf("NoTransaction: %v, %v; want true, false", ms[0].NoTransaction, ms[1].NoTransaction)
	}
}
