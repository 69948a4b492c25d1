package schema

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// A Violation is one way a custom resource breaks its schema, worded as
// kube-apiserver words it: kube-openapi's validation message, turned into
// a field.Error the way apiextensions does (kubeOpenAPIResultToFieldErrors).
type Violation struct {
	// Type is the field.Error's cause: FieldValueInvalid,
	// FieldValueTypeInvalid, FieldValueRequired, FieldValueNotSupported,
	// FieldValueTooLong or FieldValueTooMany.
	Type string
	// Field is the path ("spec.ports[0].port"); "<nil>" for a failure of
	// allOf, anyOf, oneOf or not, which kube reports without one.
	Field string
	// Value is what kube shows as the bad value (int64, float64, string,
	// or a value to render as JSON).
	Value any
	// Detail is the message after the value.
	Detail string
}

// Validate checks obj against s as kube-apiserver checks a custom
// resource (apiextensions' SchemaValidator over kube-openapi): for each
// value, its type, allOf/anyOf/oneOf/not, string bounds and pattern,
// format, number bounds and multipleOf, array bounds and items, enum,
// then object bounds, properties (in sorted order; kube's order is a
// map's) and required fields. path prefixes every field, as the status
// subresource's "status" does, while the messages name the path within s
// (kube validates status against its own schema).
func (s *Structural) Validate(path string, obj any) []Violation {
	v := &validator{}
	v.value(s, "", jsonValue(obj))
	if path != "" {
		for i := range v.out {
			if v.out[i].Field == "<nil>" {
				v.out[i].Field = path
			} else if v.out[i].Field == "" {
				v.out[i].Field = path
			} else {
				v.out[i].Field = path + "." + v.out[i].Field
			}
		}
	}
	return v.out
}

type validator struct{ out []Violation }

func (v *validator) add(code, path string, value any, detail string) {
	v.out = append(v.out, Violation{Type: code, Field: path, Value: value, Detail: detail})
}

// in is kube-openapi's "<path> in body" (the path is empty at the root).
func in(path string) string { return path + " in body" }

// jsonValue is what kube's unstructured decoding makes of a JSON number:
// int64 when it is an integer that fits, else float64.
func jsonValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case int:
		return int64(x)
	}
	return v
}

