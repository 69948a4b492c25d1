package classroom

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The bodies of the classroom's own requests: small JSON objects.
// Unknown fields are ignored, as kube-apiserver's non-strict decoding does.

// maxRequestBody bounds the body of POST /sessions and POST /s/<id>/join.
const maxRequestBody = 4 << 10

// maxDisplayName bounds a student's display name, in characters.
const maxDisplayName = 64

// createRequest is the body of POST /sessions: empty, or {"name": "<id>"}.
type createRequest struct {
	Name string `json:"name"`
}

// decodeCreate decodes a POST /sessions body. An empty body asks for a
// random id.
func decodeCreate(body []byte) (createRequest, error) {
	var req createRequest
	if len(bytes.TrimSpace(body)) == 0 {
		return req, nil
	}
	if err := decodeObject(body, &req); err != nil {
		return createRequest{}, err
	}
	return req, nil
}

// joinRequest is the body of POST /s/<id>/join.
type joinRequest struct {
	Code string `json:"code"`
	Name string `json:"name"`
}

// decodeJoin decodes a POST /s/<id>/join body and checks the display
// name: what the class sees of a student, so it is text of at most 64
// printable characters, trimmed.
func decodeJoin(body []byte) (joinRequest, error) {
	var req joinRequest
	if err := decodeObject(body, &req); err != nil {
		return joinRequest{}, err
	}
	req.Name = strings.TrimSpace(req.Name)
	switch {
	case req.Name == "":
		return joinRequest{}, errors.New("name: Required value: the name the class will see")
	case utf8.RuneCountInString(req.Name) > maxDisplayName:
		return joinRequest{}, fmt.Errorf("name: Too long: must have at most %d characters", maxDisplayName)
	case strings.IndexFunc(req.Name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		return joinRequest{}, errors.New("name: Invalid value: must be printable text")
	case req.Code == "":
		return joinRequest{}, errors.New("code: Required value: the session's join code")
	}
	return req, nil
}

// decodeObject decodes one JSON object and nothing after it.
func decodeObject(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("invalid JSON: data after the object")
	}
	return nil
}
