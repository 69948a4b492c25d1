package api

import (
	"encoding/base64"
	"strings"
)

// A page cannot set User-Agent (browsers drop it from fetch and a WebSocket
// carries no headers at all), yet a session names each client by its
// User-Agent: its record of exchanges and kube's default field managers
// do. The lab's clients therefore send it as BrowserUserAgentHeader on a
// fetch and as a WebSocket subprotocol made by UserAgentProtocol, and the
// server's transport restores it before the session sees the request.
const BrowserUserAgentHeader = "X-Rvplay-User-Agent"

// userAgentProtocolPrefix begins the subprotocol: then comes the
// User-Agent in unpadded base64url, since a subprotocol is an HTTP token.
const userAgentProtocolPrefix = "user-agent.rvplay.dev."

// UserAgentProtocol is the WebSocket subprotocol that carries ua.
func UserAgentProtocol(ua string) string {
	return userAgentProtocolPrefix + base64.RawURLEncoding.EncodeToString([]byte(ua))
}

// UserAgentFromProtocol reads the User-Agent of a subprotocol made by
// UserAgentProtocol.
func UserAgentFromProtocol(p string) (string, bool) {
	enc, ok := strings.CutPrefix(strings.TrimSpace(p), userAgentProtocolPrefix)
	if !ok {
		return "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// LabProduct follows a lab client's label in its User-Agent
// ("operator-a/rvplay-lab"): kube-apiserver names a writer's field manager
// after the User-Agent's part before the first "/", so that part is the
// client's own name, as a program's name is in client-go's User-Agent.
const LabProduct = "rvplay-lab"

// LabUserAgent is the User-Agent of the lab's client with this label.
func LabUserAgent(label string) string { return label + "/" + LabProduct }

// LabClient returns the label of a lab client's User-Agent.
func LabClient(ua string) (string, bool) {
	label, ok := strings.CutSuffix(ua, "/"+LabProduct)
	return label, ok && label != ""
}
