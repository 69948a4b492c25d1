package jq

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Error is a runtime error of a filter: its value is the message (or the
// value given to error/1).
type Error struct{ Value any }

func (e *Error) Error() string {
	if s, ok := e.Value.(string); ok {
		return s
	}
	return Marshal(e.Value, Format{Compact: true}) + " (not a string)"
}

func errorf(format string, a ...any) error { return &Error{fmt.Sprintf(format, a...)} }

// errStop ends a generator early (first/1, limit/2, isempty).
var errStop = errors.New("stop")

type emit func(any) error

// scope holds the variables bound with `as` and --arg.
type scope struct {
	name   string
	value  any
	parent *scope
}

func (s *scope) lookup(name string) (any, bool) {
	for ; s != nil; s = s.parent {
		if s.name == name {
			return s.value, true
		}
	}
	return nil, false
}

func (s *scope) with(name string, v any) *scope { return &scope{name, v, s} }

// dump is jq's truncated dump of a value in error messages.
func dump(v any) string {
	s := Marshal(v, Format{Compact: true})
	if len(s) > 11 {
		return s[:11] + "..."
	}
	return s
}

func eval(n node, in any, sc *scope, out emit) error {
	switch x := n.(type) {
	case identity:
		return out(in)
	case recurseAll:
		return recurse(in, out)
	case literal:
		return out(x.v)
	case *strNode:
		return evalString(x, in, sc, out)
	case formatNode:
		s, err := applyFormat(x.name, in)
		if err != nil {
			return err
		}
		return out(s)
	case varRef:
		if x.name == "ENV" || x.name == "__prog_args" {
			return out(NewObject())
		}
		v, ok := sc.lookup(x.name)
		if !ok {
			return &compileError{fmt.Sprintf("$%s is not defined", x.name)}
		}
		return out(v)
	case indexNode:
		return eval(x.target, in, sc, func(t any) error {
			return eval(x.key, in, sc, func(k any) error {
				v, err := index(t, k)
				if err != nil {
					return err
				}
				return out(v)
			})
		})
	case sliceNode:
		return eval(x.target, in, sc, func(t any) error {
			return evalOpt(x.to, in, sc, func(to any) error {
				return evalOpt(x.from, in, sc, func(from any) error {
					v, err := slice(t, from, to)
					if err != nil {
						return err
					}
					return out(v)
				})
			})
		})
	case iterate:
		return eval(x.target, in, sc, func(t any) error { return each(t, out) })
	case optional:
		err := eval(x.body, in, sc, out)
		var je *Error
		if errors.As(err, &je) {
			return nil
		}
		return err
	case pipe:
		return eval(x.l, in, sc, func(v any) error { return eval(x.r, v, sc, out) })
	case comma:
		if err := eval(x.l, in, sc, out); err != nil {
			return err
		}
		return eval(x.r, in, sc, out)
	case neg:
		return eval(x.x, in, sc, func(v any) error {
			f, ok := v.(float64)
			if !ok {
				return errorf("%s (%s) cannot be negated", typeName(v), dump(v))
			}
			return out(-f)
		})
	case binop:
		return evalBinop(x, in, sc, out)
	case assign:
		return evalAssign(x, in, sc, out)
	case arrayNode:
		arr := []any{}
		if x.body != nil {
			if err := eval(x.body, in, sc, func(v any) error { arr = append(arr, v); return nil }); err != nil {
				return err
			}
		}
		return out(arr)
	case objectNode:
		return buildObject(x.entries, in, sc, NewObject(), out)
	case ifNode:
		return eval(x.cond, in, sc, func(c any) error {
			if truthy(c) {
				return eval(x.then, in, sc, out)
			}
			if x.els == nil {
				return out(in)
			}
			return eval(x.els, in, sc, out)
		})
	case tryNode:
		err := eval(x.body, in, sc, out)
		var je *Error
		if errors.As(err, &je) {
			if x.catch == nil {
				return nil
			}
			return eval(x.catch, je.Value, sc, out)
		}
		return err
	case bind:
		return eval(x.source, in, sc, func(v any) error { return eval(x.body, in, sc.with(x.name, v), out) })
	case reduceNode:
		return eval(x.init, in, sc, func(acc any) error {
			err := eval(x.source, in, sc, func(v any) error {
				var last any
				got := false
				err := eval(x.update, acc, sc.with(x.name, v), func(u any) error { last, got = u, true; return nil })
				if got {
					acc = last
				} else {
					acc = nil
				}
				return err
			})
			if err != nil {
				return err
			}
			return out(acc)
		})
	case call:
		return callBuiltin(x, in, sc, out)
	}
	return errorf("unsupported filter")
}

// evalOpt evaluates an optional part (a slice bound); nil yields null once.
func evalOpt(n node, in any, sc *scope, out emit) error {
	if n == nil {
		return out(nil)
	}
	return eval(n, in, sc, out)
}

func evalString(x *strNode, in any, sc *scope, out emit) error {
	var rec func(i int, acc string) error
	rec = func(i int, acc string) error {
		if i == len(x.parts) {
			return out(acc)
		}
		if l, ok := x.parts[i].(literal); ok {
			return rec(i+1, acc+l.v.(string))
		}
		return eval(x.parts[i], in, sc, func(v any) error {
			var s string
			if x.format != "" {
				f, err := applyFormat(x.format, v)
				if err != nil {
					return err
				}
				s = f
			} else {
				s = toString(v)
			}
			return rec(i+1, acc+s)
		})
	}
	return rec(0, "")
}

func buildObject(entries []objEntry, in any, sc *scope, acc *Object, out emit) error {
	if len(entries) == 0 {
		return out(acc)
	}
	e := entries[0]
	return eval(e.key, in, sc, func(k any) error {
		ks, ok := k.(string)
		if !ok {
			return errorf("Object keys must be strings")
		}
		value := e.value
		if value == nil {
			value = indexNode{identity{}, literal{ks}}
		}
		return eval(value, in, sc, func(v any) error {
			o := acc.clone()
			o.Set(ks, v)
			return buildObject(entries[1:], in, sc, o, out)
		})
	})
}

func recurse(v any, out emit) error {
	if err := out(v); err != nil {
		return err
	}
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if err := recurse(e, out); err != nil {
				return err
			}
		}
	case *Object:
		for _, k := range x.keys {
			if err := recurse(x.vals[k], out); err != nil {
				return err
			}
		}
	}
	return nil
}

