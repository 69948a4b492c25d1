package consolediff

import (
	"os"

	"testing"

	"time"

	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/session"
)

// jqInput is an etcdctl -w json answer with a 64-bit ID, a deleted key's
// bare kv and values that are base64 JSON, as the lessons feed jq.
const jqInput = `{"header":{"cluster_id":18011104697467366872,"member_id":6460912315094810421,"revision":9,"raft_term":3},"kvs":[{"key":"azE=","create_revision":6,"mod_revision":8,"version":2,"value":"bnYx"},{"key":"L3JlZ2lzdHJ5L2NvbmZpZ21hcHMvZGVmYXVsdC9kZW1v","create_revision":7,"mod_revision":9,"version":3,"value":"eyJraW5kIjoiQ29uZmlnTWFwIiwiZGF0YSI6eyJhIjoiMSJ9fQ=="}],"count":2}
{"a":[1,2.5,-3,1e100,0.00001,null,true,"x\u0001\"é"],"b":{"c":{"d":"deep"}},"e":[]}
`

// jqFilters are run on jqInput by the real jq and by the console's.
var jqFilters = []string{
	`jq`, `jq .`, `jq -c .`, `jq -r .kvs[0].key`, `jq '.kvs[].key|=@base64d'`, `jq '.kvs[].value|=@base64d'`,
	`jq '.kvs[0].mod_revision'`, `jq .header.revision`, `jq '.header | keys'`, `jq -c '.kvs | map(.key | @base64d)'`,
	`jq -r '.kvs[] | "\(.key|@base64d) \(.mod_revision)"'`, `jq '.kvs[]? | select(.version > 2) | .mod_revision'`,
	`jq -c '[.kvs[]?.value | @base64d | fromjson?]'`, `jq '.count // "none"'`, `jq -S -c .b`, `jq '.a | length'`,
	`jq -c '.a | sort'`, `jq -c '.a[1:3]'`, `jq -c '.a[-1]'`, `jq -c 'to_entries? | map(.key)'`,
	`jq -c '.b | paths'`, `jq -c 'del(.kvs)'`, `jq -c '.e += [1] | .e'`, `jq -c 'with_entries(.value |= type)'`,
	`jq -c '{rev: .header.revision, n: (.kvs | length)}'`, `jq -r '.kvs[]?.key | @base64d | ascii_upcase'`,
	`jq '.nope.deeper'`, `jq '.header.revision + 1'`, `jq -c '[.a[]? | numbers] | add'`, `jq '.a[0] as $x | $x * 10'`,
	`jq -c 'if .kvs then "etcd" else "other" end'`, `jq -j '.kvs[]?.version'`, `jq -c '[paths(type == "number")] | length'`,
	`jq -c '.b | .. | strings'`, `jq -c 'reduce .a[]? as $v (0; . + 1)'`, `jq -e .missing`, `jq '.a | .[] | tostring'`,
	`jq -r '.kvs[]? | [.key, .version] | @csv'`, `jq -r '.kvs[]? | [.key, .version] | @tsv'`, `jq -c '.a | unique'`,
	`jq -c 'keys_unsorted'`, `jq '.kvs[0].key | test("^az")'`, `jq -c '.a | map(select(. != null))'`,
	`jq -c 'limit(1; .[]?)'`, `jq -c 'first(.kvs[]?)'`, `jq -c '.b.c | has("d")'`, `jq -c '[.a[]? | strings] | join("-")'`,
	`jq -c '.a | index(true)'`, `jq -c '.header | to_entries[] | select(.value > 3) | .key'`,
	// errors
	`jq .a.b`, `jq '.['`, `jq 'foo'`, `jq '.kvs[] | @base64d'`, `jq '$nope'`, `jq '.header.revision | .x'`,
	`jq '.[] | .[]'`, `jq -c '.a + 1'`,
}

func TestJqMatchesTheRealJq(t *testing.T) {
	requireTool(t, "jq", "jq")
	real := realShell{env: []string{"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"}}
	sess, err := session.New("jq", mvcc.NewMemoryBackend(), session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	con := startConsole(t, sess, time.Now())
	for _, f := range jqFilters {
		line := "cat input.json | " + f
		script := "cat > input.json <<'EOF'\n" + jqInput + "EOF\n" + line
		want := real.runIn(t, t.TempDir(), script)
		got := runConsole(t, con, script)
		compare(t, f, want, got)
	}
}
