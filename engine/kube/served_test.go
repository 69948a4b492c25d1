package kube

import (
	"fmt"
	"testing"

	"github.com/rvplay/rvplay/engine/kube/schema"
)

// Every served resource is in the OpenAPI documents, with its
// subresources: kubectl validates what it creates against them, and
// refuses a kind it finds neither there nor among the CRDs.
func TestEveryServedResourceIsInTheOpenAPIDocuments(t *testing.T) {
	documented := map[string]string{}
	for _, r := range schema.Resources {
		documented[r.Group+"/"+r.Version+"/"+r.Plural] = fmt.Sprint(r.Kind, r.Namespaced, r.Subresources)
	}
	for _, r := range Resources {
		var subs []string
		if r.Scale {
			subs = append(subs, "scale")
		}
		if r.Status {
			subs = append(subs, "status")
		}
		key := r.Group + "/" + r.Version + "/" + r.Resource
		if got, want := documented[key], fmt.Sprint(r.Kind, r.Namespaced, subs); got != want {
			t.Errorf("%s: the OpenAPI documents have %q, the REST layer serves %q", key, got, want)
		}
		delete(documented, key)
	}
	for key := range documented {
		t.Errorf("%s is documented but not served", key)
	}
}
