package kube

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// The hand-written matchers must accept exactly what kube-apiserver's
// regular expressions accept.
func TestNameMatchersAgreeWithKubesRegexps(t *testing.T) {
	cases := []struct {
		format string
		match  func(string) bool
	}{
		{dns1123LabelFmt, matchDNS1123Label},
		{dns1123SubdomainFmt, matchDNS1123Subdomain},
		{qualifiedNameFmt, matchQualifiedName},
		{labelValueFmt, matchLabelValue},
	}
	const alphabet = "az09AZ-_.x"
	rng := rand.New(rand.NewPCG(1, 2))
	inputs := []string{"", "a", "-", ".", "a.", ".a", "a..b", "a-b", "A", "a_b", "a.b-c.d", "-a", "a-"}
	for i := 0; i < 20000; i++ {
		b := make([]byte, rng.IntN(8))
		for j := range b {
			b[j] = alphabet[rng.IntN(len(alphabet))]
		}
		inputs = append(inputs, string(b))
	}
	for _, c := range cases {
		re := regexp.MustCompile("^" + c.format + "$")
		for _, in := range inputs {
			if got, want := c.match(in), re.MatchString(in); got != want {
				t.Errorf("%q against %s: matcher says %v, regexp says %v", in, c.format, got, want)
			}
		}
	}
}