func each(v any, out emit) error {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if err := out(e); err != nil {
				return err
			}
		}
		return nil
	case *Object:
		for _, k := range x.keys {
			if err := out(x.vals[k]); err != nil {
				return err
			}
		}
		return nil
	}
	return errorf("Cannot iterate over %s%s", typeName(v), iterSuffix(v))
}

func iterSuffix(v any) string { return " (" + dump(v) + ")" }

func index(t, k any) (any, error) {
	switch tt := t.(type) {
	case nil:
		switch k.(type) {
		case string, float64, nil:
			return nil, nil
		case *Object:
			return nil, nil
		}
	case *Object:
		if ks, ok := k.(string); ok {
			v, _ := tt.Get(ks)
			return v, nil
		}
	case []any:
		switch kk := k.(type) {
		case float64:
			i := int(math.Floor(kk))
			if i < 0 {
				i += len(tt)
			}
			if i < 0 || i >= len(tt) {
				return nil, nil
			}
			return tt[i], nil
		case []any:
			return indices(tt, kk), nil
		case *Object:
			start, _ := kk.Get("start")
			end, _ := kk.Get("end")
			return slice(tt, start, end)
		}
	case string:
		if _, ok := k.(*Object); ok {
			return nil, errorf("Cannot index string with object")
		}
	}
	if ks, ok := k.(string); ok {
		return nil, errorf("Cannot index %s with string %q", typeName(t), ks)
	}
	return nil, errorf("Cannot index %s with %s", typeName(t), typeName(k))
}

func indices(a, sub []any) any {
	out := []any{}
	if len(sub) == 0 {
		return nil
	}
	for i := 0; i+len(sub) <= len(a); i++ {
		match := true
		for j := range sub {
			if compare(a[i+j], sub[j]) != 0 {
				match = false
				break
			}
		}
		if match {
			out = append(out, float64(i))
		}
	}
	return out
}

