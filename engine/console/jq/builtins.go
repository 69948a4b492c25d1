package jq

import (
	"encoding/base32"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

func argErr(name string, n int) error {
	return &compileError{fmt.Sprintf("%s/%d is not defined", name, n)}
}

func callBuiltin(x call, in any, sc *scope, out emit) error {
	args := x.args
	n := len(args)
	name := x.name
	switch n {
	case 0:
		switch name {
		case "empty":
			return nil
		case "not":
			return out(!truthy(in))
		case "length":
			switch v := in.(type) {
			case nil:
				return out(0.0)
			case bool:
				return errorf("boolean (%s) has no length", dump(v))
			case float64:
				return out(math.Abs(v))
			case string:
				return out(float64(utf8.RuneCountInString(v)))
			case []any:
				return out(float64(len(v)))
			case *Object:
				return out(float64(v.Len()))
			}
		case "utf8bytelength":
			s, ok := in.(string)
			if !ok {
				return errorf("%s (%s) only strings have UTF-8 byte length", typeName(in), dump(in))
			}
			return out(float64(len(s)))
		case "keys", "keys_unsorted":
			switch v := in.(type) {
			case *Object:
				ks := v.keys
				if name == "keys" {
					ks = sortedKeys(v)
				}
				return out(strs(ks))
			case []any:
				a := make([]any, len(v))
				for i := range v {
					a[i] = float64(i)
				}
				return out(a)
			}
			return errorf("%s (%s) has no keys", typeName(in), dump(in))
		case "values":
			if in == nil {
				return nil
			}
			return out(in)
		case "type":
			return out(typeName(in))
		case "tostring":
			return out(toString(in))
		case "tonumber":
			switch v := in.(type) {
			case float64:
				return out(v)
			case string:
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil {
					return errorf("Cannot parse '%s' as JSON", v)
				}
				return out(f)
			}
			return errorf("%s (%s) cannot be parsed as a number", typeName(in), dump(in))
		case "tojson":
			return out(Marshal(in, Format{Compact: true}))
		case "fromjson":
			s, ok := in.(string)
			if !ok {
				return errorf("%s (%s) cannot be parsed as JSON", typeName(in), dump(in))
			}
			v, err := Parse([]byte(s))
			if err != nil {
				return errorf("%s (while parsing '%s')", err, s)
			}
			return out(v)
		case "ascii_downcase", "ascii_upcase":
			s, ok := in.(string)
			if !ok {
				return errorf("%s (%s) cannot be case-converted", typeName(in), dump(in))
			}
			if name == "ascii_downcase" {
				return out(asciiMap(s, 'A', 'Z', 'a'-'A'))
			}
			return out(asciiMap(s, 'a', 'z', 'A'-'a'))
		case "to_entries":
			o, ok := in.(*Object)
			if !ok {
				return errorf("%s (%s) has no keys", typeName(in), dump(in))
			}
			a := []any{}
			for _, k := range o.keys {
				e := NewObject()
				e.Set("key", k)
				e.Set("value", o.vals[k])
				a = append(a, e)
			}
			return out(a)
		case "from_entries":
			a, ok := in.([]any)
			if !ok {
				return errorf("Cannot iterate over %s%s", typeName(in), iterSuffix(in))
			}
			o := NewObject()
			for _, e := range a {
				eo, ok := e.(*Object)
				if !ok {
					return errorf("Cannot index %s with string \"key\"", typeName(e))
				}
				var k any
				for _, kn := range []string{"key", "k", "name", "Name", "Key", "K"} {
					if v, ok := eo.Get(kn); ok && truthy(v) {
						k = v
						break
					}
				}
				var v any
				for _, vn := range []string{"value", "v", "Value", "V"} {
					if vv, ok := eo.Get(vn); ok {
						v = vv
						break
					}
				}
				switch kk := k.(type) {
				case string:
					o.Set(kk, v)
				case float64:
					o.Set(FormatNumber(kk), v)
				case bool:
					o.Set(strconv.FormatBool(kk), v)
				default:
					return errorf("Cannot use %s (%s) as object key", typeName(k), dump(k))
				}
			}
			return out(o)
		case "add":
			var acc any
			err := each(in, func(v any) error {
				r, err := arith("+", acc, v)
				acc = r
				return err
			})
			if err != nil {
				return err
			}
			return out(acc)
		case "any", "all":
			res := name == "all"
			err := each(in, func(v any) error {
				if truthy(v) != (name == "all") {
					res = !res
					return errStop
				}
				return nil
			})
			if err != nil && err != errStop {
				return err
			}
			return out(res)
		case "flatten":
			return flatten(in, 1e9, out)
		case "floor", "ceil", "round", "sqrt", "fabs":
			f, ok := in.(float64)
			if !ok {
				return errorf("%s (%s) number required", typeName(in), dump(in))
			}
			switch name {
			case "floor":
				f = math.Floor(f)
			case "ceil":
				f = math.Ceil(f)
			case "round":
				f = math.Round(f)
			case "sqrt":
				f = math.Sqrt(f)
			case "fabs":
				f = math.Abs(f)
			}
			return out(f)
		case "min", "max", "sort", "unique", "reverse":
			a, ok := in.([]any)
			if !ok {
				switch {
				case name == "reverse" && (in == nil || (typeName(in) == "object" && in.(*Object).Len() == 0) || in == ""):
					return out([]any{})
				case name == "reverse":
					return errorf("Cannot index %s with number", typeName(in))
				case name == "unique":
					return errorf("Cannot iterate over %s (%s)", typeName(in), dump(in))
				case name == "min" || name == "max":
					return errorf("%s (%s) and %s (%s) cannot be iterated over", typeName(in), dump(in), typeName(in), dump(in))
				}
				return errorf("%s (%s) cannot be sorted, as it is not an array", typeName(in), dump(in))
			}
			switch name {
			case "reverse":
				r := make([]any, len(a))
				for i, v := range a {
					r[len(a)-1-i] = v
				}
				return out(r)
			case "min", "max":
				if len(a) == 0 {
					return out(nil)
				}
				best := a[0]
				for _, v := range a[1:] {
					c := compare(v, best)
					if (name == "min" && c < 0) || (name == "max" && c >= 0) {
						best = v
					}
				}
				return out(best)
			}
			s := append([]any{}, a...)
			sort.SliceStable(s, func(i, j int) bool { return compare(s[i], s[j]) < 0 })
			if name == "unique" {
				u := []any{}
				for i, v := range s {
					if i == 0 || compare(v, s[i-1]) != 0 {
						u = append(u, v)
					}
				}
				s = u
			}
			return out(s)
		case "first", "last":
			a, ok := in.([]any)
			if !ok {
				return errorf("Cannot index %s with number", typeName(in))
			}
			if len(a) == 0 {
				return out(nil)
			}
			if name == "first" {
				return out(a[0])
			}
			return out(a[len(a)-1])
		case "paths", "leaf_paths":
			var rec func(p []any, v any) error
			rec = func(p []any, v any) error {
				var kids []struct {
					k any
					v any
				}
				switch t := v.(type) {
				case []any:
					for i, e := range t {
						kids = append(kids, struct {
							k any
							v any
						}{float64(i), e})
					}
				case *Object:
					for _, k := range t.keys {
						kids = append(kids, struct {
							k any
							v any
						}{k, t.vals[k]})
					}
				}
				for _, kv := range kids {
					np := append(append([]any{}, p...), kv.k)
					_, isArr := kv.v.([]any)
					_, isObj := kv.v.(*Object)
					if name == "paths" || !(isArr || isObj) {
						if err := out(np); err != nil {
							return err
						}
					}
					if err := rec(np, kv.v); err != nil {
						return err
					}
				}
				return nil
			}
			return rec(nil, in)
		case "recurse":
			return recurse(in, out)
		case "env":
			return out(NewObject())
		case "explode":
			s, ok := in.(string)
			if !ok {
				return errorf("%s (%s) cannot be exploded", typeName(in), dump(in))
			}
			a := []any{}
			for _, r := range s {
				a = append(a, float64(r))
			}
			return out(a)
		case "implode":
			a, ok := in.([]any)
			if !ok {
				return errorf("Cannot iterate over %s%s", typeName(in), iterSuffix(in))
			}
			var b strings.Builder
			for _, v := range a {
				f, ok := v.(float64)
				if !ok {
					return errorf("Unicode codepoint must be numeric")
				}
				b.WriteRune(rune(f))
			}
			return out(b.String())
		case "ascii":
			f, _ := in.(float64)
			return out(string(rune(f)))
		case "infinite":
			return out(math.Inf(1))
		case "nan":
			return out(math.NaN())
		case "isnan":
			f, _ := in.(float64)
			return out(math.IsNaN(f))
		case "null":
			return out(nil)
		case "true":
			return out(true)
		case "false":
			return out(false)
		case "error":
			return &Error{in}
		case "objects", "arrays", "strings", "numbers", "booleans", "nulls", "iterables", "scalars":
			t := typeName(in)
			keep := map[string]bool{
				"objects": t == "object", "arrays": t == "array", "strings": t == "string", "numbers": t == "number",
				"booleans": t == "boolean", "nulls": t == "null", "iterables": t == "array" || t == "object",
				"scalars": t != "array" && t != "object"}[name]
			if keep {
				return out(in)
			}
			return nil
		case "input_line_number":
			return out(0.0)
		}
	case 1:
		a := args[0]
		switch name {
		case "select":
			return eval(a, in, sc, func(c any) error {
				if truthy(c) {
					return out(in)
				}
				return nil
			})
		case "map":
			return eval(arrayNode{pipe{iterate{identity{}}, a}}, in, sc, out)
		case "map_values":
			return evalAssign(assign{"|=", iterate{identity{}}, a}, in, sc, out)
		case "with_entries":
			return eval(pipe{call{name: "to_entries"}, pipe{call{name: "map", args: []node{a}}, call{name: "from_entries"}}}, in, sc, out)
		case "recurse":
			var rec func(v any) error
			rec = func(v any) error {
				if err := out(v); err != nil {
					return err
				}
				return eval(a, v, sc, rec)
			}
			return rec(in)
		case "has":
			return eval(a, in, sc, func(k any) error {
				switch t := in.(type) {
				case nil:
					return out(false)
				case *Object:
					if ks, ok := k.(string); ok {
						_, found := t.Get(ks)
						return out(found)
					}
				case []any:
					if kf, ok := k.(float64); ok {
						return out(kf >= 0 && int(kf) < len(t))
					}
				}
				return errorf("Cannot check whether %s has a %s key", typeName(in), typeName(k))
			})
		case "in":
			return eval(a, in, sc, func(o any) error {
				return callBuiltin(call{name: "has", args: []node{literal{in}}}, o, sc, out)
			})
		case "contains", "inside":
			return eval(a, in, sc, func(b any) error {
				if name == "inside" {
					return out(contains(b, in))
				}
				if typeName(in) != typeName(b) {
					return errorf("%s (%s) and %s (%s) cannot have their containment checked", typeName(in), dump(in), typeName(b), dump(b))
				}
				return out(contains(in, b))
			})
		case "startswith", "endswith", "ltrimstr", "rtrimstr", "split", "join", "test", "indices", "index", "rindex":
			return eval(a, in, sc, func(b any) error { return stringFunc(name, in, b, out) })
		case "error":
			return eval(a, in, sc, func(v any) error { return &Error{v} })
		case "path":
			return evalPaths(a, in, nil, in, sc, func(p []any, _ any) error {
				if p == nil {
					p = []any{}
				}
				return out(p)
			})
		case "paths":
			return callBuiltin(call{name: "paths"}, in, sc, func(p any) error {
				v, err := getpath(in, p.([]any))
				if err != nil {
					return err
				}
				return eval(a, v, sc, func(c any) error {
					if truthy(c) {
						return out(p)
					}
					return nil
				})
			})
		case "del":
			ps, err := collectPaths(a, in, sc)
			if err != nil {
				return err
			}
			v, err := delpaths(in, ps)
			if err != nil {
				return err
			}
			return out(v)
		case "delpaths":
			return eval(a, in, sc, func(pv any) error {
				pa, ok := pv.([]any)
				if !ok {
					return errorf("Paths must be specified as an array")
				}
				var ps [][]any
				for _, p := range pa {
					pp, ok := p.([]any)
					if !ok {
						return errorf("Path must be specified as an array")
					}
					ps = append(ps, pp)
				}
				v, err := delpaths(in, ps)
				if err != nil {
					return err
				}
				return out(v)
			})
		case "getpath":
			return eval(a, in, sc, func(pv any) error {
				p, ok := pv.([]any)
				if !ok {
					return errorf("Path must be specified as an array")
				}
				v, err := getpath(in, p)
				if err != nil {
					return nil // jq: getpath on a mismatched structure gives null... or nothing
				}
				return out(v)
			})
		case "first":
			err := eval(a, in, sc, func(v any) error {
				if err := out(v); err != nil {
					return err
				}
				return errStop
			})
			if err == errStop {
				return nil
			}
			return err
		case "last":
			var last any
			got := false
			if err := eval(a, in, sc, func(v any) error { last, got = v, true; return nil }); err != nil {
				return err
			}
			if got {
				return out(last)
			}
			return nil
		case "isempty":
			empty := true
			err := eval(a, in, sc, func(any) error { empty = false; return errStop })
			if err != nil && err != errStop {
				return err
			}
			return out(empty)
		case "any", "all":
			return eval(call{name: name, args: []node{iterate{identity{}}, a}}, in, sc, out)
		case "flatten":
			return eval(a, in, sc, func(d any) error {
				f, ok := d.(float64)
				if !ok || f < 0 {
					return errorf("flatten depth must not be negative")
				}
				return flatten(in, int(f), out)
			})
		case "range":
			return eval(a, in, sc, func(to any) error { return rangeGen(0, to, 1, out) })
		case "sort_by", "group_by", "unique_by", "min_by", "max_by":
			return byFunc(name, a, in, sc, out)
		case "nth":
			return eval(a, in, sc, func(nv any) error {
				v, err := index(in, nv)
				if err != nil {
					return err
				}
				return out(v)
			})
		case "walk":
			var w func(v any) error
			w = func(v any) error {
				var nv any = v
				switch t := v.(type) {
				case []any:
					arr := make([]any, 0, len(t))
					for _, e := range t {
						var got any
						err := walkOne(e, a, sc, &got)
						if err != nil {
							return err
						}
						arr = append(arr, got)
					}
					nv = arr
				case *Object:
					o := NewObject()
					for _, k := range t.keys {
						var got any
						if err := walkOne(t.vals[k], a, sc, &got); err != nil {
							return err
						}
						o.Set(k, got)
					}
					nv = o
				}
				return eval(a, nv, sc, out)
			}
			return w(in)
		case "splits":
			return eval(a, in, sc, func(sep any) error {
				return stringFunc("split", in, sep, func(v any) error { return each(v, out) })
			})
		}
	case 2:
		switch name {
		case "limit":
			return eval(args[0], in, sc, func(nv any) error {
				n, _ := nv.(float64)
				if n <= 0 {
					return nil
				}
				count := 0
				err := eval(args[1], in, sc, func(v any) error {
					count++
					if err := out(v); err != nil {
						return err
					}
					if float64(count) >= n {
						return errStop
					}
					return nil
				})
				if err == errStop {
					return nil
				}
				return err
			})
		case "range":
			return eval(args[0], in, sc, func(from any) error {
				return eval(args[1], in, sc, func(to any) error { return rangeGen(from, to, 1, out) })
			})
		case "nth":
			return eval(args[0], in, sc, func(nv any) error {
				n, _ := nv.(float64)
				if n < 0 {
					return errorf("Out of bounds negative array index")
				}
				i := 0
				err := eval(args[1], in, sc, func(v any) error {
					if float64(i) == n {
						if err := out(v); err != nil {
							return err
						}
						return errStop
					}
					i++
					return nil
				})
				if err == errStop {
					return nil
				}
				return err
			})
		case "setpath":
			return eval(args[1], in, sc, func(v any) error {
				return eval(args[0], in, sc, func(pv any) error {
					p, ok := pv.([]any)
					if !ok {
						return errorf("Path must be specified as an array")
					}
					r, err := setpath(in, p, v)
					if err != nil {
						return err
					}
					return out(r)
				})
			})
		case "test":
			return eval(args[1], in, sc, func(flags any) error {
				return eval(args[0], in, sc, func(re any) error { return regexTest(in, re, flags, out) })
			})
		case "any", "all":
			res := name == "all"
			err := eval(args[0], in, sc, func(v any) error {
				return eval(args[1], v, sc, func(c any) error {
					if truthy(c) != (name == "all") {
						res = !res
						return errStop
					}
					return nil
				})
			})
			if err != nil && err != errStop {
				return err
			}
			return out(res)
		case "sub", "gsub":
			return eval(args[1], in, sc, func(rep any) error {
				return eval(args[0], in, sc, func(re any) error { return regexSub(name == "gsub", in, re, rep, out) })
			})
		}
	case 3:
		switch name {
		case "range":
			return eval(args[0], in, sc, func(from any) error {
				return eval(args[1], in, sc, func(to any) error {
					return eval(args[2], in, sc, func(by any) error { return rangeGen(from, to, by, out) })
				})
			})
		}
	}
	if n == 0 && name == "builtins" {
		return out(strs(builtinList))
	}
	return argErr(name, n)
}

// builtinList names the filters this jq implements (what `builtins` says).
var builtinList = []string{"length/0", "utf8bytelength/0", "not/0", "keys/0", "keys_unsorted/0", "values/0", "has/1", "in/1",
	"map/1", "map_values/1", "path/1", "del/1", "to_entries/0", "from_entries/0", "with_entries/1", "select/1",
	"recurse/0", "recurse/1", "empty/0", "error/0", "error/1", "type/0", "tostring/0", "tonumber/0", "tojson/0",
	"fromjson/0", "ascii_downcase/0", "ascii_upcase/0", "add/0", "any/0", "any/1", "any/2", "all/0", "all/1", "all/2",
	"flatten/0", "flatten/1", "range/1", "range/2", "range/3", "floor/0", "ceil/0", "round/0", "sqrt/0", "min/0",
	"max/0", "min_by/1", "max_by/1", "sort/0", "sort_by/1", "group_by/1", "unique/0", "unique_by/1", "reverse/0",
	"contains/1", "inside/1", "startswith/1", "endswith/1", "ltrimstr/1", "rtrimstr/1", "split/1", "splits/1",
	"join/1", "test/1", "test/2", "sub/2", "gsub/2", "first/0", "last/0", "first/1", "last/1", "nth/1", "nth/2",
	"limit/2", "isempty/1", "paths/0", "paths/1", "leaf_paths/0", "getpath/1", "setpath/2", "delpaths/1",
	"walk/1", "explode/0", "implode/0", "indices/1", "index/1", "rindex/1", "objects/0", "arrays/0",
	"strings/0", "numbers/0", "booleans/0", "nulls/0", "iterables/0", "scalars/0", "env/0", "builtins/0"}

func walkOne(v any, f node, sc *scope, got *any) error {
	var last any
	err := callBuiltin(call{name: "walk", args: []node{f}}, v, sc, func(r any) error { last = r; return nil })
	*got = last
	return err
}

func asciiMap(s string, lo, hi byte, delta int) string {
	b := []byte(s)
	for i, c := range b {
		if lo <= c && c <= hi {
			b[i] = byte(int(c) + delta)
		}
	}
	return string(b)
}

func toString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return Marshal(v, Format{Compact: true})
}

