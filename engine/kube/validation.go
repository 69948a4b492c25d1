package kube

import (
	"fmt"
	"strings"
)

const (
	dns1123LabelFmt     = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
	dns1123SubdomainFmt = dns1123LabelFmt + "(\\." + dns1123LabelFmt + ")*"
	qualifiedNameFmt    = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
	labelValueFmt       = "(" + qualifiedNameFmt + ")?"
)

// The formats above are what kube-apiserver's messages quote; matching is
// done by hand because package regexp costs about 0.1 MB gzip in the
// WebAssembly build. validation_test.go holds the matchers to the regexps.

func isLowerAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

func isAlnum(c byte) bool { return isLowerAlnum(c) || 'A' <= c && c <= 'Z' }

// matchDNS1123Label matches dns1123LabelFmt.
func matchDNS1123Label(v string) bool {
	if v == "" || !isLowerAlnum(v[0]) || !isLowerAlnum(v[len(v)-1]) {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !isLowerAlnum(v[i]) && v[i] != '-' {
			return false
		}
	}
	return true
}

// matchDNS1123Subdomain matches dns1123SubdomainFmt: labels joined by dots.
func matchDNS1123Subdomain(v string) bool {
	for _, label := range strings.Split(v, ".") {
		if !matchDNS1123Label(label) {
			return false
		}
	}
	return true
}

// matchQualifiedName matches qualifiedNameFmt.
func matchQualifiedName(v string) bool {
	if v == "" || !isAlnum(v[0]) || !isAlnum(v[len(v)-1]) {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// matchLabelValue matches labelValueFmt: empty, or a qualified name.
func matchLabelValue(v string) bool { return v == "" || matchQualifiedName(v) }

// regexError is validation.RegexError: the message, examples and regex.
func regexError(msg, format string, examples ...string) string {
	if len(examples) == 0 {
		return msg + " (regex used for validation is '" + format + "')"
	}
	msg += " (e.g. "
	for i, e := range examples {
		if i > 0 {
			msg += " or "
		}
		msg += "'" + e + "', "
	}
	return msg + "regex used for validation is '" + format + "')"
}

func maxLenError(n int) string { return fmt.Sprintf("must be no more than %d characters", n) }

// IsDNS1123Subdomain is validation.IsDNS1123Subdomain.
func IsDNS1123Subdomain(v string) []string {
	var errs []string
	if len(v) > 253 {
		errs = append(errs, maxLenError(253))
	}
	if !matchDNS1123Subdomain(v) {
		errs = append(errs, regexError("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character", dns1123SubdomainFmt, "example.com"))
	}
	return errs
}

// IsDNS1123Label is validation.IsDNS1123Label.
func IsDNS1123Label(v string) []string {
	var errs []string
	if len(v) > 63 {
		errs = append(errs, maxLenError(63))
	}
	if !matchDNS1123Label(v) {
		errs = append(errs, regexError("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character", dns1123LabelFmt, "my-name", "123-abc"))
	}
	return errs
}

// IsQualifiedName is validation.IsQualifiedName (label and annotation keys).
func IsQualifiedName(v string) []string {
	var errs []string
	parts := strings.Split(v, "/")
	var name string
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		var prefix string
		prefix, name = parts[0], parts[1]
		if len(prefix) == 0 {
			errs = append(errs, "prefix part must be non-empty")
		} else if msgs := IsDNS1123Subdomain(prefix); len(msgs) != 0 {
			for _, m := range msgs {
				errs = append(errs, "prefix part "+m)
			}
		}
	default:
		return append(errs, "a qualified name "+regexError("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", qualifiedNameFmt, "MyName", "my.name", "123-abc")+
			" with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")
	}
	if len(name) == 0 {
		errs = append(errs, "name part must be non-empty")
	} else if len(name) > 63 {
		errs = append(errs, "name part "+maxLenError(63))
	}
	if !matchQualifiedName(name) {
		errs = append(errs, "name part "+regexError("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", qualifiedNameFmt, "MyName", "my.name", "123-abc"))
	}
	return errs
}

// IsValidLabelValue is validation.IsValidLabelValue.
func IsValidLabelValue(v string) []string {
	var errs []string
	if len(v) > 63 {
		errs = append(errs, maxLenError(63))
	}
	if !matchLabelValue(v) {
		errs = append(errs, regexError("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", labelValueFmt, "MyValue", "my_value", "12345"))
	}
	return errs
}

// validateObjectMeta is ValidateObjectMeta's part that applies to the
// supported types: name, generateName, labels and annotations.
func validateObjectMeta(o Object, nameFn func(string) []string) []FieldError {
	var errs []FieldError
	m := meta(o)
	name := str(m, "name")
	if name == "" {
		if str(m, "generateName") == "" {
			errs = append(errs, FieldError{Type: CauseFieldValueRequired, Field: "metadata.name", Detail: "name or generateName is required"})
		}
	} else {
		for _, msg := range nameFn(name) {
			errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: "metadata.name", Value: name, Detail: msg})
		}
	}
	if l, ok := m["labels"].(map[string]any); ok {
		for _, k := range sortedKeys(l) {
			for _, msg := range IsQualifiedName(k) {
				errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: "metadata.labels", Value: k, Detail: msg})
			}
			v, ok := l[k].(string)
			if !ok {
				continue
			}
			for _, msg := range IsValidLabelValue(v) {
				errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: "metadata.labels", Value: v, Detail: msg})
			}
		}
	}
	if a, ok := m["annotations"].(map[string]any); ok {
		total := 0
		for _, k := range sortedKeys(a) {
			for _, msg := range IsQualifiedName(strings.ToLower(k)) {
				errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: "metadata.annotations", Value: k, Detail: msg})
			}
			s, _ := a[k].(string)
			total += len(k) + len(s)
		}
		if total > 256*1024 {
			errs = append(errs, FieldError{Type: CauseFieldValueTooLong, Field: "metadata.annotations", Detail: fmt.Sprintf("may not be more than %d bytes", 256*1024)})
		}
	}
	return errs
}

// IsDNS1035Label is validation.IsDNS1035Label (a custom resource's plural,
// singular and short names, a version's name).
func IsDNS1035Label(v string) []string {
	var errs []string
	if len(v) > 63 {
		errs = append(errs, maxLenError(63))
	}
	ok := v != "" && v[0] >= 'a' && v[0] <= 'z'
	for i := 0; i < len(v) && ok; i++ {
		c := v[i]
		ok = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' && i < len(v)-1
	}
	if !ok {
		errs = append(errs, regexError("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
			"[a-z]([-a-z0-9]*[a-z0-9])?", "my-name", "abc-123"))
	}
	return errs
}

// IsValidPathSegmentName is apimachinery's path.IsValidPathSegmentName:
// a name must be usable as one segment of a URL path.
func IsValidPathSegmentName(name string) []string {
	if name == "." || name == ".." {
		return []string{fmt.Sprintf("may not be '%s'", name)}
	}
	var errs []string
	for _, s := range []string{"/", "%"} {
		if strings.Contains(name, s) {
			errs = append(errs, fmt.Sprintf("may not contain '%s'", s))
		}
	}
	return errs
}
