// Package etcdctl runs Debian's etcdctl against rvplay's etcd gRPC API and
// against a real etcd, command by command in lockstep, and compares what
// etcdctl prints: the articles' hands-on (put, get -w json, --rev, del, get
// --prefix --keys-only) and more (-w fields, --from-key
// --limit, del --prev-kv, txn from stdin, compaction, watch from a
// revision with --prev-kv, a compacted watch, leases). What only a raft
// cluster has (cluster_id, member_id, raft_term) and lease IDs, which each
// server picks, are masked; everything else must be identical, errors
// included.
package etcdctl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rvplay/rvplay/internal/etcdtest"
	"github.com/rvplay/rvplay/internal/rvplaytest"
)

// TestMain runs the tests through rvplaytest.RunTests, which builds the
// server binary once and removes it when they end.
func TestMain(m *testing.M) { os.Exit(rvplaytest.RunTests(m)) }

var flagShow = flag.Bool("etcdctl.show", false, "log what rvplay's etcdctl printed at every step")

// etcdctlBinary is Debian's etcd-client, which scripts/ensure-deps.sh
// installs with etcd-server.
const etcdctlBinary = "/usr/bin/etcdctl"

// step is one etcdctl command. $L<name> in an argument is the ID that the
// lease grant of step lease=<name> got on the same server.
type step struct {
	args  []string
	stdin string
	// lease names the lease a "lease grant" step grants.
	lease string
	// watch runs the command in the background while then runs, reading
	// its output until it has printed the key fence (a put after the
	// writes the watch must show, in its range): everything before the
	// fence has been delivered by then.
	watch bool
	then  []step
	fence string
}

// handsOn is the sequence: the articles' commands first, in their order.
var handsOn = []step{
	{args: words(`put k1 v1`)},
	{args: words(`get k1 -w json`)},
	{args: words(`put k2 v2`)},
	{args: words(`get k2 -w json`)},
	{args: words(`get k1 -w json`)},
	{args: words(`put k1 nv1`)},
	{args: words(`get k1 -w json`)},
	{args: words(`get k2 -w json`)},
	{args: words(`del k1`)},
	{args: words(`get k1`)},
	{args: words(`get k1 -w json`)},
	{args: words(`get k1 --rev=4 -w json`)},
	{args: words(`get k1 --rev=6 -w json`)}, // a future revision here
	{args: words(`put k1 dnv1`)},
	{args: words(`get k1 -w json`)},
	{args: []string{"put", "/registry/deployments/default/web", `{"spec":{"replicas":2}}`}},
	{args: []string{"put", "/registry/deployments/default/api", `{"spec":{"replicas":1}}`}},
	{args: []string{"put", "/registry/deployments/kube-system/coredns", "{}"}},
	{args: words(`get /registry/deployments/default --prefix -w json --keys-only`)},
	{args: words(`get /registry/deployments --prefix --keys-only`)},
	// (etcdctl 3.4 has no --count-only; count_only is etcddiff's and
	// server/etcdgrpc's to check.)
	{args: words(`get k --from-key --limit 2`)},
	{args: words(`get k --from-key --limit 2 -w json`)},
	{args: words(`get /registry/deployments/default/api -w fields`)},
	{args: words(`get /registry --prefix --keys-only --sort-by=MODIFY --order=DESCEND`)},
	{args: words(`put k2 v2b --prev-kv -w json`)},
	{args: words(`del k2 --prev-kv`)},
	{args: words(`del /registry/deployments/default --prefix --prev-kv -w json`)},
	{args: words(`txn -w json`), stdin: "mod(\"k1\") = \"6\"\n\nput k1 txn-ok\n\nget k1\n\n"},
	{args: words(`txn`), stdin: "mod(\"k1\") = \"6\"\n\nput k1 txn-again\n\nget k1\n\n"},
	{args: words(`txn`), stdin: "value(\"k1\") = \"txn-ok\"\nversion(\"k1\") > \"0\"\n\nput k3 v3\ndel k1\n\n\n"},
	{args: []string{"get", "", "--prefix", "--keys-only"}},
	{args: words(`watch k --prefix --rev=2 --prev-kv`), watch: true, fence: "kz", then: []step{{args: words(`put kz fence`)}}},
	{args: words(`compaction 10`)},
	{args: words(`get k1 --rev=5`)},
	{args: words(`compaction 9`)},
	{args: words(`compaction 99`)},
	{args: words(`watch k1 --rev=3`)},
	{args: words(`watch k --prefix --rev=10`), watch: true, fence: "kz", then: []step{{args: words(`put kz fence2`)}}},
	{args: words(`lease grant 60`), lease: "a"},
	{args: words(`put kl leased --lease=$La`)},
	{args: words(`get kl -w json`)},
	{args: words(`get kl -w fields`)},
	{args: words(`lease timetolive $La --keys`)},
	{args: words(`lease keep-alive --once $La`)},
	{args: words(`lease revoke $La`)},
	{args: words(`get kl`)},
	{args: words(`lease timetolive $La`)},
	{args: words(`put kl x --lease=12345`)},
	{args: words(`lease grant 1`), lease: "b"},
	{args: words(`lease revoke $Lb`)},
	{args: []string{"put", "", "v"}},
	{args: words(`get k --from-key -w json`)},
}

