//go:build !js

package schema

import _ "embed"

// events.k8s.io/v1 Events are served natively only (engine/kube's
// events.go): their types and their entry in the OpenAPI documents.

//go:embed types_events.txt
var eventsTypes string

var _ = func() bool {
	moreTypes = append(moreTypes, eventsTypes)
	return true
}()

func init() {
	Resources = append(Resources, Resource{"events.k8s.io", "v1", "events", "Event", true, nil, nil})
}