func flatten(v any, depth int, out emit) error {
	a, ok := v.([]any)
	if !ok {
		return errorf("Cannot iterate over %s%s", typeName(v), iterSuffix(v))
	}
	var rec func(a []any, d int) []any
	rec = func(a []any, d int) []any {
		r := []any{}
		for _, e := range a {
			if ea, ok := e.([]any); ok && d > 0 {
				r = append(r, rec(ea, d-1)...)
			} else {
				r = append(r, e)
			}
		}
		return r
	}
	return out(rec(a, depth))
}

func rangeGen(from, to, by any, out emit) error {
	f, ok1 := from.(float64)
	t, ok2 := to.(float64)
	b, ok3 := by.(float64)
	if !ok1 || !ok2 || !ok3 {
		return errorf("Range bounds must be numeric")
	}
	if b > 0 {
		for x := f; x < t; x += b {
			if err := out(x); err != nil {
				return err
			}
		}
	} else if b < 0 {
		for x := f; x > t; x += b {
			if err := out(x); err != nil {
				return err
			}
		}
	}
	return nil
}

func contains(a, b any) bool {
	switch x := a.(type) {
	case *Object:
		y, ok := b.(*Object)
		if !ok {
			return false
		}
		for _, k := range y.keys {
			av, found := x.Get(k)
			if !found || !contains(av, y.vals[k]) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok {
			return false
		}
		for _, be := range y {
			found := false
			for _, ae := range x {
				if contains(ae, be) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	case string:
		y, ok := b.(string)
		return ok && strings.Contains(x, y)
	}
	return compare(a, b) == 0
}

func stringFunc(name string, in, b any, out emit) error {
	s, sok := in.(string)
	t, tok := b.(string)
	switch name {
	case "startswith", "endswith":
		if !sok || !tok {
			return errorf("%s() requires string inputs", name)
		}
		if name == "startswith" {
			return out(strings.HasPrefix(s, t))
		}
		return out(strings.HasSuffix(s, t))
	case "ltrimstr", "rtrimstr":
		if !sok || !tok {
			return out(in)
		}
		if name == "ltrimstr" {
			return out(strings.TrimPrefix(s, t))
		}
		return out(strings.TrimSuffix(s, t))
	case "split":
		if !sok || !tok {
			return errorf("split input and separator must be strings")
		}
		return out(splitString(s, t))
	case "join":
		a, ok := in.([]any)
		if !ok {
			return errorf("Cannot iterate over %s%s", typeName(in), iterSuffix(in))
		}
		if !tok {
			return errorf("%s (%s) and %s (%s) cannot be added", typeName(b), dump(b), "string", `""`)
		}
		var parts []string
		for _, e := range a {
			switch v := e.(type) {
			case nil:
				parts = append(parts, "")
			case string:
				parts = append(parts, v)
			case float64, bool:
				parts = append(parts, toString(v))
			default:
				return errorf("Cannot join with %s", typeName(e))
			}
		}
		return out(strings.Join(parts, t))
	case "test":
		return regexTest(in, b, nil, out)
	case "indices", "index", "rindex":
		var idx []any
		switch {
		case sok && tok:
			if t == "" {
				return out(nil)
			}
			for i := 0; ; {
				j := strings.Index(s[i:], t)
				if j < 0 {
					break
				}
				idx = append(idx, float64(i+j))
				i += j + 1
			}
		default:
			a, ok := in.([]any)
			if !ok {
				return errorf("Cannot index %s with %s", typeName(in), typeName(b))
			}
			sub, ok := b.([]any)
			if !ok {
				sub = []any{b}
			}
			r, _ := indices(a, sub).([]any)
			idx = r
		}
		switch name {
		case "indices":
			if idx == nil {
				idx = []any{}
			}
			return out(idx)
		case "index":
			if len(idx) == 0 {
				return out(nil)
			}
			return out(idx[0])
		default:
			if len(idx) == 0 {
				return out(nil)
			}
			return out(idx[len(idx)-1])
		}
	}
	return nil
}

func compileRegex(re, flags any) (*regexp.Regexp, bool, error) {
	rs, ok := re.(string)
	if !ok {
		return nil, false, errorf("%s (%s) cannot be matched, as it is not a string", typeName(re), dump(re))
	}
	global := false
	prefix := ""
	if fs, ok := flags.(string); ok {
		for _, f := range fs {
			switch f {
			case 'g':
				global = true
			case 'i':
				prefix += "i"
			case 'x':
			case 's':
				prefix += "s"
			case 'n':
			case 'l', 'p':
			default:
				return nil, false, errorf("%s is not a valid modifier string", fs)
			}
		}
	}
	if prefix != "" {
		rs = "(?" + prefix + ")" + rs
	}
	r, err := regexp.Compile(rs)
	if err != nil {
		return nil, false, errorf("%s (at offset 0) is not a valid regex: %v", rs, err)
	}
	return r, global, nil
}

func regexTest(in, re, flags any, out emit) error {
	s, ok := in.(string)
	if !ok {
		return errorf("%s (%s) cannot be matched, as it is not a string", typeName(in), dump(in))
	}
	r, _, err := compileRegex(re, flags)
	if err != nil {
		return err
	}
	return out(r.MatchString(s))
}

func regexSub(global bool, in, re, rep any, out emit) error {
	s, ok := in.(string)
	if !ok {
		return errorf("%s (%s) cannot be matched, as it is not a string", typeName(in), dump(in))
	}
	r, _, err := compileRegex(re, nil)
	if err != nil {
		return err
	}
	rs, ok := rep.(string)
	if !ok {
		return errorf("%s (%s) cannot be added to a string", typeName(rep), dump(rep))
	}
	n := 0
	res := r.ReplaceAllStringFunc(s, func(m string) string {
		n++
		if !global && n > 1 {
			return m
		}
		return rs
	})
	return out(res)
}

func byFunc(name string, f node, in any, sc *scope, out emit) error {
	a, ok := in.([]any)
	if !ok {
		return errorf("Cannot iterate over %s (%s)", typeName(in), dump(in))
	}
	type kv struct {
		key any
		v   any
	}
	items := make([]kv, len(a))
	for i, v := range a {
		var keys []any
		if err := eval(f, v, sc, func(k any) error { keys = append(keys, k); return nil }); err != nil {
			return err
		}
		items[i] = kv{keys, v}
	}
	switch name {
	case "min_by", "max_by":
		if len(items) == 0 {
			return out(nil)
		}
		best := items[0]
		for _, it := range items[1:] {
			c := compare(it.key, best.key)
			if (name == "min_by" && c < 0) || (name == "max_by" && c >= 0) {
				best = it
			}
		}
		return out(best.v)
	}
	sort.SliceStable(items, func(i, j int) bool { return compare(items[i].key, items[j].key) < 0 })
	switch name {
	case "sort_by":
		r := make([]any, len(items))
		for i, it := range items {
			r[i] = it.v
		}
		return out(r)
	case "unique_by":
		r := []any{}
		for i, it := range items {
			if i == 0 || compare(it.key, items[i-1].key) != 0 {
				r = append(r, it.v)
			}
		}
		return out(r)
	}
	groups := []any{}
	for i, it := range items {
		if i == 0 || compare(it.key, items[i-1].key) != 0 {
			groups = append(groups, []any{})
		}
		g := groups[len(groups)-1].([]any)
		groups[len(groups)-1] = append(g, it.v)
	}
	return out(groups)
}

// applyFormat is @name applied to a value.
func applyFormat(name string, v any) (string, error) {
	switch name {
	case "text":
		return toString(v), nil
	case "json":
		return Marshal(v, Format{Compact: true}), nil
	case "html":
		return strings.NewReplacer("<", "&lt;", ">", "&gt;", "&", "&amp;", "'", "&#39;", `"`, "&quot;").Replace(toString(v)), nil
	case "uri":
		s := toString(v)
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			c := s[i]
			if ('A' <= c && c <= 'Z') || ('a' <= c && c <= 'z') || ('0' <= c && c <= '9') || strings.IndexByte("-_.~", c) >= 0 {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, "%%%02X", c)
			}
		}
		return b.String(), nil
	case "csv", "tsv":
		a, ok := v.([]any)
		if !ok {
			return "", errorf("%s (%s) cannot be %s-formatted, only an array can be", typeName(v), dump(v), name)
		}
		parts := make([]string, len(a))
		for i, e := range a {
			switch x := e.(type) {
			case float64:
				parts[i] = FormatNumber(x)
			case bool:
				parts[i] = strconv.FormatBool(x)
			case nil:
				parts[i] = ""
			case string:
				if name == "csv" {
					parts[i] = `"` + strings.ReplaceAll(x, `"`, `""`) + `"`
				} else {
					parts[i] = strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`).Replace(x)
				}
			default:
				return "", errorf("%s (%s) is not valid in a csv row", typeName(e), dump(e))
			}
		}
		sep := ","
		if name == "tsv" {
			sep = "\t"
		}
		return strings.Join(parts, sep), nil
	case "sh":
		quote := func(e any) (string, error) {
			switch x := e.(type) {
			case string:
				return "'" + strings.ReplaceAll(x, "'", `'\''`) + "'", nil
			case []any, *Object:
				return "", errorf("%s (%s) can not be escaped for shell", typeName(e), dump(e))
			}
			return toString(e), nil
		}
		if a, ok := v.([]any); ok {
			parts := make([]string, len(a))
			for i, e := range a {
				q, err := quote(e)
				if err != nil {
					return "", err
				}
				parts[i] = q
			}
			return strings.Join(parts, " "), nil
		}
		return quote(v)
	case "base64":
		return base64Encode(toString(v)), nil
	case "base64d":
		return base64Decode(v)
	case "base32":
		return base32.StdEncoding.EncodeToString([]byte(toString(v))), nil
	case "base32d":
		b, err := base32.StdEncoding.DecodeString(toString(v))
		if err != nil {
			return "", errorf("%s (%s) is not valid base32 data", typeName(v), dump(v))
		}
		return strings.ToValidUTF8(string(b), "\uFFFD"), nil
	}
	return "", &compileError{fmt.Sprintf("%s is not a valid format", name)}
}

const b64chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

func base64Encode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i += 3 {
		var n uint32
		rem := len(s) - i
		for j := 0; j < 3; j++ {
			n <<= 8
			if j < rem {
				n |= uint32(s[i+j])
			}
		}
		for j := 0; j < 4; j++ {
			if j <= rem {
				b.WriteByte(b64chars[(n>>(18-6*j))&63])
			} else {
				b.WriteByte('=')
			}
		}
	}
	return b.String()
}

// base64Decode is jq 1.6's @base64d: it reads up to the first '=', decodes
// whole groups of four and a final group of two or three characters, and
// refuses a single trailing character or a character outside the alphabet.
func base64Decode(v any) (string, error) {
	s := toString(v)
	v = s // errors show the string jq decoded
	var out []byte
	var code uint32
	n := 0
	for i := 0; i < len(s) && s[i] != '='; i++ {
		d := strings.IndexByte(b64chars, s[i])
		if d < 0 {
			return "", errorf("%s (%s) is not valid base64 data", typeName(v), dump(v))
		}
		code |= uint32(d)
		n++
		if n == 4 {
			out = append(out, byte(code>>16), byte(code>>8), byte(code))
			n, code = 0, 0
		} else {
			code <<= 6
		}
	}
	switch n {
	case 3: // code holds 18 bits, shifted once more: 24
		out = append(out, byte(code>>16), byte(code>>8))
	case 2: // 12 bits shifted to 18
		out = append(out, byte(code>>10))
	case 1:
		return "", errorf("%s (%s) trailing base64 byte found", typeName(v), dump(v))
	}
	return strings.ToValidUTF8(string(out), "\uFFFD"), nil
}
