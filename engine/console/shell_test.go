package console

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestAScriptSplitsIntoPipelinesAndStages(t *testing.T) {
	sc, err := parseScript(`etcdctl get k1 -w json|jq '.kvs[0].key' | grep "a b"; echo done && echo ok`)
	if err != nil {
		t.Fatal(err)
	}
	var got [][][]string
	for _, p := range sc.pipelines {
		var stages [][]string
		for _, st := range p {
			stages = append(stages, st.args)
		}
		got = append(got, stages)
	}
	want := [][][]string{
		{{"etcdctl", "get", "k1", "-w", "json"}, {"jq", ".kvs[0].key"}, {"grep", "a b"}},
		{{"echo", "done"}},
		{{"echo", "ok"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if !reflect.DeepEqual(sc.andThen, []bool{false, true}) {
		t.Fatalf("andThen = %v", sc.andThen)
	}
}

func TestQuotesAndEscapesFollowTheShell(t *testing.T) {
	for in, want := range map[string][]string{
		`a 'b c' "d e"`:          {"a", "b c", "d e"},
		`a "x\"y" 'x\y'`:         {"a", `x"y`, `x\y`},
		`a b\ c`:                 {"a", "b c"},
		`a ""`:                   {"a", ""},
		`put k '{"a":1}'`:        {"put", "k", `{"a":1}`},
		"a \\\n b":               {"a", "b"},
		`jsonpath='{.a}{"\n"}'`:  {`jsonpath={.a}{"\n"}`},
		`-o=jsonpath="{.items}"`: {"-o=jsonpath={.items}"},
	} {
		sc, err := parseScript(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got := sc.pipelines[0][0].args; !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(sc.pipelines[0][0].assigns) == 1) {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

func TestAHeredocIsTheStdinOfItsCommand(t *testing.T) {
	sc, err := parseScript("kubectl apply -f - <<EOF\napiVersion: v1\nkind: ConfigMap\nEOF\necho after")
	if err != nil {
		t.Fatal(err)
	}
	st := sc.pipelines[0][0]
	if st.heredoc == nil || *st.heredoc != "apiVersion: v1\nkind: ConfigMap\n" {
		t.Fatalf("heredoc = %v", st.heredoc)
	}
	if len(sc.pipelines) != 2 || sc.pipelines[1][0].args[0] != "echo" {
		t.Fatalf("the line after the heredoc is a command of its own: %+v", sc.pipelines)
	}
	sc, err = parseScript("cat <<-'END' | grep a\n\ta\n\tb\n\tEND")
	if err != nil {
		t.Fatal(err)
	}
	if got := *sc.pipelines[0][0].heredoc; got != "a\nb\n" {
		t.Fatalf("<<- strips leading tabs: %q", got)
	}
}

func TestAnUnfinishedInputAsksForMore(t *testing.T) {
	for _, in := range []string{
		`etcdctl put k 'unclosed`,
		`echo "unclosed`,
		"kubectl apply -f - <<EOF\napiVersion: v1",
		`etcdctl get k |`,
		`echo a &&`,
		`echo a \`,
	} {
		_, err := parseScript(in)
		var inc *incompleteError
		if !errors.As(err, &inc) {
			t.Errorf("%q: err = %v, want incomplete", in, err)
		}
	}
}

func TestWhatTheShellDoesNotDoIsRefused(t *testing.T) {
	for in, want := range map[string]string{
		"echo $HOME":    "shell variables",
		"echo $(date)":  "substitutions",
		"sleep 1 &":     "background",
		"a || b":        "||",
		"echo `date`":   "`",
		"echo a | | b":  "syntax error near unexpected token `|'",
		"; echo":        "syntax error near unexpected token `;'",
		"echo > ":       "syntax error",
		"echo a <<<'x'": "<<<",
	} {
		_, err := parseScript(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want it to mention %q", in, err, want)
		}
	}
}

func TestRedirectionsAndAssignmentsAreKeptApart(t *testing.T) {
	sc, err := parseScript("ETCDCTL_API=3 etcdctl get k > out.txt")
	if err != nil {
		t.Fatal(err)
	}
	st := sc.pipelines[0][0]
	if !reflect.DeepEqual(st.assigns, []string{"ETCDCTL_API=3"}) || !reflect.DeepEqual(st.args, []string{"etcdctl", "get", "k"}) || st.stdout != "out.txt" || st.appendOut {
		t.Fatalf("%+v", st)
	}
	sc, _ = parseScript("kubectl apply -f - < cm.yaml >> log")
	st = sc.pipelines[0][0]
	if st.stdinFile != "cm.yaml" || st.stdout != "log" || !st.appendOut {
		t.Fatalf("%+v", st)
	}
}

func TestFlagsParseAsPflagDoes(t *testing.T) {
	fs := newFlagSet("get",
		&flagDef{name: "prefix", kind: boolFlag},
		&flagDef{name: "rev", kind: intFlag},
		&flagDef{name: "write-out", short: "w", kind: stringFlag, def: "simple"},
		&flagDef{name: "from-literal", kind: stringArrayFlag},
		&flagDef{name: "endpoints", kind: stringSliceFlag},
	)
	pos, err := fs.parse([]string{"k1", "--prefix", "--rev=3", "-wjson", "--from-literal", "a=1", "--from-literal=b=2", "--endpoints", "a,b", "--", "--not-a-flag"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pos, []string{"k1", "--not-a-flag"}) || !fs.bool("prefix") || fs.int("rev") != 3 || fs.str("write-out") != "json" ||
		!reflect.DeepEqual(fs.strs("from-literal"), []string{"a=1", "b=2"}) || !reflect.DeepEqual(fs.strs("endpoints"), []string{"a", "b"}) {
		t.Fatalf("pos %q, flags %v", pos, fs.values)
	}
	for args, want := range map[string]string{
		"--nope":       "unknown flag: --nope",
		"-x":           "unknown shorthand flag: 'x' in -x",
		"--rev":        "flag needs an argument: --rev",
		"-w":           "flag needs an argument: 'w' in -w",
		"--rev=abc":    `invalid argument "abc" for "--rev" flag: strconv.ParseInt: parsing "abc": invalid syntax`,
		"--prefix=yes": `invalid argument "yes" for "--prefix" flag: strconv.ParseBool: parsing "yes": invalid syntax`,
	} {
		fs := newFlagSet("get", &flagDef{name: "prefix", kind: boolFlag}, &flagDef{name: "rev", kind: intFlag}, &flagDef{name: "write-out", short: "w", kind: stringFlag})
		if _, err := fs.parse(strings.Fields(args)); err == nil || err.Error() != want {
			t.Errorf("%s: err = %v, want %q", args, err, want)
		}
	}
}