func schemaKind(v any) string {
	switch v.(type) {
	case bool:
		return "boolean"
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

// value runs kube-openapi's validators of one schema in their order.
func (v *validator) value(s *Structural, path string, x any) {
	if s == nil {
		return
	}
	x = jsonValue(x)
	if x == nil {
		v.typeOf(s, path, nil)
		v.enum(s, path, nil)
		return
	}
	v.typeOf(s, path, x)
	v.junctors(s, path, x)
	if str, ok := x.(string); ok {
		v.stringBounds(s, path, str)
		v.format(s, path, str)
	}
	if k := schemaKind(x); k == "integer" || k == "number" {
		v.number(s, path, x)
	}
	if l, ok := x.([]any); ok {
		v.array(s, path, l)
	}
	v.enum(s, path, x)
	if m, ok := x.(map[string]any); ok && (s.Type == "object" || len(s.Properties) > 0 || s.AdditionalProperties != nil ||
		len(s.Required) > 0 || s.MaxProperties != nil || s.MinProperties != nil) {
		v.object(s, path, m)
	}
}

func (s *Structural) types() []string {
	if s.IntOrString {
		return []string{"integer", "string"}
	}
	if s.Type == "" {
		return nil
	}
	return []string{s.Type}
}

func (v *validator) typeOf(s *Structural, path string, x any) {
	types := s.types()
	if len(types) == 0 {
		return
	}
	want := strings.Join(types, ",")
	if x == nil {
		if !s.Nullable {
			v.add("FieldValueTypeInvalid", path, "null", fmt.Sprintf("%s must be of type %s: %q", in(path), want, "null"))
		}
		return
	}
	got := schemaKind(x)
	for _, t := range types {
		if t == got || t == "number" && got == "integer" {
			return
		}
		if t == "integer" && got == "number" {
			if f := x.(float64); f == math.Trunc(f) && !math.IsInf(f, 0) {
				return
			}
		}
	}
	v.add("FieldValueTypeInvalid", path, got, fmt.Sprintf("%s must be of type %s: %q", in(path), want, got))
	if got == "number" && s.Type == "integer" && !s.IntOrString {
		// kube-openapi's format check of the same value
		v.add("FieldValueInvalid", "<nil>", "", "Checked value must be of type integer (default format) in "+path)
	}
}

// junctors are allOf, anyOf, oneOf and not. Of the failures of the
// alternatives kube keeps those of the one that came closest; here, those
// of the first that failed.
func (v *validator) junctors(s *Structural, path string, x any) {
	try := func(alt *Structural) []Violation {
		sub := &validator{}
		sub.value(alt, path, x)
		return sub.out
	}
	if len(s.AnyOf) > 0 {
		var best []Violation
		ok := false
		for _, alt := range s.AnyOf {
			errs := try(alt)
			if len(errs) == 0 {
				ok = true
				break
			}
			if best == nil {
				best = errs
			}
		}
		if !ok {
			v.add("FieldValueInvalid", "<nil>", "", fmt.Sprintf("%q must validate at least one schema (anyOf)", path))
			v.out = append(v.out, best...)
		}
	}
	if len(s.OneOf) > 0 {
		var best []Violation
		valid := 0
		for _, alt := range s.OneOf {
			errs := try(alt)
			if len(errs) == 0 {
				valid++
			} else if best == nil && valid == 0 {
				best = errs
			}
		}
		if valid != 1 {
			more := "Found none valid"
			if valid > 1 {
				more = fmt.Sprintf("Found %d valid alternatives", valid)
			}
			v.add("FieldValueInvalid", "<nil>", "", fmt.Sprintf("%q must validate one and only one schema (oneOf). %s", path, more))
			if valid == 0 {
				v.out = append(v.out, best...)
			}
		}
	}
	if len(s.AllOf) > 0 {
		valid := 0
		for _, alt := range s.AllOf {
			errs := try(alt)
			if len(errs) == 0 {
				valid++
			}
			v.out = append(v.out, errs...)
		}
		if valid != len(s.AllOf) {
			more := ""
			if valid == 0 {
				more = ". None validated"
			}
			v.add("FieldValueInvalid", "<nil>", "", fmt.Sprintf("%q must validate all the schemas (allOf)%s", path, more))
		}
	}
	if s.Not != nil && len(try(s.Not)) == 0 {
		v.add("FieldValueInvalid", "<nil>", "", fmt.Sprintf("%q must not validate the schema (not)", path))
	}
}

// stringBounds stops at the first failure, as kube-openapi's string
// validator does.
func (v *validator) stringBounds(s *Structural, path, x string) {
	n := int64(utf8.RuneCountInString(x))
	switch {
	case s.MaxLength != nil && n > *s.MaxLength:
		unit := "bytes"
		if *s.MaxLength == 1 {
			unit = "byte"
		}
		v.add("FieldValueTooLong", path, nil, fmt.Sprintf("may not be more than %d %s", *s.MaxLength, unit))
	case s.MinLength != nil && n < *s.MinLength:
		v.add("FieldValueInvalid", path, x, fmt.Sprintf("%s should be at least %d chars long", in(path), *s.MinLength))
	case s.Pattern != "":
		match, err := MatchPattern(s.Pattern, x)
		switch {
		case err != nil:
			v.add("FieldValueInvalid", path, x, fmt.Sprintf("%s should match '%s, but pattern is invalid: %s'", in(path), s.Pattern, err))
		case !match:
			v.add("FieldValueInvalid", path, x, fmt.Sprintf("%s should match '%s'", in(path), s.Pattern))
		}
	}
}

// format checks the formats kube-openapi's registry knows that custom
// resources use most; other formats are accepted as they are.
func (v *validator) format(s *Structural, path, x string) {
	if s.Format != "" && !validFormat(s.Format, x) {
		v.add("FieldValueTypeInvalid", path, x, fmt.Sprintf("%s must be of type %s: %q", in(path), s.Format, x))
	}
}

func validFormat(format, x string) bool {
	switch format {
	case "date-time", "datetime":
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700", "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05"} {
			if _, err := time.Parse(layout, x); err == nil {
				return true
			}
		}
		return false
	case "date":
		_, err := time.Parse("2006-01-02", x)
		return err == nil
	case "byte":
		_, err := base64.StdEncoding.DecodeString(x)
		return err == nil
	case "uuid":
		return isUUID(x)
	case "ipv4":
		a, err := netip.ParseAddr(x)
		return err == nil && a.Is4()
	case "ipv6":
		a, err := netip.ParseAddr(x)
		return err == nil && a.Is6()
	case "cidr":
		_, err := netip.ParsePrefix(x)
		return err == nil
	}
	return true
}

func isUUID(x string) bool {
	if len(x) != 36 {
		return false
	}
	for i, c := range x {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'):
			return false
		}
	}
	return true
}

