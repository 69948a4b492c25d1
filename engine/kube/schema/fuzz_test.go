package schema

import "testing"

func FuzzStrictFieldErrorsNeverPanics(f *testing.F) {
	f.Add([]byte(`{"kind":"Deployment","spec":{"template":{"spec":{"containers":[{"name":"a","x":1}]}}}}`))
	f.Add([]byte(`{"a":{"a":1,"a":[1,{"b":2}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		StrictFieldErrors(ForGVK("apps/v1", "Deployment"), b)
	})
}