func clampSlice(n int, from, to any) (int, int, error) {
	bound := func(v any, def int) (int, error) {
		if v == nil {
			return def, nil
		}
		f, ok := v.(float64)
		if !ok {
			return 0, errorf("Start and end indices of an array slice must be numbers")
		}
		i := int(math.Floor(f))
		if i < 0 {
			i += n
		}
		if i < 0 {
			i = 0
		}
		if i > n {
			i = n
		}
		return i, nil
	}
	a, err := bound(from, 0)
	if err != nil {
		return 0, 0, err
	}
	b, err := bound(to, n)
	if err != nil {
		return 0, 0, err
	}
	if b < a {
		b = a
	}
	return a, b, nil
}

func slice(t, from, to any) (any, error) {
	switch tt := t.(type) {
	case nil:
		return nil, nil
	case []any:
		a, b, err := clampSlice(len(tt), from, to)
		if err != nil {
			return nil, err
		}
		return append([]any{}, tt[a:b]...), nil
	case string:
		r := []rune(tt)
		a, b, err := clampSlice(len(r), from, to)
		if err != nil {
			return nil, err
		}
		return string(r[a:b]), nil
	}
	return nil, errorf("Cannot index %s with object", typeName(t))
}

func evalBinop(x binop, in any, sc *scope, out emit) error {
	switch x.op {
	case "and", "or":
		return eval(x.l, in, sc, func(l any) error {
			if x.op == "and" && !truthy(l) {
				return out(false)
			}
			if x.op == "or" && truthy(l) {
				return out(true)
			}
			return eval(x.r, in, sc, func(r any) error { return out(truthy(r)) })
		})
	case "//":
		found := false
		err := eval(x.l, in, sc, func(l any) error {
			if truthy(l) {
				found = true
				return out(l)
			}
			return nil
		})
		var je *Error
		if err != nil && !errors.As(err, &je) {
			return err
		}
		if found {
			return nil
		}
		return eval(x.r, in, sc, out)
	}
	return eval(x.r, in, sc, func(r any) error {
		return eval(x.l, in, sc, func(l any) error {
			v, err := arith(x.op, l, r)
			if err != nil {
				return err
			}
			return out(v)
		})
	})
}

func arith(op string, l, r any) (any, error) {
	switch op {
	case "==":
		return compare(l, r) == 0, nil
	case "!=":
		return compare(l, r) != 0, nil
	case "<":
		return compare(l, r) < 0, nil
	case "<=":
		return compare(l, r) <= 0, nil
	case ">":
		return compare(l, r) > 0, nil
	case ">=":
		return compare(l, r) >= 0, nil
	}
	lf, lnum := l.(float64)
	rf, rnum := r.(float64)
	switch op {
	case "+":
		switch {
		case l == nil:
			return r, nil
		case r == nil:
			return l, nil
		case lnum && rnum:
			return lf + rf, nil
		}
		switch lt := l.(type) {
		case string:
			if rs, ok := r.(string); ok {
				return lt + rs, nil
			}
		case []any:
			if ra, ok := r.([]any); ok {
				return append(append([]any{}, lt...), ra...), nil
			}
		case *Object:
			if ro, ok := r.(*Object); ok {
				o := lt.clone()
				for _, k := range ro.keys {
					o.Set(k, ro.vals[k])
				}
				return o, nil
			}
		}
		return nil, errorf("%s (%s) and %s (%s) cannot be added", typeName(l), dump(l), typeName(r), dump(r))
	case "-":
		if lnum && rnum {
			return lf - rf, nil
		}
		if la, ok := l.([]any); ok {
			if ra, ok := r.([]any); ok {
				out := []any{}
				for _, e := range la {
					keep := true
					for _, f := range ra {
						if compare(e, f) == 0 {
							keep = false
							break
						}
					}
					if keep {
						out = append(out, e)
					}
				}
				return out, nil
			}
		}
		return nil, errorf("%s (%s) and %s (%s) cannot be subtracted", typeName(l), dump(l), typeName(r), dump(r))
	case "*":
		if lnum && rnum {
			return lf * rf, nil
		}
		if ls, ok := l.(string); ok && rnum {
			if rf <= 0 {
				return nil, nil
			}
			return strings.Repeat(ls, int(math.Ceil(rf))), nil
		}
		if lo, ok := l.(*Object); ok {
			if ro, ok := r.(*Object); ok {
				return deepMerge(lo, ro), nil
			}
		}
		return nil, errorf("%s (%s) and %s (%s) cannot be multiplied", typeName(l), dump(l), typeName(r), dump(r))
	case "/":
		if lnum && rnum {
			if rf == 0 {
				return nil, errorf("%s (%s) and %s (%s) cannot be divided because the divisor is zero", typeName(l), dump(l), typeName(r), dump(r))
			}
			return lf / rf, nil
		}
		if ls, ok := l.(string); ok {
			if rs, ok := r.(string); ok {
				return splitString(ls, rs), nil
			}
		}
		return nil, errorf("%s (%s) and %s (%s) cannot be divided", typeName(l), dump(l), typeName(r), dump(r))
	case "%":
		if lnum && rnum {
			if int64(rf) == 0 {
				return nil, errorf("%s (%s) and %s (%s) cannot be divided because the divisor is zero", typeName(l), dump(l), typeName(r), dump(r))
			}
			a, b := int64(lf), int64(rf)
			if b < 0 {
				b = -b
			}
			return float64(a % b), nil
		}
		return nil, errorf("%s (%s) and %s (%s) cannot be divided", typeName(l), dump(l), typeName(r), dump(r))
	}
	return nil, errorf("unknown operator %s", op)
}