// number is kube-openapi's number validator: multipleOf, then minimum,
// then maximum, integers compared as integers.
func (v *validator) number(s *Structural, path string, x any) {
	i, isInt := x.(int64)
	f, _ := x.(float64)
	if isInt {
		f = float64(i)
	}
	if s.MultipleOf != nil {
		m := *s.MultipleOf
		switch {
		case isInt && int64(m) <= 0:
			v.add("FieldValueInvalid", path, int64(m), fmt.Sprintf("factor MultipleOf declared for %s must be positive: %v", path, int64(m)))
		case isInt && i%int64(m) != 0:
			v.add("FieldValueInvalid", path, x, fmt.Sprintf("%s should be a multiple of %v", in(path), int64(m)))
		case !isInt && m <= 0:
			v.add("FieldValueInvalid", path, m, fmt.Sprintf("factor MultipleOf declared for %s must be positive: %v", path, m))
		case !isInt:
			q := f / m
			if m < 1 {
				q = 1 / m * f
			}
			if q != math.Trunc(q) || math.IsInf(q, 0) {
				v.add("FieldValueInvalid", path, x, fmt.Sprintf("%s should be a multiple of %v", in(path), m))
			}
		}
	}
	if s.Minimum != nil {
		min, ex := *s.Minimum, s.ExclusiveMinimum
		var fail bool
		var shown any = min
		if isInt {
			m := int64(min)
			fail, shown = !ex && i < m || ex && i <= m, m
		} else {
			fail = !ex && f < min || ex && f <= min
		}
		if fail {
			op := "greater than or equal to"
			if ex {
				op = "greater than"
			}
			v.add("FieldValueInvalid", path, x, fmt.Sprintf("%s should be %s %v", in(path), op, shown))
		}
	}
	if s.Maximum != nil {
		max, ex := *s.Maximum, s.ExclusiveMaximum
		var fail bool
		var shown any = max
		if isInt {
			m := int64(max)
			fail, shown = !ex && i > m || ex && i >= m, m
		} else {
			fail = !ex && f > max || ex && f >= max
		}
		if fail {
			op := "less than or equal to"
			if ex {
				op = "less than"
			}
			v.add("FieldValueInvalid", path, x, fmt.Sprintf("%s should be %s %v", in(path), op, shown))
		}
	}
}

func (v *validator) array(s *Structural, path string, l []any) {
	if s.Items != nil {
		for i, e := range l {
			v.value(s.Items, path+"["+strconv.Itoa(i)+"]", e)
		}
	}
	n := int64(len(l))
	if s.MinItems != nil && n < *s.MinItems {
		v.add("FieldValueInvalid", path, n, fmt.Sprintf("%s should have at least %d items", in(path), *s.MinItems))
	}
	if s.MaxItems != nil && n > *s.MaxItems {
		unit := "items"
		if *s.MaxItems == 1 {
			unit = "item"
		}
		v.add("FieldValueTooMany", path, n, fmt.Sprintf("must have at most %d %s", *s.MaxItems, unit))
	}
	if s.UniqueItems {
		for i := range l {
			for j := 0; j < i; j++ {
				if JSONEqual(l[i], l[j]) {
					v.add("FieldValueInvalid", path, "", in(path)+" shouldn't contain duplicates")
					return
				}
			}
		}
	}
}

// enum is kube's NotSupported: the allowed values quoted, non-strings as
// JSON.
func (v *validator) enum(s *Structural, path string, x any) {
	if len(s.Enum) == 0 {
		return
	}
	for _, e := range s.Enum {
		if enumEqual(x, jsonValue(e)) {
			return
		}
	}
	values := make([]string, len(s.Enum))
	for i, e := range s.Enum {
		if str, ok := e.(string); ok {
			values[i] = strconv.Quote(str)
		} else {
			b, _ := json.Marshal(e)
			values[i] = strconv.Quote(string(b))
		}
	}
	v.add("FieldValueNotSupported", path, x, "supported values: "+strings.Join(values, ", "))
}

// enumEqual is kube-openapi's comparison: the value converted to the enum
// value's Go type, then reflect.DeepEqual (jsonEqual's strict form, which
// is that for decoded JSON without linking reflect's deep equality).
func enumEqual(x, e any) bool {
	switch ev := e.(type) {
	case int64:
		switch xv := x.(type) {
		case int64:
			return xv == ev
		case float64:
			return int64(xv) == ev
		}
		return false
	case float64:
		switch xv := x.(type) {
		case int64:
			return float64(xv) == ev
		case float64:
			return xv == ev
		}
		return false
	case nil:
		return false
	}
	return jsonEqual(x, e, false)
}

func (v *validator) object(s *Structural, path string, m map[string]any) {
	n := int64(len(m))
	if s.MinProperties != nil && n < *s.MinProperties {
		v.add("FieldValueInvalid", path, n, fmt.Sprintf("%s should have at least %d properties", in(path), *s.MinProperties))
	}
	if s.MaxProperties != nil && n > *s.MaxProperties {
		unit := "items"
		if *s.MaxProperties == 1 {
			unit = "item"
		}
		v.add("FieldValueTooMany", path, n, fmt.Sprintf("must have at most %d %s", *s.MaxProperties, unit))
	}
	child := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	if s.AdditionalProperties != nil {
		for _, k := range sortedKeys(m) {
			if _, declared := s.Properties[k]; !declared {
				v.value(s.AdditionalProperties, child(k), m[k])
			}
		}
	}
	for _, k := range s.Keys {
		if x, ok := m[k]; ok {
			v.value(s.Properties[k], child(k), x)
		}
	}
	for _, k := range s.Required {
		if _, ok := m[k]; !ok {
			v.add("FieldValueRequired", child(k), nil, "")
		}
	}
}
