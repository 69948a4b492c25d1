package consolediff

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/api/etcdgw"
	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/session"
	"github.com/rvplay/rvplay/internal/etcdtest"
)

// etcdctlSteps run in order against both sides, so revisions stay equal:
// the articles' sequence (put k1, put k2, get -w json | jq, del, get
// --rev), then every command family and its errors.
var etcdctlSteps = []step{
	// The article's revision walk.
	{line: "etcdctl put k1 v1"},
	{line: "etcdctl get k1 -w json|jq"},
	{line: "etcdctl put k2 v2"},
	{line: "etcdctl get k2 -w json | jq"},
	{line: "etcdctl put k1 nv1"},
	{line: "etcdctl get k1 -w json|jq"},
	{line: "etcdctl del k1"},
	{line: "etcdctl get k1"},
	{line: "etcdctl get k1 -w json"},
	{line: "etcdctl get k1 --rev=2 -w json|jq"},
	{line: "etcdctl put k1 dnv1"},
	{line: "etcdctl get k1 -w json|jq"},
	// The other article: an alias with TLS flags, base64-decoded keys.
	{line: "etcdctl put /registry/deployments/default/nginx '{\"kind\":\"Deployment\"}'"},
	{
		line: `alias e="etcdctl --endpoints 127.0.0.1:2379 --cert=/etc/kubernetes/pki/etcd/server.crt --key=/etc/kubernetes/pki/etcd/server.key --cacert=/etc/kubernetes/pki/etcd/ca.crt"
e get /registry/deployments/default --prefix -w json --keys-only | jq '.kvs[].key|=@base64d'`,
		real: `alias e="etcdctl"
e get /registry/deployments/default --prefix -w json --keys-only | jq '.kvs[].key|=@base64d'`,
	},
	{line: "etcdctl get /registry/deployments/default --prefix -w json | jq '.kvs[0].mod_revision'"},
	{line: "etcdctl get k1 -w json | jq .header.revision"},
	{line: "etcdctl get k -w json --prefix | jq -r '.kvs[].value|@base64d'"},
	{line: "etcdctl get /registry --prefix -w json | jq '.kvs[].value|=@base64d' | jq -c '.kvs[]|{key,value}'"},
	// get: formats and flags.
	{line: "etcdctl get k1 -w fields"},
	{line: "etcdctl get k --prefix"},
	{line: "etcdctl get k --prefix --keys-only"},
	{line: "etcdctl get k --prefix --print-value-only"},
	{line: "etcdctl get k --prefix --limit=1 -w json"},
	{line: "etcdctl get k --prefix --limit 1 -w fields"},
	{line: "etcdctl get k1 k3"},
	{line: "etcdctl get k2 --from-key"},
	{line: "etcdctl get '' --prefix --keys-only"},
	{line: "etcdctl get k --prefix --sort-by=MODIFY --order=DESCEND"},
	{line: "etcdctl get k --prefix --sort-by=version --order=descend -w json"},
	{line: "etcdctl get k1 --rev=3"},
	{line: "etcdctl get k1 --consistency=s"},
	{line: "etcdctl get k1 -w table"},
	{line: "etcdctl get k1 --hex"},
	// get: errors.
	{line: "etcdctl get"},
	{line: "etcdctl get k --prefix --from-key"},
	{line: "etcdctl get k1 k2 --prefix"},
	{line: "etcdctl get k1 --print-value-only -w json"},
	{line: "etcdctl get k1 --rev=abc", normalize: withoutCountOnly},
	{line: "etcdctl get k1 --rev", normalize: withoutCountOnly},
	{line: "etcdctl get k1 --order=sideways"},
	{line: "etcdctl get k1 --sort-by=colour"},
	{line: "etcdctl get k1 --consistency=x"},
	{line: "etcdctl get k1 -w yaml"},
	{line: "etcdctl get k1 --rev=1000"},
	{line: "etcdctl nosuchcommand"},
	// put and del.
	{line: "etcdctl put k3 v3 --prev-kv"},
	{line: "etcdctl put k3 v4 --prev-kv"},
	{line: "etcdctl put k3 v5 --prev-kv -w json"},
	{line: "etcdctl put k3 v6 --prev-kv -w fields"},
	{line: "etcdctl put k3 --ignore-value -w json"},
	{line: "etcdctl put k4"},
	{line: "etcdctl put k4 v4 extra"},
	{line: "etcdctl put k3 v7 --lease=zz"},
	{line: "etcdctl put k3 v7 --lease=1234"},
	{line: "etcdctl put -- k5 -dashed"},
	{line: "etcdctl get k5"},
	{line: "echo from-stdin | etcdctl put k6"},
	{line: "etcdctl get k6 -w json | jq -r '.kvs[0].value' | base64 -d"},
	{line: "etcdctl del k6 --prev-kv"},
	{line: "etcdctl del k5 -w json"},
	{line: "etcdctl del nosuchkey"},
	{line: "etcdctl del k3 -w fields --prev-kv"},
	{line: "etcdctl put p/a 1"},
	{line: "etcdctl put p/b 2"},
	{line: "etcdctl del p/ --prefix"},
	{line: "etcdctl del"},
	{line: "etcdctl del a b --prefix"},
	// txn.
	{line: "etcdctl txn <<'EOF'\nmod(\"k1\") > \"0\"\n\nput k1 \"over\"\nget k1\n\nput k1 created\n\nEOF"},
	{line: "etcdctl txn -i <<'EOF'\nvalue(\"k1\") = \"nope\"\n\nput k1 \"never\"\n\nput k1 created\ndel k9\n\nEOF"},
	{line: "etcdctl txn -w json <<'EOF'\nversion(\"k1\") = \"3\"\nc(\"k2\") = \"3\"\n\nget k --prefix --keys-only\nput k7 \"seven\" --prev-kv\n\ndel k2\n\nEOF"},
	{line: "etcdctl txn -w fields <<'EOF'\nval(\"k7\") = \"seven\"\n\ndel k7 --prev-kv\n\n\nEOF"},
	{line: "etcdctl txn <<'EOF'\nversion(\"k1\") = \"x\"\n\n\n\nEOF"},
	{line: "etcdctl txn <<'EOF'\nbogus(\"k1\") = \"1\"\n\n\n\nEOF"},
	{line: "etcdctl txn <<'EOF'\nmod(\"k1\") > \"0\"\n\nfrobnicate k1\n\n\nEOF"},
	{line: "etcdctl txn <<'EOF'\nmod(\"k1\") > \"0\"\n\nput k1\n\n\nEOF"},
	{line: "etcdctl txn <<'EOF'\nmod(\"k1\") > \"0\"\nEOF"},
	{line: "etcdctl txn extra <<'EOF'\n\n\n\nEOF"},
	// watch: history replayed from a revision, then a live event.
	{line: "etcdctl watch k1 --rev=1", watch: "over\n"},
	{line: "etcdctl watch k1 --rev=1 --prev-kv", watch: "over\n"},
	{line: "etcdctl watch k --prefix --rev=2 -w json", watch: `"mod_revision":4`},
	{line: "etcdctl watch k3 --rev=1 -w fields", watch: `"Type" : DELETE`},
	{line: "etcdctl watch live --prefix --rev={next}", watch: "live/b\nb\n", after: []string{"etcdctl put live/a a", "etcdctl put live/b b"}},
	{line: "etcdctl watch"},
	{line: "etcdctl watch a b --prefix"},
	// compaction, then reads and watches below it.
	{line: "etcdctl compaction 5"},
	{line: "etcdctl compaction 5"},
	{line: "etcdctl compaction 3"},
	{line: "etcdctl get k1 --rev=4"},
	{line: "etcdctl compaction 6 --physical -w json"},
	{line: "etcdctl compaction"},
	{line: "etcdctl compaction x"},
	{line: "etcdctl watch k1 --rev=2"},
	// endpoint status: the db size and raft index are etcd's own.
	{line: "etcdctl endpoint status", normalize: normalizeStatus},
	{line: "etcdctl endpoint status -w table", normalize: normalizeStatus},
	{line: "etcdctl endpoint status -w json", normalize: normalizeStatus},
	{line: "etcdctl endpoint status -w fields", normalize: normalizeStatus},
	{line: "etcdctl version"},
	{line: "ETCDCTL_API=3 etcdctl get k1"},
	// leases: a lease's ID is etcd's to choose (the real one's are large,
	// the session's count from 1), so IDs compare as LEASE.
	{line: "etcdctl lease grant 60", normalize: leaseIDs},
	{line: "etcdctl lease grant 600 -w json", normalize: leaseIDs},
	{line: "etcdctl lease grant 60 -w fields", normalize: leaseIDs},
	{line: "etcdctl lease list", normalize: leaseIDs},
	{line: "etcdctl lease list -w json", normalize: leaseIDs},
	{line: "etcdctl lease list -w fields", normalize: leaseIDs},
	{line: "etcdctl lease timetolive 63"},
	{line: "etcdctl lease timetolive 63 --keys -w json"},
	{line: "etcdctl lease timetolive 63 -w fields"},
	{line: "etcdctl lease keep-alive --once 63"},
	{line: "etcdctl lease keep-alive 63"},
	{line: "etcdctl lease revoke 63"},
	{line: "etcdctl lease revoke zz"},
	{line: "etcdctl lease grant"},
	{line: "etcdctl lease grant x"},
	{line: "etcdctl lease grant 99999999999"},
	{line: "etcdctl lease grant 60 -w table"},
	{line: "etcdctl lease"},
	{line: "etcdctl lease grant 60 --keys", normalize: withoutDescription},
	// Flag errors.
	{line: "etcdctl get k1 --nosuchflag", normalize: withoutCountOnly},
	{line: "etcdctl get k1 -x", normalize: withoutCountOnly},
	{line: "etcdctl put k1 v1 -w", normalize: withoutDescription},
}

