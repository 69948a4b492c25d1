package classroom

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"
)

// BearerProtocolPrefix starts the WebSocket subprotocol that carries a
// bearer token from a browser, which cannot set an Authorization header on
// a WebSocket: "base64url.bearer.authorization.k8s.io." and the token in
// unpadded base64url, as kube-apiserver reads it.
const BearerProtocolPrefix = "base64url.bearer.authorization.k8s.io."

// webSocketBearer reads the token of r's bearer subprotocol, as
// kube-apiserver's WebSocket authenticator does: at most one such
// subprotocol, well encoded, and at least one other subprotocol beside it
// (the one the server will echo: never the token's). The token's
// subprotocol is then removed from r, so that nothing downstream sees,
// echoes or logs it. presented is false when r carries none.
func webSocketBearer(r *http.Request) (token string, presented bool, err error) {
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return "", false, nil
	}
	var others []string
	for _, h := range r.Header.Values("Sec-Websocket-Protocol") {
		for _, p := range strings.Split(h, ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				continue // "a,,b" or a trailing comma: no subprotocol
			}
			encoded, ok := strings.CutPrefix(p, BearerProtocolPrefix)
			if !ok {
				others = append(others, p)
				continue
			}
			if presented {
				return "", true, errors.New("multiple base64.bearer.authorization tokens specified")
			}
			presented = true
			b, err := base64.RawURLEncoding.DecodeString(encoded)
			if err != nil {
				return "", true, errors.New("invalid base64.bearer.authorization token encoding")
			}
			if !utf8.Valid(b) {
				return "", true, errors.New("invalid base64.bearer.authorization token")
			}
			token = string(b)
		}
	}
	if !presented {
		return "", false, nil
	}
	if token == "" {
		return "", true, errors.New("empty base64.bearer.authorization token")
	}
	if len(others) == 0 {
		return "", true, errors.New("missing additional subprotocol")
	}
	r.Header.Set("Sec-Websocket-Protocol", strings.Join(others, ","))
	return token, true, nil
}