// target is one server and what its steps learnt (lease IDs).
type target struct {
	name     string
	endpoint string
	leases   map[string]string
}

func TestEtcdctlPrintsTheSameOnRvplayAsOnEtcd(t *testing.T) {
	requireEtcdctl(t)
	etcd := etcdtest.Start(t, etcdtest.Options{})
	rv := rvplaytest.StartGRPC(t, "etcdctl")
	ref := &target{name: "etcd", endpoint: strings.TrimPrefix(etcd.URL, "http://"), leases: map[string]string{}}
	got := &target{name: "rvplay", endpoint: rv.GRPCAddr, leases: map[string]string{}}
	run(t, handsOn, ref, got)
}

func run(t *testing.T, steps []step, ref, got *target) {
	t.Helper()
	for i, s := range steps {
		if s.watch {
			a := watchUntilFence(t, ref, s)
			b := watchUntilFence(t, got, s)
			compare(t, i, strings.Join(s.args, " "), a, b)
			continue
		}
		a := ref.run(t, s)
		b := got.run(t, s)
		compare(t, i, strings.Join(s.args, " "), a, b)
	}
}

func compare(t *testing.T, i int, args, want, got string) {
	t.Helper()
	if *flagShow {
		t.Logf("step %d: etcdctl %s\n%s", i, args, got)
	}
	if mask(want) != mask(got) {
		t.Errorf("step %d: etcdctl %s\n--- etcd\n%s--- rvplay\n%s", i, args, want, got)
	}
}

func requireEtcdctl(t *testing.T) {
	if _, err := os.Stat(etcdctlBinary); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("etcdctl is required in CI (Debian's etcd-client, installed by scripts/ensure-deps.sh): %v", err)
		}
		t.Skipf("no %s (Debian's etcd-client; scripts/ensure-deps.sh installs it)", etcdctlBinary)
	}
}

// command is etcdctl with the step's arguments, for target tg.
func (tg *target) command(ctx context.Context, s step) *exec.Cmd {
	args := []string{"--endpoints=" + tg.endpoint, "--dial-timeout=10s", "--command-timeout=20s"}
	for _, a := range s.args {
		for name, id := range tg.leases {
			a = strings.ReplaceAll(a, "$L"+name, id)
		}
		args = append(args, a)
	}
	cmd := exec.CommandContext(ctx, etcdctlBinary, args...)
	cmd.Env = append(os.Environ(), "ETCDCTL_API=3")
	cmd.Stdin = strings.NewReader(s.stdin)
	return cmd
}

// run runs one step to its end and returns what etcdctl printed (both
// streams) and its exit status.
func (tg *target) run(t *testing.T, s step) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := tg.command(ctx, s)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s: etcdctl %q did not finish: %s", tg.name, s.args, out.String())
	}
	res := out.String()
	if err != nil {
		res += fmt.Sprintf("[exit: %v]\n", err)
	}
	if s.lease != "" {
		m := leaseGranted.FindStringSubmatch(res)
		if m == nil {
			t.Fatalf("%s: etcdctl %q printed no lease: %s", tg.name, s.args, res)
		}
		tg.leases[s.lease] = m[1]
	}
	return res
}

var leaseGranted = regexp.MustCompile(`lease ([0-9a-f]+) granted`)