var statusNumbers = regexp.MustCompile(`(\d+(\.\d+)? k?B|"dbSize":\d+|"dbSizeInUse":\d+|"DBSize" : \d+|"raftIndex":\d+|"raftAppliedIndex":\d+|"RaftIndex" : \d+|"RaftAppliedIndex" : \d+|, \d+, \d+, $)`)

// normalizeStatus blanks what a real etcd's status reports about its own
// files and raft log, which a session has no equivalent for.
func normalizeStatus(s string) string {
	s = regexp.MustCompile(`(?m)^(.*, )(\d+(\.\d)? k?B)(, .*, )\d+, \d+, $`).ReplaceAllString(s, "${1}SIZE${4}I, I, ")
	s = regexp.MustCompile(`\|( +\d+(\.\d)? k?B) \|`).ReplaceAllStringFunc(s, func(m string) string { return "| SIZE |" })
	s = regexp.MustCompile(`\| +\d+ \| +\d+ \| +\|\n`).ReplaceAllString(s, "| I | I | |\n")
	s = regexp.MustCompile(`-+\+-+\+-+\+\n`).ReplaceAllString(s, "---\n")
	s = regexp.MustCompile(`"(dbSize|dbSizeInUse|raftIndex|raftAppliedIndex)":\d+,?`).ReplaceAllString(s, "")
	s = regexp.MustCompile(`"(DBSize|RaftIndex|RaftAppliedIndex)" : \d+`).ReplaceAllString(s, `"$1" : N`)
	s = regexp.MustCompile(`(?m)^\|.*ENDPOINT.*\|$|^\+-.*$|^\|.*\|$`).ReplaceAllStringFunc(s, func(m string) string {
		// the table's widths follow the sizes: keep the columns' words only
		return strings.Join(strings.Fields(strings.NewReplacer("|", " ", "+", " ", "-", " ").Replace(m)), " ")
	})
	_ = statusNumbers
	return s
}