func deepMerge(a, b *Object) *Object {
	o := a.clone()
	for _, k := range b.keys {
		bv := b.vals[k]
		if ao, ok := o.vals[k].(*Object); ok {
			if bo, ok := bv.(*Object); ok {
				o.Set(k, deepMerge(ao, bo))
				continue
			}
		}
		o.Set(k, bv)
	}
	return o
}

func splitString(s, sep string) []any {
	out := []any{}
	if s == "" {
		return out
	}
	for _, p := range strings.Split(s, sep) {
		out = append(out, p)
	}
	return out
}

// evalPaths produces the paths a path expression designates in root,
// each with the value found there.
func evalPaths(n node, root any, path []any, cur any, sc *scope, out func(p []any, v any) error) error {
	extend := func(p []any, k any) []any {
		np := make([]any, len(p)+1)
		copy(np, p)
		np[len(p)] = k
		return np
	}
	switch x := n.(type) {
	case identity:
		return out(path, cur)
	case recurseAll:
		var rec func(p []any, v any) error
		rec = func(p []any, v any) error {
			if err := out(p, v); err != nil {
				return err
			}
			switch t := v.(type) {
			case []any:
				for i, e := range t {
					if err := rec(extend(p, float64(i)), e); err != nil {
						return err
					}
				}
			case *Object:
				for _, k := range t.keys {
					if err := rec(extend(p, k), t.vals[k]); err != nil {
						return err
					}
				}
			}
			return nil
		}
		return rec(path, cur)
	case indexNode:
		return evalPaths(x.target, root, path, cur, sc, func(p []any, t any) error {
			return eval(x.key, cur, sc, func(k any) error {
				v, err := index(t, k)
				if err != nil {
					return err
				}
				return out(extend(p, k), v)
			})
		})
	case sliceNode:
		return evalPaths(x.target, root, path, cur, sc, func(p []any, t any) error {
			return evalOpt(x.to, cur, sc, func(to any) error {
				return evalOpt(x.from, cur, sc, func(from any) error {
					v, err := slice(t, from, to)
					if err != nil {
						return err
					}
					key := NewObject()
					key.Set("start", from)
					key.Set("end", to)
					return out(extend(p, key), v)
				})
			})
		})
	case iterate:
		return evalPaths(x.target, root, path, cur, sc, func(p []any, t any) error {
			switch tt := t.(type) {
			case []any:
				for i, e := range tt {
					if err := out(extend(p, float64(i)), e); err != nil {
						return err
					}
				}
				return nil
			case *Object:
				for _, k := range tt.keys {
					if err := out(extend(p, k), tt.vals[k]); err != nil {
						return err
					}
				}
				return nil
			}
			return errorf("Cannot iterate over %s (%s)", typeName(t), dump(t))
		})
	case optional:
		err := evalPaths(x.body, root, path, cur, sc, out)
		var je *Error
		if errors.As(err, &je) {
			return nil
		}
		return err
	case pipe:
		return evalPaths(x.l, root, path, cur, sc, func(p []any, v any) error {
			return evalPaths(x.r, root, p, v, sc, out)
		})
	case comma:
		if err := evalPaths(x.l, root, path, cur, sc, out); err != nil {
			return err
		}
		return evalPaths(x.r, root, path, cur, sc, out)
	case ifNode:
		return eval(x.cond, cur, sc, func(c any) error {
			if truthy(c) {
				return evalPaths(x.then, root, path, cur, sc, out)
			}
			if x.els == nil {
				return out(path, cur)
			}
			return evalPaths(x.els, root, path, cur, sc, out)
		})
	case binop:
		if x.op == "//" {
			found := false
			err := evalPaths(x.l, root, path, cur, sc, func(p []any, v any) error {
				if truthy(v) {
					found = true
					return out(p, v)
				}
				return nil
			})
			if err != nil || found {
				return err
			}
			return evalPaths(x.r, root, path, cur, sc, out)
		}
	case bind:
		return eval(x.source, cur, sc, func(v any) error {
			return evalPaths(x.body, root, path, cur, sc.with(x.name, v), out)
		})
	case tryNode:
		err := evalPaths(x.body, root, path, cur, sc, out)
		var je *Error
		if errors.As(err, &je) && x.catch == nil {
			return nil
		}
		return err
	case call:
		switch {
		case x.name == "empty" && len(x.args) == 0:
			return nil
		case x.name == "select" && len(x.args) == 1:
			return eval(x.args[0], cur, sc, func(c any) error {
				if truthy(c) {
					return out(path, cur)
				}
				return nil
			})
		case (x.name == "recurse" && len(x.args) == 0):
			return evalPaths(recurseAll{}, root, path, cur, sc, out)
		case x.name == "first" && len(x.args) == 1:
			err := evalPaths(x.args[0], root, path, cur, sc, func(p []any, v any) error {
				if err := out(p, v); err != nil {
					return err
				}
				return errStop
			})
			if err == errStop {
				return nil
			}
			return err
		case x.name == "getpath" && len(x.args) == 1:
			return eval(x.args[0], cur, sc, func(pv any) error {
				ps, ok := pv.([]any)
				if !ok {
					return errorf("Path must be specified as an array")
				}
				v, err := getpath(cur, ps)
				if err != nil {
					return err
				}
				return out(append(append([]any{}, path...), ps...), v)
			})
		case (x.name == "paths" || x.name == "leaf_paths") && len(x.args) == 0:
			// paths as a path expression is rare; fall through to the error.
		}
	}
	var first any
	got := false
	_ = eval(n, cur, sc, func(v any) error { first, got = v, true; return errStop })
	if got {
		return errorf("Invalid path expression with result %s", dump(first))
	}
	return errorf("Invalid path expression")
}

