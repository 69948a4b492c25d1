package classroom

import (
	"context"
	"strings"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/engine/session"
	"github.com/rvplay/rvplay/server/etcdstore"
)

// A session stored on an etcd cluster has no compaction of its own: etcd
// compacts the whole cluster, every session's history at once, every
// --etcd-compaction-interval (server/etcdstore). Its compactionInterval
// stays 0s, which a lesson's set-up may set; the teacher who sets another
// value, by hand or through a lesson's action (lesson 6's 10s), is told
// why in a 422 Status, rather than given an interval that compacts
// nothing. The rule is the server's, so that the browser's build pays
// nothing for it.

// clusterCompacted serves a session on a cluster that compacts for it.
type clusterCompacted struct {
	s   *session.Session
	why string
}

// withClusterCompaction is the handler of s: s itself, or on a store whose
// cluster compacts for it, s refusing a compactionInterval of its own
// (from HTTP and from its lessons' set-ups alike).
func withClusterCompaction(s *session.Session) api.Handler {
	st, ok := s.Store.(*etcdstore.Store)
	if !ok || st.ClusterCompaction() == "" {
		return s
	}
	h := clusterCompacted{s: s, why: st.ClusterCompaction()}
	if s.Lessons != nil {
		s.Lessons.Handler = h
	}
	return h
}

func (c clusterCompacted) Serve(ctx context.Context, req *api.Request) *api.Response {
	// Only the teacher's change: anyone else is refused it by the session
	// (403) whatever it says.
	if (req.Method == "PATCH" || req.Method == "PUT") && strings.TrimSuffix(req.Path, "/") == session.ControlPrefix+"/settings" &&
		api.PrincipalFrom(ctx).Role == api.RoleTeacher {
		if next, err := c.s.Settings().Merge(req.Body); err == nil && next.CompactionInterval != 0 {
			// The cause names the field, so that a lesson's action can go on
			// with its other settings and the cluster's compaction.
			why := next.CompactionInterval.String() + " refused: " + c.why
			return statusResponse(&kube.StatusError{Status: kube.Status{Kind: "Status", APIVersion: "v1", Status: "Failure",
				Message: "compactionInterval: " + why, Reason: kube.ReasonInvalid, Code: 422,
				Details: &kube.StatusDetails{Name: c.s.Name, Kind: "settings",
					Causes: []kube.StatusCause{{Type: "FieldValueForbidden", Message: why, Field: "compactionInterval"}}}}})
		}
	}
	return c.s.Serve(ctx, req)
}
