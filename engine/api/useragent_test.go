package api

import "testing"

func TestUserAgentTravelsAsASubprotocolToken(t *testing.T) {
	ua := "operator-a/rvplay-lab (linux) ü"
	p := UserAgentProtocol(ua)
	for _, c := range p {
		if !(c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			t.Fatalf("%q is not an HTTP token", p)
		}
	}
	if got, ok := UserAgentFromProtocol(p); !ok || got != ua {
		t.Fatalf("round trip: %q %v", got, ok)
	}
	if _, ok := UserAgentFromProtocol("v4.channel.k8s.io"); ok {
		t.Fatal("another protocol is no User-Agent")
	}
}
