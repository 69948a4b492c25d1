package kube

import (
	"strconv"
	"strings"
)

// CompareVersions is CompareKubeAwareVersionStrings: +1 when a is the
// more preferred version, -1 when b is, 0 when equal. Versions like v2,
// v1beta1 and v1alpha1 come first (GA, then beta, then alpha; higher
// numbers first); others after them, in alphabetical order.
func CompareVersions(a, b string) int {
	ma, sa, na, oka := parseKubeVersion(a)
	mb, sb, nb, okb := parseKubeVersion(b)
	switch {
	case oka && !okb:
		return 1
	case !oka && okb:
		return -1
	case !oka && !okb:
		return -strings.Compare(a, b)
	case sa != sb:
		return cmpInt(sa, sb)
	case ma != mb:
		return cmpInt(ma, mb)
	}
	return cmpInt(na, nb)
}

func cmpInt(a, b int) int {
	switch {
	case a > b:
		return 1
	case a < b:
		return -1
	}
	return 0
}

// parseKubeVersion reads v<major>[(alpha|beta)<minor>]; stage is 2 for
// GA, 1 for beta, 0 for alpha.
func parseKubeVersion(v string) (major, stage, minor int, ok bool) {
	if !strings.HasPrefix(v, "v") {
		return 0, 0, 0, false
	}
	rest := v[1:]
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i == 0 || rest[0] == '0' {
		return 0, 0, 0, false
	}
	major, _ = strconv.Atoi(rest[:i])
	rest = rest[i:]
	if rest == "" {
		return major, 2, 0, true
	}
	for s, name := range []string{"alpha", "beta"} {
		if n, found := strings.CutPrefix(rest, name); found {
			m, err := strconv.Atoi(n)
			if err != nil || n == "" || n[0] == '0' {
				return 0, 0, 0, false
			}
			return major, s, m, true
		}
	}
	return 0, 0, 0, false
}
