package etcdstore_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rvplay/rvplay/internal/etcdtest"
	"github.com/rvplay/rvplay/internal/rvplaytest"
)

// Two rvplay replicas on a three-member etcd cluster (issue 16): what a
// client of either sees is one Kubernetes API, whatever replica or member
// goes.

// call sends a JSON request and decodes the answer into out (when not
// nil), failing the test on an unexpected status. A write that a replica
// answers with 5xx while the cluster moves to its other members is sent
// again, as client-go does.
func call(t *testing.T, method, url, token string, body, out any, want int) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		var in io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			in = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, url, in)
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 && attempt < 5 {
			continue
		}
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %s, want %d", method, url, resp.StatusCode, got, want)
		}
		if out != nil {
			if err := json.Unmarshal(got, out); err != nil {
				t.Fatalf("%s %s: %v: %s", method, url, err, got)
			}
		}
		return
	}
}

// startClass creates the guarded session "class" through the server at
// createOn and admits the student Ada through the one at joinOn; it
// returns the teacher's token and hers.
func startClass(t *testing.T, createOn, joinOn string) (teacher, student string) {
	t.Helper()
	var created struct{ ID, JoinCode, TeacherToken string }
	call(t, "POST", createOn+"/sessions", "", map[string]string{"name": "class"}, &created, http.StatusCreated)
	var joined struct{ Token string }
	call(t, "POST", joinOn+"/s/class/join", "", map[string]string{"code": created.JoinCode, "name": "Ada"}, &joined, http.StatusCreated)
	return created.TeacherToken, joined.Token
}

