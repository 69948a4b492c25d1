package classroom

import (
	"net/http"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// The decoders of the classroom's own request bodies never panic, and what
// they accept is what the rest of the package relies on.

func FuzzDecodeCreate(f *testing.F) {
	for _, s := range []string{``, ` `, `{}`, `{"name":"class-1"}`, `{"name":""}`, `{"name":5}`, `null`, `[]`,
		`{"name":"a"}{}`, `{}}`, `{"name":"\u00e9"}`, `{"other":1,"name":"x"}`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeCreate(body)
		if err != nil && req.Name != "" {
			t.Fatalf("an error with a name: %q", req.Name)
		}
	})
}

func FuzzDecodeJoin(f *testing.F) {
	for _, s := range []string{`{"code":"ABCD-EFGH","name":"Alice"}`, `{"code":"abcd efgh","name":"  Bob  "}`,
		`{"code":"x","name":""}`, `{"code":"","name":"x"}`, `{"name":"` + strings.Repeat("é", 65) + `"}`,
		`{"code":"x","name":"a\u0000b"}`, `{"code":"x","name":"\u202e"}`, `{}`, `[]`, ``, `{"code":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeJoin(body)
		if err != nil {
			return
		}
		if req.Code == "" || req.Name == "" || req.Name != strings.TrimSpace(req.Name) ||
			!utf8.ValidString(req.Name) || utf8.RuneCountInString(req.Name) > maxDisplayName ||
			strings.IndexFunc(req.Name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
			t.Fatalf("accepted %q", req.Name)
		}
		// Every accepted name gives a student id that names a namespace.
		if id := studentID(req.Name); CheckName(id) != nil || len(id) > 26 {
			t.Fatalf("name %q gives id %q", req.Name, id)
		}
	})
}

// bearer reads the Authorization header of any request without panicking.
func FuzzBearer(f *testing.F) {
	for _, s := range []string{"", "Bearer abc", "bearer  abc ", "Basic xyz", "abc", "Bearer", " "} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, header string, etcd bool) {
		r := newRequestWithAuthorization(header)
		token, presented := bearer(r, etcd)
		if !presented && token != "" {
			t.Fatalf("a token %q without a header", token)
		}
	})
}

func newRequestWithAuthorization(v string) *http.Request {
	r, _ := http.NewRequest("GET", "http://x/", nil)
	if v != "" {
		r.Header["Authorization"] = []string{v}
	}
	return r
}

// webSocketBearer reads any Sec-WebSocket-Protocol header without
// panicking; a token it accepts is valid UTF-8, and no subprotocol left
// for the handshake to echo carries a token.
func FuzzWebSocketBearer(f *testing.F) {
	for _, s := range []string{"", "rvplay.watch", BearerProtocolPrefix + "dG9rZW4, rvplay.watch", BearerProtocolPrefix + "dG9rZW4",
		BearerProtocolPrefix + "a+b, x", BearerProtocolPrefix + "dG9rZW4," + BearerProtocolPrefix + "dG9rZW4,x", BearerProtocolPrefix + ",x",
		",,", " , x ,", BearerProtocolPrefix + "_w,x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		r, _ := http.NewRequest("GET", "http://x/", nil)
		r.Header.Set("Upgrade", "websocket")
		r.Header["Sec-Websocket-Protocol"] = []string{header}
		token, presented, err := webSocketBearer(r)
		if !presented && (token != "" || err != nil) {
			t.Fatalf("nothing presented, yet token %q, err %v", token, err)
		}
		if err != nil || !presented {
			return
		}
		if token == "" || !utf8.ValidString(token) {
			t.Fatalf("accepted token %q", token)
		}
		left := r.Header.Get("Sec-Websocket-Protocol")
		if left == "" {
			t.Fatal("no subprotocol left for the handshake to echo")
		}
		for _, p := range strings.Split(left, ",") {
			if p == "" || strings.HasPrefix(p, BearerProtocolPrefix) {
				t.Fatalf("left %q for the handshake", left)
			}
		}
	})
}

func FuzzDecodePush(f *testing.F) {
	for _, s := range []string{`{"lesson":"races","step":1}`, `{"lesson":"races"}`, `{"step":1}`, `{"lesson":"x","step":-1}`,
		`{"lesson":"` + strings.Repeat("a", 65) + `"}`, `{"lesson":1}`, `{"lesson":"x","step":1.5}`, `{"lesson":"x","step":1e99}`,
		`[]`, ``, `null`, `{"lesson":"x"}{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodePush(body)
		if err != nil {
			if req != (pushRequest{}) {
				t.Fatalf("an error with a request: %+v", req)
			}
			return
		}
		if req.Lesson == "" || len(req.Lesson) > maxSlug || req.Step < 0 {
			t.Fatalf("accepted %+v", req)
		}
	})
}

func FuzzDecodeChannelMessage(f *testing.F) {
	for _, s := range []string{`{"type":"presence","lesson":"races","step":2}`, `{"type":"presence"}`, `{"type":"presence","step":3}`,
		`{"type":"presence","lesson":"A"}`, `{"type":"presence","lesson":"x","step":1001}`, `{"type":"chat"}`, `{}`, `[]`, ``,
		`{"type":"presence","lesson":"\u00e9"}`, `{"type":"presence","lesson":"x","step":-2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		m, err := decodeChannelMessage(msg)
		if err != nil {
			return
		}
		// What the roster shows is a slug and a small step, never more.
		if m.Type != "presence" || len(m.Lesson) > maxSlug || strings.IndexFunc(m.Lesson, notSlugRune) >= 0 ||
			m.Step < 0 || m.Step > maxStep || (m.Lesson == "" && m.Step != 0) {
			t.Fatalf("accepted %+v", m)
		}
	})
}