// withoutDescription drops the DESCRIPTION section of a usage text: the
// console prints NAME, USAGE and the flags, not etcdctl's long help.
func withoutDescription(s string) string {
	return regexp.MustCompile(`(?s)DESCRIPTION:\n.*?\n\n(OPTIONS:)`).ReplaceAllString(s, "$1")
}

// withoutCountOnly drops get's --count-only from a usage text: the console
// has etcdctl 3.5's flag, Debian's etcdctl 3.4 does not.
func withoutCountOnly(s string) string {
	return regexp.MustCompile(`(?m)^ +--count-only\[=false\]\t+Get only the count\n`).ReplaceAllString(s, "")
}

var leaseIDPatterns = regexp.MustCompile(`\b[0-9a-f]{16}\b|("(ID|id)" ?: ?)\d+`)

// leaseIDs blanks the lease IDs in an etcdctl output.
func leaseIDs(s string) string {
	return leaseIDPatterns.ReplaceAllStringFunc(s, func(m string) string {
		if i := strings.LastIndexAny(m, ": "); strings.HasPrefix(m, `"`) {
			return m[:i+1] + "LEASE"
		}
		return "LEASE"
	})
}

var etcdctlNoise = regexp.MustCompile(`(?m)^\{"level":"warn".*\n`)