func getpath(v any, path []any) (any, error) {
	for _, k := range path {
		if v == nil {
			return nil, nil
		}
		var err error
		v, err = index(v, k)
		if err != nil {
			return nil, err
		}
	}
	return v, nil
}

func setpath(v any, path []any, nv any) (any, error) {
	if len(path) == 0 {
		return nv, nil
	}
	k := path[0]
	switch kk := k.(type) {
	case string:
		var o *Object
		switch t := v.(type) {
		case nil:
			o = NewObject()
		case *Object:
			o = t.clone()
		default:
			return nil, errorf("Cannot index %s with string %q", typeName(v), kk)
		}
		child, _ := o.Get(kk)
		c, err := setpath(child, path[1:], nv)
		if err != nil {
			return nil, err
		}
		o.Set(kk, c)
		return o, nil
	case float64:
		var a []any
		switch t := v.(type) {
		case nil:
		case []any:
			a = append([]any{}, t...)
		default:
			return nil, errorf("Cannot index %s with number", typeName(v))
		}
		i := int(kk)
		if i < 0 {
			i += len(a)
			if i < 0 {
				return nil, errorf("Out of bounds negative array index")
			}
		}
		for len(a) <= i {
			a = append(a, nil)
		}
		c, err := setpath(a[i], path[1:], nv)
		if err != nil {
			return nil, err
		}
		a[i] = c
		return a, nil
	case *Object:
		arr, ok := v.([]any)
		if v != nil && !ok {
			return nil, errorf("Cannot update field at object index of %s", typeName(v))
		}
		start, _ := kk.Get("start")
		end, _ := kk.Get("end")
		a, b, err := clampSlice(len(arr), start, end)
		if err != nil {
			return nil, err
		}
		cur := append([]any{}, arr[a:b]...)
		c, err := setpath(cur, path[1:], nv)
		if err != nil {
			return nil, err
		}
		ca, ok := c.([]any)
		if !ok {
			return nil, errorf("A slice of an array can only be assigned another array")
		}
		out := append(append(append([]any{}, arr[:a]...), ca...), arr[b:]...)
		return out, nil
	}
	return nil, errorf("Invalid path component")
}

