//go:build !(js && wasm)

package kubegolden

// pageBody is the body as the client sends it: unchanged outside the
// browser build.
func pageBody(contentType string, body []byte) ([]byte, bool) { return body, true }