// watchUntilFence starts the watch, runs the steps that follow it, and
// returns what the watch printed up to and including its fence event.
func watchUntilFence(t *testing.T, tg *target, s step) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := tg.command(ctx, s)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		cmd.Wait()
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		io.Copy(io.Discard, stdout)
	}()
	// The history the watch replays comes first; the fence, put once the
	// watch is running, comes after it. etcdctl's watch prints nothing when
	// it is created, so the first line read proves that it runs (the
	// history is not empty).
	var out strings.Builder
	first, ok := <-lines
	if !ok {
		t.Fatalf("%s: etcdctl %q ended without output: %s", tg.name, s.args, stderr.String())
	}
	out.WriteString(first + "\n")
	for _, then := range s.then {
		tg.run(t, then)
	}
	for line := range lines {
		out.WriteString(line + "\n")
		if line == s.fence {
			// The fence's value follows its key.
			if v, ok := <-lines; ok {
				out.WriteString(v + "\n")
			}
			return out.String()
		}
	}
	t.Fatalf("%s: etcdctl %q ended before the fence: %s\n%s", tg.name, s.args, out.String(), stderr.String())
	return ""
}

// mask replaces what differs between any two etcd clusters: the IDs of
// cluster and member, the raft term, lease IDs; and drops the client's
// own log lines, which carry times and connection names.
func mask(s string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(line, `{"level":`) {
			continue
		}
		b.WriteString(line)
	}
	s = b.String()
	for _, m := range masks {
		s = m.re.ReplaceAllString(s, m.with)
	}
	return s
}

var masks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"(cluster_id|member_id|raft_term|lease)":\d+`), `"$1":N`},
	{regexp.MustCompile(`"(ClusterID|MemberID|RaftTerm|Lease)" : \d+`), `"$1" : N`},
	{regexp.MustCompile(`lease [0-9a-f]+ `), `lease ID `},
	{regexp.MustCompile(`remaining\(\d+s\)`), `remaining(Ns)`},
}

// words splits a command line at its spaces.
func words(line string) []string { return strings.Fields(line) }

// A guarded session is chosen with etcd's own --user: the session's name
// and a token of it. A student's token gives a student's rights.
func TestEtcdctlReachesAGuardedSessionWithUser(t *testing.T) {
	requireEtcdctl(t)
	rv := rvplaytest.StartGRPC(t, "open")
	class := postJSON(t, rv.URL+"/sessions", `{"name":"class-1"}`)
	joined := postJSON(t, rv.URL+"/s/class-1/join", fmt.Sprintf(`{"code":%q,"name":"Ada"}`, class["joinCode"]))
	tg := &target{name: "rvplay", endpoint: rv.GRPCAddr}
	as := func(user string, args ...string) string {
		return tg.run(t, step{args: append([]string{"--user", user}, args...)})
	}
	student, teacher := "class-1:"+joined["token"], "class-1:"+class["teacherToken"]
	for _, c := range []struct {
		user string
		args []string
		want string
	}{
		{student, words(`put /lab/ada 1`), "OK\n"},
		{student, words(`get /lab/ada --print-value-only`), "1\n"},
		{student, words(`put /registry/configmaps/default/x 1`), "Error: etcdserver: permission denied\n[exit: exit status 1]\n"},
		{student, words(`compaction 2`), "Error: etcdserver: permission denied\n[exit: exit status 1]\n"},
		{teacher, words(`put /registry/configmaps/default/x 1`), "OK\n"},
		{teacher, words(`get /registry/configmaps/default/x --print-value-only`), "1\n"},
		{"class-1:not-a-token", words(`get /lab/ada`), "Error: etcdserver: authentication failed, invalid user ID or password\n[exit: exit status 2]\n"},
		// Without --user: the default session, where /lab/ada was never put.
		{"", words(`get /lab/ada --print-value-only`), ""},
	} {
		var got string
		if c.user == "" {
			got = tg.run(t, step{args: c.args})
		} else {
			got = as(c.user, c.args...)
		}
		if mask(got) != c.want {
			t.Errorf("etcdctl --user %s %s:\n%s\nwant\n%s", strings.SplitN(c.user, ":", 2)[0], strings.Join(c.args, " "), got, c.want)
		}
	}
}

func postJSON(t *testing.T, url, body string) map[string]string {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST %s: %d %s", url, resp.StatusCode, b)
	}
	out := map[string]string{}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for k, v := range raw {
		out[k] = fmt.Sprint(v)
	}
	return out
}