func TestEtcdctlMatchesTheRealEtcdctl(t *testing.T) {
	if _, err := exec.LookPath("etcdctl"); err != nil {
		requireTool(t, "etcdctl", "etcd-client")
	}
	requireTool(t, "jq", "jq")
	etcd := etcdtest.Start(t, etcdtest.Options{})
	endpoint := strings.TrimPrefix(etcd.URL, "http://")

	// The session answers with the real etcd's IDs, so headers compare.
	resp, err := http.Post(etcd.URL+"/v3/maintenance/status", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Header struct {
			ClusterID string `json:"cluster_id"`
			MemberID  string `json:"member_id"`
		} `json:"header"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	clusterID, _ := strconv.ParseUint(st.Header.ClusterID, 10, 64)
	memberID, _ := strconv.ParseUint(st.Header.MemberID, 10, 64)
	sess, err := session.New("golden", mvcc.NewMemoryBackend(), session.Options{Gateway: etcdgw.Options{ClusterID: clusterID, MemberID: memberID}})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	con := startConsole(t, sess, time.Now())
	real := realShell{
		env:          []string{"PATH=" + os.Getenv("PATH"), "LANG=C", "ETCDCTL_API=3", "ETCDCTL_ENDPOINTS=" + endpoint},
		filterStderr: func(s string) string { return etcdctlNoise.ReplaceAllString(s, "") },
	}
	for _, s := range etcdctlSteps {
		if strings.Contains(s.line, "{next}") {
			// A live watch starts from the next revision, so it sees the
			// writes that follow however late it starts.
			s.line = strings.ReplaceAll(s.line, "{next}", strconv.FormatInt(sess.Store.Rev()+1, 10))
		}
		name := s.line
		realLine := s.line
		if s.real != "" {
			realLine = s.real
		}
		var want, got result
		if s.watch != "" {
			// The console's watch runs on the shared console; its output is
			// complete when it contains the same marker.
			run := func(side func(string) result) func() {
				return func() {
					for _, a := range s.after {
						side(a)
					}
				}
			}
			want = real.watchUntil(t, realLine, s.watch, run(func(l string) result { return real.run(t, l) }))
			got = consoleWatchUntil(t, con, s.line, s.watch, run(func(l string) result { return runConsole(t, con, l) }))
			// Both were interrupted; what matters is what they printed.
			want.code, got.code = 0, 0
		} else {
			want = real.run(t, realLine)
			got = runConsole(t, con, s.line)
		}
		// The console shows the endpoint given with --endpoints, else
		// etcdctl's default; the real one was given the test etcd's.
		want.stdout = strings.ReplaceAll(want.stdout, endpoint, "127.0.0.1:2379")
		if s.normalize != nil {
			want = result{s.normalize(want.stdout), s.normalize(want.stderr), want.code}
			got = result{s.normalize(got.stdout), s.normalize(got.stderr), got.code}
		}
		compare(t, name, want, got)
	}
}

// requireTool skips (or, in CI, fails) when a real tool is missing.
func requireTool(t *testing.T, bin, pkg string) {
	t.Helper()
	if _, err := exec.LookPath(bin); err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is required in CI (Debian package %s; scripts/ensure-deps.sh installs it)", bin, pkg)
	}
	t.Skipf("no %s on PATH (Debian package %s)", bin, pkg)
}
