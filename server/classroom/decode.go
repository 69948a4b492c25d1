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

// pushRequest is the body of POST /s/<id>/rvplay/v1/push.
type pushRequest struct {
	Lesson string `json:"lesson"`
	Step   int    `json:"step"`
}

// decodePush decodes a push: a lesson's slug and a step, 0 (the lesson's
// introduction) or more; whether the lesson has that step is the
// catalog's to say.
func decodePush(body []byte) (pushRequest, error) {
	var req pushRequest
	if err := decodeObject(body, &req); err != nil {
		return pushRequest{}, err
	}
	switch {
	case req.Lesson == "":
		return pushRequest{}, errors.New("lesson: Required value: the slug of the lesson to move the class to")
	case len(req.Lesson) > maxSlug:
		return pushRequest{}, fmt.Errorf("lesson: Too long: must have at most %d bytes", maxSlug)
	case req.Step < 0:
		return pushRequest{}, errors.New("step: Invalid value: must be 0 (the lesson's introduction) or a step number")
	}
	return req, nil
}

// maxSlug bounds a lesson's slug in what the classroom takes.
const maxSlug = 64

// channelMessage is a message a browser sends on its channel.
type channelMessage struct {
	Type   string `json:"type"`
	Lesson string `json:"lesson"`
	Step   int    `json:"step"`
}

// decodeChannelMessage decodes a browser's message: a presence report,
// the only kind there is, whose lesson is a slug ("" for the lesson list)
// and whose step is 0 or more.
func decodeChannelMessage(msg []byte) (channelMessage, error) {
	var m channelMessage
	if err := decodeObject(msg, &m); err != nil {
		return channelMessage{}, err
	}
	switch {
	case m.Type != "presence":
		return channelMessage{}, fmt.Errorf("type: Unsupported value: %q: supported values: \"presence\"", m.Type)
	case len(m.Lesson) > maxSlug || strings.IndexFunc(m.Lesson, notSlugRune) >= 0:
		return channelMessage{}, errors.New("lesson: Invalid value: a lesson's slug (lower case letters, digits and '-')")
	case m.Step < 0 || m.Step > maxStep:
		return channelMessage{}, fmt.Errorf("step: Invalid value: must be between 0 and %d", maxStep)
	case m.Lesson == "" && m.Step != 0:
		return channelMessage{}, errors.New("step: Invalid value: must be 0 outside a lesson")
	}
	return m, nil
}

// maxStep bounds a reported step: no lesson has more.
const maxStep = 1000

func notSlugRune(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') }