func delpaths(v any, paths [][]any) (any, error) {
	sort.Slice(paths, func(i, j int) bool { return compare(paths[i], paths[j]) > 0 })
	for _, p := range paths {
		var err error
		if v, err = delpath(v, p); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func delpath(v any, path []any) (any, error) {
	if len(path) == 0 {
		return nil, nil
	}
	if v == nil {
		return nil, nil
	}
	k := path[0]
	if len(path) > 1 {
		child, err := index(v, k)
		if err != nil {
			return nil, err
		}
		nc, err := delpath(child, path[1:])
		if err != nil {
			return nil, err
		}
		return setpath(v, []any{k}, nc)
	}
	switch t := v.(type) {
	case *Object:
		ks, ok := k.(string)
		if !ok {
			return nil, errorf("Cannot delete field at %s index of object", typeName(k))
		}
		o := t.clone()
		o.Delete(ks)
		return o, nil
	case []any:
		switch kk := k.(type) {
		case float64:
			i := int(kk)
			if i < 0 {
				i += len(t)
			}
			if i < 0 || i >= len(t) {
				return t, nil
			}
			return append(append([]any{}, t[:i]...), t[i+1:]...), nil
		case *Object:
			start, _ := kk.Get("start")
			end, _ := kk.Get("end")
			a, b, err := clampSlice(len(t), start, end)
			if err != nil {
				return nil, err
			}
			return append(append([]any{}, t[:a]...), t[b:]...), nil
		}
		return nil, errorf("Cannot delete field at object index of array")
	}
	return nil, errorf("Cannot delete field at index of %s", typeName(v))
}

func collectPaths(n node, in any, sc *scope) ([][]any, error) {
	var ps [][]any
	err := evalPaths(n, in, nil, in, sc, func(p []any, _ any) error {
		ps = append(ps, p)
		return nil
	})
	return ps, err
}

func evalAssign(x assign, in any, sc *scope, out emit) error {
	switch x.op {
	case "|=":
		ps, err := collectPaths(x.l, in, sc)
		if err != nil {
			return err
		}
		v := in
		var dels [][]any
		for _, p := range ps {
			old, err := getpath(v, p)
			if err != nil {
				return err
			}
			var nv any
			got := false
			err = eval(x.r, old, sc, func(u any) error { nv, got = u, true; return errStop })
			if err != nil && err != errStop {
				return err
			}
			if !got {
				dels = append(dels, p)
				continue
			}
			if v, err = setpath(v, p, nv); err != nil {
				return err
			}
		}
		if len(dels) > 0 {
			var err error
			if v, err = delpaths(v, dels); err != nil {
				return err
			}
		}
		return out(v)
	case "=":
		return eval(x.r, in, sc, func(rv any) error {
			ps, err := collectPaths(x.l, in, sc)
			if err != nil {
				return err
			}
			v := in
			for _, p := range ps {
				if v, err = setpath(v, p, rv); err != nil {
					return err
				}
			}
			return out(v)
		})
	}
	op := strings.TrimSuffix(x.op, "=")
	return eval(x.r, in, sc, func(rv any) error {
		ps, err := collectPaths(x.l, in, sc)
		if err != nil {
			return err
		}
		v := in
		for _, p := range ps {
			old, err := getpath(v, p)
			if err != nil {
				return err
			}
			var nv any
			if op == "//" {
				nv = old
				if !truthy(old) {
					nv = rv
				}
			} else if nv, err = arith(op, old, rv); err != nil {
				return err
			}
			if v, err = setpath(v, p, nv); err != nil {
				return err
			}
		}
		return out(v)
	})
}
