package etcdstore_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/internal/etcdtest"
	"github.com/rvplay/rvplay/internal/rvplaytest"
)

// status is the Kubernetes Status a session's own API answers with.
type status struct {
	Kind    string `json:"kind"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Code    int    `json:"code"`
	Details struct {
		Causes []struct{ Reason, Field string } `json:"causes"`
	} `json:"details"`
}

type settings struct {
	BookmarkInterval   string `json:"bookmarkInterval"`
	CompactionInterval string `json:"compactionInterval"`
}

// A session stored on an etcd cluster has no compaction of its own (etcd
// compacts the whole cluster): a compactionInterval other than 0s is
// refused, saying whose the compaction is and which flag times it; 0s, as
// every lesson's set-up sets, is taken.
func TestASessionOnAClusterRefusesACompactionIntervalOfItsOwn(t *testing.T) {
	e := etcdtest.Start(t, etcdtest.Options{})
	srv := rvplaytest.Start(t, "open", "--store", "etcd://"+strings.TrimPrefix(e.URL, "http://"), "--etcd-compaction-interval", "7m")
	teacher, student := startClass(t, srv.URL, srv.URL)
	path := srv.URL + "/s/class/rvplay/v1/settings"
	ten := map[string]string{"compactionInterval": "10s"}

	var got settings
	call(t, "GET", path, teacher, nil, &got, http.StatusOK)
	if got.CompactionInterval != "0s" {
		t.Fatalf("a new session's compactionInterval on a cluster: %q, want 0s", got.CompactionInterval)
	}

	// Without the teacher's credentials: refused as any settings change.
	var refused status
	call(t, "PATCH", path, "", ten, &refused, http.StatusUnauthorized)
	call(t, "PATCH", path, student, ten, &refused, http.StatusForbidden)

	// The teacher is told why, in a Status.
	for _, url := range []string{path, srv.URL + "/s/open/rvplay/v1/settings"} {
		call(t, "PATCH", url, teacher, ten, &refused, http.StatusUnprocessableEntity)
		if refused.Kind != "Status" || refused.Reason != "Invalid" || refused.Code != 422 ||
			!strings.HasPrefix(refused.Message, "compactionInterval: 10s refused: ") {
			t.Fatalf("PATCH %s: %+v, want a 422 Invalid Status about compactionInterval", url, refused)
		}
		if c := refused.Details.Causes; len(c) != 1 || c[0].Field != "compactionInterval" || c[0].Reason != "FieldValueForbidden" {
			t.Fatalf("PATCH %s: causes %+v, want compactionInterval's FieldValueForbidden", url, c)
		}
		for _, want := range []string{"etcd cluster", "every 7m0s (--etcd-compaction-interval)", "only be 0s"} {
			if !strings.Contains(refused.Message, want) {
				t.Fatalf("PATCH %s: message %q does not say %q", url, refused.Message, want)
			}
		}
	}
	call(t, "GET", path, teacher, nil, &got, http.StatusOK)
	if got.CompactionInterval != "0s" {
		t.Fatalf("after the refusal: compactionInterval %q, want 0s", got.CompactionInterval)
	}

	// 0s, and the other settings, are the teacher's as on SQLite.
	call(t, "PATCH", path, teacher, map[string]string{"compactionInterval": "0s", "bookmarkInterval": "5s"}, &got, http.StatusOK)
	if got.CompactionInterval != "0s" || got.BookmarkInterval != "5s" {
		t.Fatalf("after 0s and a bookmark interval: %+v", got)
	}

	// A lesson's set-up (its compactionInterval is 0s) applies its
	// settings on a cluster too.
	var setup struct{ Settings int }
	call(t, "POST", srv.URL+"/s/class/rvplay/v1/lessons/compaction-and-410/setup", teacher, nil, &setup, http.StatusOK)
	if setup.Settings != http.StatusOK {
		t.Fatalf("lesson 6's set-up: its settings answered %d, want 200", setup.Settings)
	}
}
