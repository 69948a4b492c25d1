package classroom

import (
	"encoding/base64"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rvplay/rvplay/engine/lesson"
	"github.com/rvplay/rvplay/engine/session"
)

// On a class's session a student works on their own names where a lesson
// gives them their own (the lesson engine's rewriting, package
// classnames, which the registry installs on every session it opens): the
// definition served, the set-up's objects and the check are theirs; the
// teacher keeps the article's names.
func TestAStudentWorksOnTheirOwnNames(t *testing.T) {
	c, err := lesson.Load(fstest.MapFS{"01-keys/lesson.json": {Data: []byte(`{"slug":"keys",
	  "class":{"names":["k1","demo"]},
	  "setup":{"objects":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"demo","namespace":"default"}}]},
	  "steps":[{"id":"put","actions":[{"id":"put","run":"etcdctl put k1 v1"}],"solution":["put"],
	    "verify":{"key":{"key":"k1","exists":true}}}]}`)}})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, Options{Session: session.Options{Lessons: c}})
	class := e.create("class")
	ada := e.join(class, "Ada")
	own := "k1-" + ada.ID
	must(t, "the teacher's lesson", e.do("GET", "/s/class/rvplay/v1/lessons/keys", cred{bearer: class.TeacherToken}, ""), 200, `"run":"etcdctl put k1 v1"`)
	must(t, "Ada's lesson", e.do("GET", "/s/class/rvplay/v1/lessons/keys", cred{bearer: ada.Token}, ""), 200,
		`"run":"etcdctl put `+own+` v1"`, `"key":"`+own+`"`, `"own":{"demo":"demo-`+ada.ID+`","k1":"`+own+`"}`)
	must(t, "Ada's set-up", e.do("POST", "/s/class/rvplay/v1/lessons/keys/setup", cred{bearer: ada.Token}, ""), 200,
		`"name":"demo-`+ada.ID+`","status":201`)
	verify := func(token string) answer {
		return e.do("POST", "/s/class/rvplay/v1/lessons/keys/steps/1/verify", cred{bearer: token}, `{"since":0}`)
	}
	put := func(key string) {
		body := `{"key":"` + base64.StdEncoding.EncodeToString([]byte(key)) + `","value":"djE="}`
		must(t, "put "+key, e.do("POST", "/s/class/v3/kv/put", cred{bearer: class.TeacherToken}, body), 200)
	}
	put("k1") // the article's key: the teacher's, not Ada's
	must(t, "Ada's check with only the article's k1", verify(ada.Token), 200, `"passed":false`)
	put(own)
	must(t, "Ada's check with her own k1", verify(ada.Token), 200, `"passed":true`)
	if a := e.do("GET", "/s/class/rvplay/v1/lessons/keys", cred{bearer: ada.Token}, ""); strings.Contains(a.body, `"run":"etcdctl put k1 v1"`) {
		t.Errorf("Ada got the article's names: %s", a.body)
	}
}
