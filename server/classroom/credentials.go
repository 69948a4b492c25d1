package classroom

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"strings"
	"unicode"
)

// Credentials: session ids, tokens and join codes come from crypto/rand,
// and only their SHA-256 hashes are kept (in memory and in storage; a
// renewed join code is the one exception, on an etcd cluster for two
// minutes so that every replica's dashboards show it: shared.go). A
// token carries 256 random bits, so a fast hash is enough: there is no
// password to brute-force. Hashes are compared with
// crypto/subtle.ConstantTimeCompare, so the time a refusal takes says
// nothing about how close a guess was.

// idAlphabet is RFC 4648's base32 alphabet in lower case: a random session
// id is a DNS label, safe in URLs and file names.
const idAlphabet = "abcdefghijklmnopqrstuvwxyz234567"

// codeAlphabet has no letters or digits that read alike on a projector
// (no 0/O, 1/I/L), and join codes are read case-insensitively.
const codeAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

const (
	// randomIDLength: 16 characters of 32 = 80 bits, beyond guessing.
	randomIDLength = 16
	// joinCodeLength: 8 characters of 31 ≈ 39.6 bits, short enough to read
	// aloud; a guess costs an HTTP request, so 2^39 guesses are out of reach.
	joinCodeLength = 8
	// tokenBytes: 256 bits.
	tokenBytes = 32
)

// randomString returns n characters drawn uniformly from alphabet
// (rejection sampling: no modulo bias).
func randomString(alphabet string, n int) string {
	limit := 256 - 256%len(alphabet)
	out := make([]byte, 0, n)
	buf := make([]byte, 2*n)
	for len(out) < n {
		rand.Read(buf) // never fails (crypto/rand panics rather)
		for _, b := range buf {
			if int(b) < limit && len(out) < n {
				out = append(out, alphabet[int(b)%len(alphabet)])
			}
		}
	}
	return string(out)
}

// newSessionID is an unguessable session id for POST /sessions without a name.
func newSessionID() string { return randomString(idAlphabet, randomIDLength) }

// newJoinCode is a join code as shown to the class: "ABCD-EFGH".
func newJoinCode() string {
	c := randomString(codeAlphabet, joinCodeLength)
	return c[:4] + "-" + c[4:]
}

// newToken is a bearer token: 256 random bits, base64url without padding.
func newToken() string {
	b := make([]byte, tokenBytes)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// hashToken is what is stored of a token.
func hashToken(token string) []byte {
	h := sha256.Sum256([]byte("rvplay token\x00" + token))
	return h[:]
}

// hashJoinCode is what is stored of a join code. The session's name is part
// of the hash, so two sessions with the same code do not share a hash, and
// the code is normalised first: a class types "abcd efgh" for "ABCD-EFGH".
func hashJoinCode(session, code string) []byte {
	h := sha256.Sum256([]byte("rvplay join code\x00" + session + "\x00" + normalizeJoinCode(code)))
	return h[:]
}

func normalizeJoinCode(code string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || unicode.IsSpace(r) {
			return -1
		}
		return unicode.ToUpper(r)
	}, code)
}

// sameHash compares two hashes in constant time.
func sameHash(a, b []byte) bool { return len(a) > 0 && subtle.ConstantTimeCompare(a, b) == 1 }

// studentID is a student's stable id, shown to the class and naming the
// student's own namespace: the display name made a DNS label (at most 20
// characters), then 5 random characters, so that ids never collide in
// practice and cannot be predicted (nobody can take another student's
// namespace before they join).
func studentID(displayName string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(displayName) {
		if b.Len() >= 20 {
			break
		}
		if ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if b.Len() > 0 && !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	slug := strings.TrimRight(b.String(), "-")
	if slug == "" {
		slug = "student"
	}
	return slug + "-" + randomString(idAlphabet, 5)
}
