package classroom

import (
	"context"
	"strconv"
	"testing"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/session"
)

// What one poll of the teacher's dashboard costs (GET /rvplay/v1/class,
// every three seconds while it is open) for a class of 200 after they sent
// n exchanges (at most every student's ring full): the detectors run over
// each student's ring and what is new is stored, each student's watches
// are read, the roster is built.
func BenchmarkClassSummary(b *testing.B) {
	for _, size := range []int{2048, 200 * session.DefaultRecordPerStudent} {
		b.Run("exchanges="+strconv.Itoa(size), func(b *testing.B) {
			opts := Options{Session: sessionWithLessons(b)}
			e := newEnv(b, opts)
			class := e.create("class")
			var students []api.Principal
			for i := range 200 {
				j := e.join(class, "s"+strconv.Itoa(i))
				students = append(students, api.Principal{ID: j.ID, Name: j.Name, Role: api.RoleStudent})
			}
			l, release, err := e.reg.Acquire(context.Background(), "class")
			if err != nil {
				b.Fatal(err)
			}
			s := l.Session()
			// Each student reads, writes blindly (a finding) and conflicts.
			path := "/api/v1/namespaces/default/configmaps"
			s.Serve(context.Background(), &api.Request{Method: "POST", Path: path, Body: []byte(`{"metadata":{"name":"c"}}`),
				Header: api.Header{"Content-Type": {"application/json"}}})
			for i := 0; i < size; i++ {
				ctx := api.WithPrincipal(context.Background(), students[i%len(students)])
				req := &api.Request{Method: "GET", Path: path + "/c", Header: api.Header{"User-Agent": {"B/rvplay-lab"}}}
				if i%3 == 1 {
					req = &api.Request{Method: "PUT", Path: path + "/c", Body: []byte(`{"metadata":{"name":"c"}}`),
						Header: api.Header{"Content-Type": {"application/json"}, "User-Agent": {"B/rvplay-lab"}}}
				}
				s.Serve(ctx, req)
			}
			release()
			teacher := cred{bearer: class.TeacherToken}
			must(b, "class", e.do("GET", "/s/class"+ClassPath, teacher, ""), 200) // the first tally stores every finding
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if a := e.do("GET", "/s/class"+ClassPath, teacher, ""); a.status != 200 {
					b.Fatal(a.status)
				}
			}
		})
	}
}
