package session

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestMemberPathFindsTheTopLevelMetadataResourceVersionOnly(t *testing.T) {
	for body, want := range map[string]string{
		`{"kind":"ConfigMap","metadata":{"name":"x","resourceVersion":"12"},"data":{}}`:                     "12",
		` { "metadata" : { "annotations":{"a":"{\"resourceVersion\":\"3\"}"}, "resourceVersion" : "7" } }`:  "7",
		`{"spec":{"template":{"metadata":{"resourceVersion":"1"}}},"metadata":{"name":"x"}}`:                "",
		`{"involvedObject":{"resourceVersion":"4"},"metadata":{"resourceVersion":"9"}}`:                     "9",
		`{"metadata":{"resourceVersion":5}}`:                                                                "",
		`{"items":[{"metadata":{"resourceVersion":"2"}}],"metadata":{"resourceVersion":"8","continue":""}}`: "8",
		`not json`:                          "",
		`{"metadata":{"resourceVersion":"1`: "",
		``:                                  "",
		`{"a":[1,2,{"b":"]"}],"metadata":{"resourceVersion":"3"}}`:          "3",
		`{"a":true,"b":null,"c":-1.5e3,"metadata":{"resourceVersion":"6"}}`: "6",
	} {
		if got := memberPath([]byte(body), "metadata", "resourceVersion"); got != want {
			t.Errorf("%s: %q, want %q", body, got, want)
		}
	}
	if got := memberPath([]byte(`{"kind":"DeleteOptions","preconditions":{"resourceVersion":"4"}}`), "preconditions", "resourceVersion"); got != "4" {
		t.Errorf("preconditions: %q", got)
	}
}

func FuzzMemberPathAgreesWithEncodingJSON(f *testing.F) {
	f.Add(`{"metadata":{"resourceVersion":"12"}}`)
	f.Add(`{"a":{"b":[{"c":"d"}]},"metadata":{"name":"n","resourceVersion":"1"}}`)
	f.Fuzz(func(t *testing.T, body string) {
		got := memberPath([]byte(body), "metadata", "resourceVersion")
		// A map, not a struct: kube-apiserver's decoder matches member
		// names exactly, encoding/json's struct fields do not.
		var o map[string]any
		if json.Unmarshal([]byte(body), &o) != nil {
			return // invalid JSON: any answer will do, as long as there is no panic
		}
		md, _ := o["metadata"].(map[string]any)
		want, _ := md["resourceVersion"].(string)
		// encoding/json decodes escapes and takes the last duplicate; the
		// scanner reads raw text and the first: only compare plain cases.
		// Invalid UTF-8 it replaces; the scanner passes the bytes on.
		if got != want && !hasEscapeOrDuplicate(body) && utf8.ValidString(body) {
			t.Fatalf("%s: %q, encoding/json %q", body, got, want)
		}
	})
}

func hasEscapeOrDuplicate(s string) bool {
	n := 0
	for i := 0; i+len(`"metadata"`) <= len(s); i++ {
		if s[i:i+len(`"metadata"`)] == `"metadata"` {
			n++
		}
		if s[i] == '\\' {
			return true
		}
	}
	for i := 0; i+len(`"resourceVersion"`) <= len(s); i++ {
		if s[i:i+len(`"resourceVersion"`)] == `"resourceVersion"` {
			n++
		}
	}
	return n > 2
}

// membersOf's one walk finds what a walk per member (memberRaw) finds: the
// first member of each name, nothing past text that is not JSON.
func TestMembersOfFindsWhatAWalkPerMemberFinds(t *testing.T) {
	for _, body := range []string{
		`{"key":"a2V5","range_end":"a2V6","revision":"7"}`,
		`{"revision":7,"key":"a2V5"}`,
		` { "range_end" : "" , "key" : "a2V5" } `,
		`{"key":"a2V5","key":"b3RoZXI=","revision":"1","revision":"2"}`,
		`{"value":"{\"key\":\"x\"}","lease":"0","key":"a2V5"}`,
		`{"nested":{"key":"x","revision":"3"},"limit":"1"}`,
		`{"a":[1,{"key":"]"}],"revision":"4"}`,
		`{"key":"a2V5","range_end":`,
		`{"key":"a2V5" "revision":"5"}`,
		`not json`, ``, `[]`, `{}`,
	} {
		var got [3][]byte
		membersOf([]byte(body), rangeMembers, got[:])
		for i, name := range rangeMembers {
			if want := memberRaw([]byte(body), name); string(got[i]) != string(want) {
				t.Errorf("%s: %s is %q, a walk for it alone finds %q", body, name, got[i], want)
			}
		}
	}
}

func FuzzMembersOfAgreesWithMemberRaw(f *testing.F) {
	f.Add(`{"key":"a2V5","range_end":"a2V6","revision":"7"}`)
	f.Add(`{"compare":[{"key":"a"}],"key":"b","revision":1}`)
	f.Fuzz(func(t *testing.T, body string) {
		var got [3][]byte
		membersOf([]byte(body), rangeMembers, got[:])
		for i, name := range rangeMembers {
			if want := memberRaw([]byte(body), name); string(got[i]) != string(want) {
				t.Fatalf("%s: %s is %q, memberRaw %q", body, name, got[i], want)
			}
		}
	})
}
