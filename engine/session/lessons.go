package session

import (
	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/lesson"
)

// LessonExchanges is the record in the lesson engine's terms (what its
// predicates and misconception detectors read), oldest first: principal's
// own exchanges (a student's from their own ring), or the session ring's
// for "".
func (s *Session) LessonExchanges(principal string) []lesson.Exchange {
	all, _ := s.Record.Since(0, Filter{Principal: principal}, 0)
	out := make([]lesson.Exchange, len(all))
	for i := range all {
		out[i] = lessonExchange(&all[i])
	}
	return out
}

func lessonExchange(e *Exchange) lesson.Exchange {
	le := lesson.Exchange{Seq: int64(e.Seq), Time: e.Time, Principal: e.Principal.ID, UserAgent: e.UserAgent,
		Method: e.Method, Path: e.Path, Query: e.Query, ContentType: e.ContentType, KubectlCommand: e.KubectlCommand,
		Status: e.Status, Reason: e.Reason, Message: e.Message, ResourceVersion: e.RV,
		Key: e.Key, RangeEnd: e.RangeEnd, Revision: e.RequestRevision}
	le.Client, _ = api.LabClient(e.UserAgent)
	if e.Protocol == ProtocolKubernetes && e.Method != "GET" {
		le.SentResourceVersion = e.RVSent
	}
	if e.Watch != nil {
		w := e.Watch.Summary()
		lw := &lesson.WatchRecord{Events: int(w.Events), Bookmarks: int(w.Bookmarks), InitialEventsEnd: w.InitialEventsEnd,
			LastResourceVersion: revisionText(w.LastRV),
			Ended:               w.Ended, ErrorCode: w.ErrorCode, ErrorReason: w.ErrorReason}
		if e.Protocol == ProtocolEtcd && w.ErrorReason == "compacted" {
			lw.ErrorCode, lw.ErrorReason = 410, "Expired"
		}
		le.Watch = lw
	}
	return le
}
