package jq

import (
	"strings"
	"testing"
)

func run(t *testing.T, filter, input string) (string, error) {
	t.Helper()
	p, err := Compile(filter)
	if err != nil {
		return "", err
	}
	v, err := Parse([]byte(input))
	if err != nil {
		t.Fatalf("input %s: %v", input, err)
	}
	var outs []string
	err = p.Run(v, nil, func(r any) error {
		outs = append(outs, Marshal(r, Format{Compact: true}))
		return nil
	})
	return strings.Join(outs, " "), err
}

func TestTheArticlesFilters(t *testing.T) {
	in := `{"header":{"revision":738},"kvs":[{"key":"L3JlZ2lzdHJ5L2RlcGxveW1lbnRzL2RlZmF1bHQvbmdpbng=","mod_revision":738}],"count":1}`
	for filter, want := range map[string]string{
		`.kvs[].key|=@base64d`:    `{"header":{"revision":738},"kvs":[{"key":"/registry/deployments/default/nginx","mod_revision":738}],"count":1}`,
		`.kvs[0].mod_revision`:    `738`,
		`.header.revision`:        `738`,
		`.kvs[] | {mod_revision}`: `{"mod_revision":738}`,
		`.kvs | length`:           `1`,
	} {
		got, err := run(t, filter, in)
		if err != nil || got != want {
			t.Errorf("%s: got %s (%v), want %s", filter, got, err, want)
		}
	}
}

func TestNumbersPrintAsJq16PrintsThem(t *testing.T) {
	for f, want := range map[float64]string{
		18011104697467366872: "18011104697467367000", 1e15: "1000000000000000", 1e16: "1e+16", 1.5e16: "15000000000000000",
		0.0001: "0.0001", 0.00001: "1e-05", 3: "3", -2.5: "-2.5", 1e300: "1e+300",
	} {
		if got := FormatNumber(f); got != want {
			t.Errorf("%v: got %s, want %s", f, got, want)
		}
	}
}

func TestObjectsKeepTheirKeyOrder(t *testing.T) {
	got, _ := run(t, `. + {a: 1}`, `{"z":0,"b":1}`)
	if got != `{"z":0,"b":1,"a":1}` {
		t.Fatalf("got %s", got)
	}
	if got := Marshal(mustParse(t, `{"b":[1,{"c":null}],"a":"é"}`), Format{Indent: 2}); got != "{\n  \"b\": [\n    1,\n    {\n      \"c\": null\n    }\n  ],\n  \"a\": \"é\"\n}" {
		t.Fatalf("pretty: %s", got)
	}
}

func mustParse(t *testing.T, s string) any {
	v, err := Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestErrorsAreWordedAsJqWordsThem(t *testing.T) {
	for filter, want := range map[string]string{
		`.a.b`:          `Cannot index number with string "b"`,
		`.[]`:           `Cannot iterate over null (null)`,
		`.a | @base64d`: `string ("1") trailing base64 byte found`,
		`.a + "s"`:      `number (1) and string ("s") cannot be added`,
	} {
		in := `{"a":1}`
		if filter == `.[]` {
			in = `null`
		}
		_, err := run(t, filter, in)
		if err == nil || err.Error() != want {
			t.Errorf("%s: err = %v, want %s", filter, err, want)
		}
	}
	if _, err := Compile(`foo`); err == nil || !IsCompileError(err) || !strings.HasPrefix(err.Error(), "foo/0 is not defined") {
		t.Errorf("undefined function: %v", err)
	}
	if _, err := Compile(`.[`); err == nil || !strings.HasPrefix(err.Error(), "syntax error, unexpected $end") {
		t.Errorf("syntax error: %v", err)
	}
}

func TestUpdatesAndAssignmentsWorkOnPaths(t *testing.T) {
	for filter, want := range map[string]string{
		`.a |= . + 1`:            `{"a":2,"b":[1,2]}`,
		`.b[] |= . * 10`:         `{"a":1,"b":[10,20]}`,
		`.c.d = "new"`:           `{"a":1,"b":[1,2],"c":{"d":"new"}}`,
		`.b += [3]`:              `{"a":1,"b":[1,2,3]}`,
		`del(.b[0])`:             `{"a":1,"b":[2]}`,
		`.b[] |= select(. > 1)`:  `{"a":1,"b":[2]}`,
		`[paths]`:                `[["a"],["b"],["b",0],["b",1]]`,
		`to_entries | map(.key)`: `["a","b"]`,
	} {
		got, err := run(t, filter, `{"a":1,"b":[1,2]}`)
		if err != nil || got != want {
			t.Errorf("%s: got %s (%v), want %s", filter, got, err, want)
		}
	}
}
