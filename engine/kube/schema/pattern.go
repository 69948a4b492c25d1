package schema

import (
	"regexp"
	"sync"
)

// Patterns (a custom resource schema's "pattern") are Go regular
// expressions, as kube-apiserver matches them; each is compiled once.

var (
	patternMu sync.Mutex
	patterns  = map[string]compiledPattern{}
)

type compiledPattern struct {
	re  *regexp.Regexp
	err error
}

// CompilePattern reports whether pattern is a valid regular expression
// (kube's "must be a valid regular expression, but isn't: <why>").
func CompilePattern(pattern string) error {
	_, err := compiled(pattern)
	return err
}

// MatchPattern reports whether s matches pattern (unanchored, as
// regexp.MatchString).
func MatchPattern(pattern, s string) (bool, error) {
	re, err := compiled(pattern)
	if err != nil {
		return false, err
	}
	return re.MatchString(s), nil
}

func compiled(pattern string) (*regexp.Regexp, error) {
	patternMu.Lock()
	defer patternMu.Unlock()
	if c, ok := patterns[pattern]; ok {
		return c.re, c.err
	}
	if len(patterns) >= 1024 {
		patterns = map[string]compiledPattern{} // the patterns of deleted definitions go too
	}
	re, err := regexp.Compile(pattern)
	patterns[pattern] = compiledPattern{re, err}
	return re, err
}
