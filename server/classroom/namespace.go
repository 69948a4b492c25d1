package classroom

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/session"
)

// errNamespaceExists: the namespace a new student's id names is taken.
var errNamespaceExists = errors.New("namespace exists")

// createNamespace creates a student's own namespace through the session's
// Kubernetes API, as the teacher would with kubectl, so that it is an
// ordinary namespace at an ordinary revision (and a watcher sees it come).
// It is labelled with the student's id and carries their display name.
func createNamespace(ctx context.Context, s *session.Session, id, displayName string) error {
	body, _ := json.Marshal(map[string]any{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata": map[string]any{
			"name":        id,
			"labels":      map[string]string{"rvplay/student": id},
			"annotations": map[string]string{"rvplay/display-name": displayName},
		},
	})
	req := &api.Request{
		Method: "POST",
		Path:   "/api/v1/namespaces",
		Query:  map[string][]string{"fieldManager": {"rvplay-classroom"}},
		Header: api.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}},
		Body:   body,
	}
	resp := s.Serve(api.WithPrincipal(ctx, teacher), req)
	switch {
	case resp.Stream != nil:
		resp.Stream.Close()
		return fmt.Errorf("creating namespace %s: unexpected stream", id)
	case resp.Status == 201:
		return nil
	case resp.Status == 409:
		return errNamespaceExists
	}
	return fmt.Errorf("creating namespace %s: %d %s", id, resp.Status, resp.Body)
}