type object struct {
	Metadata struct {
		Name            string `json:"name"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Data    map[string]string `json:"data,omitempty"`
	Code    int               `json:"code,omitempty"`
	Reason  string            `json:"reason,omitempty"`
	Message string            `json:"message,omitempty"`
}

func configMap(name, value string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name},
		"data": map[string]string{"v": value}}
}

// watch is a Kubernetes watch of the configmaps of a namespace.
type watch struct {
	t      *testing.T
	cancel context.CancelFunc
	lines  chan []byte
}

func startWatch(t *testing.T, url, token, rv string) *watch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"?watch=1&allowWatchBookmarks=false&resourceVersion="+rv, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		cancel()
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("watch: %d %s", resp.StatusCode, b)
	}
	w := &watch{t: t, cancel: cancel, lines: make(chan []byte, 100)}
	go func() {
		defer resp.Body.Close()
		defer close(w.lines)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			w.lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	t.Cleanup(cancel)
	return w
}

type event struct {
	Type   string `json:"type"`
	Object object `json:"object"`
}

// next is the watch's next event; a watch that ends or stays silent for
// long fails the test (the bound only turns a hang into a failure).
func (w *watch) next() event {
	w.t.Helper()
	e, ok := w.tryNext()
	if !ok {
		w.t.Fatal("the watch ended")
	}
	return e
}

// tryNext is the watch's next event, or false when the watch ended first.
func (w *watch) tryNext() (event, bool) {
	w.t.Helper()
	select {
	case line, ok := <-w.lines:
		if !ok {
			return event{}, false
		}
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			w.t.Fatalf("%v: %s", err, line)
		}
		return e, true
	case <-time.After(30 * time.Second):
		w.t.Fatal("no event within 30 s")
	}
	return event{}, false
}

func (e event) String() string {
	return fmt.Sprintf("%s %s=%s@%s", e.Type, e.Object.Metadata.Name, e.Object.Data["v"], e.Object.Metadata.ResourceVersion)
}

func TestTwoReplicasOnAThreeMemberClusterServeOneClass(t *testing.T) {
	cluster := etcdtest.StartCluster(t, 3)
	// Without the watch cache, whose window would still serve the resume
	// below the compaction that ends this test in etcd's 410.
	store := []string{"--store", "etcd://" + cluster.Hosts(), "--etcd-compaction-interval", "0", "--watch-cache=false"}
	a := rvplaytest.Start(t, "", store...)
	b := rvplaytest.Start(t, "", store...)

	// A guarded session created on A, a student admitted on B: each
	// replica knows both, and the student's token works on both.
	teacher, student := startClass(t, a.URL, b.URL)
	cms := "/s/class/api/v1/namespaces/default/configmaps"
	call(t, "GET", a.URL+cms, student, nil, nil, http.StatusOK)
	call(t, "GET", b.URL+cms, teacher, nil, nil, http.StatusOK)

	var class struct{ ClusterCompaction bool }
	call(t, "GET", b.URL+"/s/class/rvplay/v1/class", teacher, nil, &class, http.StatusOK)
	if !class.ClusterCompaction {
		t.Fatal("the dashboard does not say that compaction is the cluster's")
	}

	// A write through A reaches a watcher on B.
	var list object
	call(t, "GET", b.URL+cms, student, nil, &list, http.StatusOK)
	onB := startWatch(t, b.URL+cms, student, list.Metadata.ResourceVersion)
	var cm object
	call(t, "POST", a.URL+cms, student, configMap("x", "1"), &cm, http.StatusCreated)
	if e := onB.next(); e.String() != "ADDED x=1@"+cm.Metadata.ResourceVersion {
		t.Fatalf("B's watcher saw %s, want A's write x=1@%s", e, cm.Metadata.ResourceVersion)
	}

	// One member goes: both replicas keep serving. B's watch sees the
	// write. etcd's client moves its stream to another member; if that
	// member is electing a leader then (the one that went was the
	// leader), the cluster ends the stream ("etcdserver: no leader"), and
	// B ends the watch as kube-apiserver does without its watch cache:
	// an ERROR, a 500 InternalError. The client resumes from the last
	// resourceVersion it saw, as a reflector does, and misses nothing
	// (leaderloss_test.go makes the cluster lose its leader for sure).
	if err := cluster.Members[0].Stop(); err != nil {
		t.Fatal(err)
	}
	seen := cm.Metadata.ResourceVersion
	call(t, "PUT", a.URL+cms+"/x", student, configMap("x", "2"), &cm, http.StatusOK)
	e, ok := onB.tryNext()
	if ok && e.Type == "ERROR" && e.Object.Code == http.StatusInternalServerError {
		t.Logf("B's watch ended with %q; resumed from %s", e.Object.Message, seen)
		onB = startWatch(t, b.URL+cms, student, seen)
		e = onB.next()
	}
	if e.String() != "MODIFIED x=2@"+cm.Metadata.ResourceVersion {
		t.Fatalf("with a member down, B's watcher saw %s, want x=2@%s", e, cm.Metadata.ResourceVersion)
	}

	// A replica goes: its watcher resumes on the other from the last
	// resourceVersion it saw, and misses nothing written meanwhile.
	onA := startWatch(t, a.URL+cms, student, cm.Metadata.ResourceVersion)
	call(t, "PUT", b.URL+cms+"/x", student, configMap("x", "3"), nil, http.StatusOK)
	last := onA.next()
	if last.Object.Data["v"] != "3" {
		t.Fatalf("A's watcher saw %s, want x=3", last)
	}
	a.Kill()
	var want []string
	for i := 4; i <= 6; i++ {
		call(t, "PUT", b.URL+cms+"/x", student, configMap("x", strconv.Itoa(i)), &cm, http.StatusOK)
		want = append(want, "MODIFIED x="+strconv.Itoa(i)+"@"+cm.Metadata.ResourceVersion)
	}
	resumed := startWatch(t, b.URL+cms, student, last.Object.Metadata.ResourceVersion)
	var got []string
	for range want {
		got = append(got, resumed.next().String())
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("resumed on B from %s: %v, want %v", last.Object.Metadata.ResourceVersion, got, want)
	}

	// Once the cluster is compacted past it, the resume is refused with
	// 410 Gone, and a relist finds the newest state.
	cli := client(t, cluster.Endpoints()[1:]...)
	now, err := cli.Get(ctx, "compact_rev_key")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Compact(ctx, now.Header.Revision); err != nil {
		t.Fatal(err)
	}
	if e := startWatch(t, b.URL+cms, student, last.Object.Metadata.ResourceVersion).next(); e.Type != "ERROR" || e.Object.Code != http.StatusGone {
		t.Fatalf("a resume below the compaction: %s (code %d), want ERROR 410", e, e.Object.Code)
	}
	var relist struct{ Items []object }
	call(t, "GET", b.URL+cms, student, nil, &relist, http.StatusOK)
	if len(relist.Items) != 1 || relist.Items[0].Data["v"] != "6" {
		t.Fatalf("relist: %+v, want x=6", relist.Items)
	}
}

// ends waits for the watch to end (its stream closed), failing the test
// if it has not within bound.
func (w *watch) ends(bound time.Duration) {
	w.t.Helper()
	deadline := time.After(bound)
	for {
		select {
		case _, ok := <-w.lines:
			if !ok {
				return
			}
		case <-deadline:
			w.t.Fatalf("the watch still runs %v on", bound)
		}
	}
}

// What a teacher does to a session through one replica reaches the other
// at once, not at its next sweep a minute later: a new join code shows on
// the dashboard the other serves (the projector's; each server follows
// the cluster's notices from before it serves), and a session ended ends
// there as the cluster deletes it (each replica watches the cluster's
// registry): a student's watch there ends, and the session is gone there
// too.
func TestATeachersRenewalAndEndOnOneReplicaReachTheOtherAtOnce(t *testing.T) {
	e := etcdtest.Start(t, etcdtest.Options{})
	store := []string{"--store", "etcd://" + strings.TrimPrefix(e.URL, "http://"), "--etcd-compaction-interval", "0"}
	a := rvplaytest.Start(t, "", store...)
	b := rvplaytest.Start(t, "", store...)
	teacher, student := startClass(t, a.URL, b.URL)
	projector := channelOf(t, b.URL, teacher, true)
	var renewed struct{ JoinCode string }
	call(t, "POST", a.URL+"/s/class/rvplay/v1/join-code", teacher, nil, &renewed, http.StatusCreated)
	projector.wantJoinCode(renewed.JoinCode)

	cms := "/s/class/api/v1/namespaces/default/configmaps"
	var list object
	call(t, "GET", b.URL+cms, student, nil, &list, http.StatusOK)
	onB := startWatch(t, b.URL+cms, student, list.Metadata.ResourceVersion)

	call(t, "DELETE", a.URL+"/s/class", teacher, nil, nil, http.StatusOK)
	// B sweeps every minute: a third of that is "at once" with room for a
	// loaded machine.
	ended := time.Now()
	onB.ends(20 * time.Second)
	t.Logf("B's watch ended %v after the session ended on A", time.Since(ended).Round(time.Millisecond))
	var gone status
	call(t, "GET", b.URL+cms, student, nil, &gone, http.StatusNotFound)
	if gone.Kind != "Status" || gone.Reason != "NotFound" {
		t.Fatalf("the ended session on B: %+v, want a NotFound Status", gone)
	}
}
