package console

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/session"
)

// lab is a console on a fresh in-memory session, as in the browser.
type lab struct {
	t     *testing.T
	c     *Console
	notes []string
}

func newLab(t *testing.T) *lab {
	t.Helper()
	s, err := session.New("console-test", mvcc.NewMemoryBackend(), session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &lab{t: t, c: New(s, Options{})}
}

// run runs one input and returns stdout, stderr and the exit status.
func (l *lab) run(in string) (string, string, int) {
	l.t.Helper()
	var out, errOut bytes.Buffer
	code := l.c.Run(context.Background(), in, Output{Stdout: &out, Stderr: &errOut, Note: func(s string) { l.notes = append(l.notes, s) }})
	return out.String(), errOut.String(), code
}

func (l *lab) ok(in string) string {
	l.t.Helper()
	out, errOut, code := l.run(in)
	if code != 0 {
		l.t.Fatalf("%s: exit %d\n%s%s", in, code, out, errOut)
	}
	return out
}

func TestTheArticlesRevisionWalk(t *testing.T) {
	l := newLab(t)
	if got := l.ok("etcdctl put k1 v1"); got != "OK\n" {
		t.Fatalf("put: %q", got)
	}
	l.ok("etcdctl put k1 nv1")
	if got := l.ok("etcdctl get k1"); got != "k1\nnv1\n" {
		t.Fatalf("get: %q", got)
	}
	if got := l.ok("etcdctl get k1 -w json | jq -c '.kvs[0] | [.create_revision, .mod_revision, .version]'"); got != "[2,3,2]\n" {
		t.Fatalf("revisions: %q", got)
	}
	if got := l.ok("etcdctl del k1"); got != "1\n" {
		t.Fatalf("del: %q", got)
	}
	if got := l.ok("etcdctl get k1 --rev=2 --print-value-only"); got != "v1\n" {
		t.Fatalf("get --rev: %q", got)
	}
}

func TestConnectionFlagsAreAcceptedAndExplained(t *testing.T) {
	l := newLab(t)
	l.ok("etcdctl put /registry/deployments/default/nginx x")
	out := l.ok(`alias e="etcdctl --endpoints 127.0.0.1:2379 --cert=/etc/kubernetes/pki/etcd/server.crt --key=/etc/kubernetes/pki/etcd/server.key --cacert=/etc/kubernetes/pki/etcd/ca.crt"
e get /registry/deployments/default --prefix -w json --keys-only | jq -c '.kvs[].key|=@base64d | .kvs'`)
	if !strings.Contains(out, `"key":"/registry/deployments/default/nginx"`) {
		t.Fatalf("got %q", out)
	}
	if len(l.notes) != 1 || !strings.Contains(l.notes[0], "always talks to this lab's session") {
		t.Fatalf("notes = %q", l.notes)
	}
}

func TestAnUnknownCommandSaysWhatIsSupported(t *testing.T) {
	l := newLab(t)
	_, errOut, code := l.run("helm install x")
	if code != 127 || errOut != "rvplay: helm: command not found\n" {
		t.Fatalf("exit %d, %q", code, errOut)
	}
	if len(l.notes) == 0 || !strings.Contains(l.notes[0], "etcdctl") || !strings.Contains(l.notes[0], "jq") {
		t.Fatalf("notes = %q", l.notes)
	}
	_, errOut, code = l.run("etcdctl lease grant 60")
	if code != exitBadFeature || !strings.Contains(errOut, `"etcdctl lease" is not available in the lab`) {
		t.Fatalf("lease: exit %d, %q", code, errOut)
	}
	_, errOut, _ = l.run("etcdctl frobnicate")
	if errOut != "Error: unknown command \"frobnicate\" for \"etcdctl\"\nRun 'etcdctl --help' for usage.\nError: unknown command \"frobnicate\" for \"etcdctl\"\n" {
		t.Fatalf("unknown etcdctl command: %q", errOut)
	}
}

func TestFilesHoldWhatACommandWrote(t *testing.T) {
	l := newLab(t)
	l.ok("etcdctl put k v")
	l.ok("etcdctl get k -w json > k.json")
	if got := l.ok("jq -r .kvs[0].value k.json | base64 -d"); got != "v" {
		t.Fatalf("got %q", got)
	}
	if got := l.ok("ls"); got != "k.json\n" {
		t.Fatalf("ls: %q", got)
	}
	l.ok("echo more >> k.json")
	if got := l.ok("grep -c . k.json"); got != "2\n" {
		t.Fatalf("appended: %q", got)
	}
	l.ok("rm k.json")
	_, errOut, code := l.run("cat k.json")
	if code != 1 || errOut != "cat: k.json: No such file or directory\n" {
		t.Fatalf("cat after rm: %d %q", code, errOut)
	}
}

func TestGrepFiltersLinesAsGNUGrep(t *testing.T) {
	l := newLab(t)
	l.ok("etcdctl put k v")
	for in, want := range map[string]string{
		`echo "a\nb" | grep a`:                              "a\\nb\n",
		`etcdctl get k -w fields | grep -E 'Key|Value'`:     "\"Key\" : \"k\"\n\"Value\" : \"v\"\n",
		`etcdctl get k -w fields | grep -i '"version"'`:     "\"Version\" : 1\n",
		`etcdctl get k -w fields | grep -v '"' | grep -c .`: "0\n",
		`etcdctl get k -w fields | grep -n Lease`:           "10:\"Lease\" : 0\n",
		`etcdctl get k -w fields | grep 'Key\|Lease'`:       "\"Key\" : \"k\"\n\"Lease\" : 0\n",
	} {
		out, _, _ := l.run(in)
		if out != want {
			t.Errorf("%s: got %q, want %q", in, out, want)
		}
	}
	if _, _, code := l.run("echo x | grep y"); code != 1 {
		t.Errorf("grep without a match exits 1, got %d", code)
	}
}

func TestATxnTypedLineByLineWaitsForItsThreeSections(t *testing.T) {
	l := newLab(t)
	prompts := []string{}
	in := "etcdctl txn -i"
	for _, line := range []string{`mod("k") = "0"`, "", "put k created", "", "put k exists", ""} {
		prompt, complete := l.c.Continuation(in)
		if complete {
			t.Fatalf("%q is complete too early", in)
		}
		prompts = append(prompts, prompt)
		in += "\n" + line
	}
	if _, complete := l.c.Continuation(in); !complete {
		t.Fatalf("%q should be complete", in)
	}
	want := []string{"compares:", "compares:", "success requests (get, put, del):", "success requests (get, put, del):", "failure requests (get, put, del):", "failure requests (get, put, del):"}
	for i := range want {
		if prompts[i] != want[i] {
			t.Fatalf("prompts = %q", prompts)
		}
	}
	if got := l.ok(in); got != "compares:\nsuccess requests (get, put, del):\nfailure requests (get, put, del):\nSUCCESS\n\nOK\n" {
		t.Fatalf("txn: %q", got)
	}
}

func TestAWatchStreamsUntilItsContextEnds(t *testing.T) {
	l := newLab(t)
	ctx, cancel := context.WithCancel(context.Background())
	streaming := make(chan struct{})
	out := &lineWaiter{lines: make(chan string, 16)}
	done := make(chan int, 1)
	go func() {
		done <- l.c.Run(ctx, "etcdctl watch k --prefix", Output{Stdout: out, Streaming: func() { close(streaming) }})
	}()
	<-streaming
	l.ok("etcdctl put k1 a")
	for _, want := range []string{"PUT", "k1", "a"} {
		if got := <-out.lines; got != want {
			t.Fatalf("watch printed %q, want %q", got, want)
		}
	}
	cancel()
	if code := <-done; code != 130 {
		t.Fatalf("an interrupted watch exits 130, got %d", code)
	}
}

// lineWaiter hands each printed line to a channel.
type lineWaiter struct {
	buf   string
	lines chan string
}

func (w *lineWaiter) Write(p []byte) (int, error) {
	w.buf += string(p)
	for {
		i := strings.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.lines <- w.buf[:i]
		w.buf = w.buf[i+1:]
	}
}
