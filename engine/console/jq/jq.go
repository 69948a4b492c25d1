// Package jq runs the jq filters the articles pipe etcdctl's JSON into
// (`.kvs[].key|=@base64d`, `.kvs[0].mod_revision`, `.header.revision`) and
// much of jq 1.6 besides, printing values as jq 1.6 prints them.
//
// It exists because the real library, itchyny/gojq, adds 292 KB gzip to
// the WebAssembly build, which would take the lab past its 2 MB budget
// (wasm/BENCHMARKS.md). It is checked against Debian's jq 1.6 in
// test/consolediff. Left out: function definitions, modules, reduce's
// sibling foreach, labels, destructuring, streaming, dates and SQL-style
// builtins.
package jq

import (
	"errors"
	"fmt"
)

// Program is a compiled filter.
type Program struct{ root node }

// Compile parses a filter whose free variables are vars (--arg names,
// without $). Syntax errors and unknown functions or variables are
// compile errors (IsCompileError).
func Compile(filter string, vars ...string) (*Program, error) {
	n, err := parseFilter(filter)
	if err != nil {
		return nil, err
	}
	var sc *scope
	for _, v := range append(vars, "ENV", "__loc__") {
		sc = sc.with(v, nil)
	}
	if err := check(n, sc, filter); err != nil {
		return nil, err
	}
	return &Program{root: n}, nil
}

var known = func() map[string]bool {
	m := map[string]bool{}
	for _, b := range builtinList {
		m[b] = true
	}
	for _, b := range []string{"true/0", "false/0", "null/0", "nan/0", "infinite/0", "isnan/0", "ascii/0", "fabs/0", "input_line_number/0"} {
		m[b] = true
	}
	return m
}()

// check finds what jq reports before running: undefined functions and
// variables.
func check(n node, sc *scope, src string) error {
	undefined := func(what string) error {
		return &compileError{fmt.Sprintf("%s is not defined at <top-level>, line 1:\n%s", what, src)}
	}
	var walk func(n node, sc *scope) error
	walk = func(n node, sc *scope) error {
		switch x := n.(type) {
		case call:
			if !known[fmt.Sprintf("%s/%d", x.name, len(x.args))] {
				return undefined(fmt.Sprintf("%s/%d", x.name, len(x.args)))
			}
			for _, a := range x.args {
				if err := walk(a, sc); err != nil {
					return err
				}
			}
		case varRef:
			if _, ok := sc.lookup(x.name); !ok {
				return undefined("$" + x.name)
			}
		case formatNode:
			if _, err := applyFormat(x.name, ""); err != nil && IsCompileError(err) {
				return &compileError{fmt.Sprintf("%s is not a valid format at <top-level>, line 1:\n%s", x.name, src)}
			}
		case *strNode:
			if x.format != "" {
				if err := walk(formatNode{x.format}, sc); err != nil {
					return err
				}
			}
			for _, p := range x.parts {
				if err := walk(p, sc); err != nil {
					return err
				}
			}
		case indexNode:
			return walkAll(walk, sc, x.target, x.key)
		case sliceNode:
			return walkAll(walk, sc, x.target, x.from, x.to)
		case iterate:
			return walk(x.target, sc)
		case optional:
			return walk(x.body, sc)
		case pipe:
			return walkAll(walk, sc, x.l, x.r)
		case comma:
			return walkAll(walk, sc, x.l, x.r)
		case binop:
			return walkAll(walk, sc, x.l, x.r)
		case assign:
			return walkAll(walk, sc, x.l, x.r)
		case neg:
			return walk(x.x, sc)
		case arrayNode:
			return walkAll(walk, sc, x.body)
		case objectNode:
			for _, e := range x.entries {
				if err := walkAll(walk, sc, e.key, e.value); err != nil {
					return err
				}
			}
		case ifNode:
			return walkAll(walk, sc, x.cond, x.then, x.els)
		case tryNode:
			return walkAll(walk, sc, x.body, x.catch)
		case bind:
			if err := walk(x.source, sc); err != nil {
				return err
			}
			return walk(x.body, sc.with(x.name, nil))
		case reduceNode:
			if err := walkAll(walk, sc, x.source, x.init); err != nil {
				return err
			}
			return walk(x.update, sc.with(x.name, nil))
		}
		return nil
	}
	return walk(n, sc)
}

func walkAll(walk func(node, *scope) error, sc *scope, ns ...node) error {
	for _, n := range ns {
		if n == nil {
			continue
		}
		if err := walk(n, sc); err != nil {
			return err
		}
	}
	return nil
}

// IsCompileError reports whether err is a syntax error or an undefined
// function or variable: jq reports those before reading any input.
func IsCompileError(err error) bool {
	var ce *compileError
	return errors.As(err, &ce)
}

// Run evaluates the program on one input with the given variables ($name)
// and calls out with each result. A runtime error is an *Error.
func (p *Program) Run(in any, vars map[string]any, out func(any) error) error {
	var sc *scope
	for name, v := range vars {
		sc = sc.with(name, v)
	}
	err := eval(p.root, in, sc, out)
	if err == errStop {
		return nil
	}
	return err
}
