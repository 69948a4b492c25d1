package console

import (
	"errors"
	"fmt"
	"strings"
)

// The articles write their commands for a POSIX shell: quoted jq filters,
// `| jq`, `| grep`, an alias for a long etcdctl, heredocs for manifests
// (`kubectl apply -f - <<EOF`), `> file`. This file is the small part of a
// shell the console needs to take those lines as written: words with
// quotes and escapes, pipelines, `;` and `&&`, heredocs, redirections to
// and from the console's files, NAME=value prefixes and aliases. No
// variables, globs or subshells: a line that needs them gets an error
// saying so.

// stage is one command of a pipeline.
type stage struct {
	args      []string
	quoted0   bool     // the command word was quoted (aliases do not apply)
	assigns   []string // NAME=value written before the command
	heredoc   *string  // the body of a <<WORD, the stage's stdin
	stdinFile string   // < file
	stdout    string   // > file or >> file
	appendOut bool
}

type pipeline []*stage

// script is what one console input holds: pipelines joined by ";" (or a
// newline) and "&&".
type script struct {
	pipelines []pipeline
	andThen   []bool // andThen[i]: pipelines[i+1] runs only if pipelines[i] succeeded
}

// incompleteError says the input needs more lines, and with which prompt
// a shell would ask for them.
type incompleteError struct{ prompt string }

func (e *incompleteError) Error() string { return "incomplete input" }

type token struct {
	op     string // "" for a word
	text   string
	quoted bool
}

type heredocReq struct {
	delim     string
	stripTabs bool
	target    *stage
}

type lexer struct {
	in      string
	i       int
	pending []*heredocReq
}

var errUnsupportedSyntax = errors.New("unsupported shell syntax")

func (l *lexer) next() (token, error) {
	// skip blanks (not newlines) and comments
	for l.i < len(l.in) {
		c := l.in[l.i]
		if c == ' ' || c == '\t' || c == '\r' {
			l.i++
			continue
		}
		if c == '\\' && l.i+1 < len(l.in) && l.in[l.i+1] == '\n' {
			l.i += 2
			continue
		}
		if c == '#' {
			for l.i < len(l.in) && l.in[l.i] != '\n' {
				l.i++
			}
			continue
		}
		break
	}
	if l.i >= len(l.in) {
		return token{op: "eof"}, nil
	}
	c := l.in[l.i]
	switch c {
	case '\n':
		l.i++
		if err := l.readHeredocs(); err != nil {
			return token{}, err
		}
		return token{op: "newline"}, nil
	case '|':
		if strings.HasPrefix(l.in[l.i:], "||") {
			return token{}, fmt.Errorf("%w: ||", errUnsupportedSyntax)
		}
		l.i++
		return token{op: "|"}, nil
	case '&':
		if strings.HasPrefix(l.in[l.i:], "&&") {
			l.i += 2
			return token{op: "&&"}, nil
		}
		return token{}, fmt.Errorf("%w: & (background jobs)", errUnsupportedSyntax)
	case ';':
		l.i++
		return token{op: ";"}, nil
	case '<':
		if strings.HasPrefix(l.in[l.i:], "<<-") {
			l.i += 3
			return token{op: "<<-"}, nil
		}
		if strings.HasPrefix(l.in[l.i:], "<<<") {
			return token{}, fmt.Errorf("%w: <<<", errUnsupportedSyntax)
		}
		if strings.HasPrefix(l.in[l.i:], "<<") {
			l.i += 2
			return token{op: "<<"}, nil
		}
		l.i++
		return token{op: "<"}, nil
	case '>':
		if strings.HasPrefix(l.in[l.i:], ">>") {
			l.i += 2
			return token{op: ">>"}, nil
		}
		l.i++
		return token{op: ">"}, nil
	case '(', ')', '`':
		return token{}, fmt.Errorf("%w: %c", errUnsupportedSyntax, c)
	}
	return l.word()
}

func (l *lexer) word() (token, error) {
	var b strings.Builder
	quoted := false
	for l.i < len(l.in) {
		c := l.in[l.i]
		switch {
		case c == '\'':
			quoted = true
			end := strings.IndexByte(l.in[l.i+1:], '\'')
			if end < 0 {
				return token{}, &incompleteError{"> "}
			}
			b.WriteString(l.in[l.i+1 : l.i+1+end])
			l.i += end + 2
		case c == '"':
			quoted = true
			l.i++
			closed := false
			for l.i < len(l.in) {
				d := l.in[l.i]
				if d == '"' {
					l.i++
					closed = true
					break
				}
				if d == '\\' && l.i+1 < len(l.in) {
					e := l.in[l.i+1]
					switch e {
					case '"', '\\', '$', '`':
						b.WriteByte(e)
						l.i += 2
						continue
					case '\n':
						l.i += 2
						continue
					}
				}
				if d == '$' && l.i+1 < len(l.in) && isVarStart(l.in[l.i+1]) {
					return token{}, fmt.Errorf("%w: $ (shell variables)", errUnsupportedSyntax)
				}
				b.WriteByte(d)
				l.i++
			}
			if !closed {
				return token{}, &incompleteError{"> "}
			}
		case c == '\\':
			if l.i+1 >= len(l.in) {
				return token{}, &incompleteError{"> "}
			}
			if l.in[l.i+1] == '\n' {
				l.i += 2
				continue
			}
			quoted = true
			b.WriteByte(l.in[l.i+1])
			l.i += 2
		case c == '$' && l.i+1 < len(l.in) && (isVarStart(l.in[l.i+1]) || l.in[l.i+1] == '('):
			return token{}, fmt.Errorf("%w: $ (shell variables and substitutions)", errUnsupportedSyntax)
		case strings.IndexByte(" \t\r\n|&;<>()`", c) >= 0:
			return token{text: b.String(), quoted: quoted}, nil
		default:
			b.WriteByte(c)
			l.i++
		}
	}
	return token{text: b.String(), quoted: quoted}, nil
}

func isVarStart(c byte) bool {
	return c == '_' || c == '{' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// readHeredocs consumes the bodies of the heredocs opened on the line just
// ended, in order.
func (l *lexer) readHeredocs() error {
	for len(l.pending) > 0 {
		h := l.pending[0]
		var body strings.Builder
		for {
			if l.i >= len(l.in) {
				return &incompleteError{"> "}
			}
			end := strings.IndexByte(l.in[l.i:], '\n')
			var line string
			if end < 0 {
				line = l.in[l.i:]
				l.i = len(l.in)
			} else {
				line = l.in[l.i : l.i+end]
				l.i += end + 1
			}
			if h.stripTabs {
				line = strings.TrimLeft(line, "\t")
			}
			if strings.TrimRight(line, "\r") == h.delim {
				break
			}
			if end < 0 {
				// The input ends before the delimiter line.
				return &incompleteError{"> "}
			}
			body.WriteString(line)
			body.WriteByte('\n')
		}
		s := body.String()
		h.target.heredoc = &s
		l.pending = l.pending[1:]
	}
	return nil
}

// parseScript reads a console input. An input that a shell would continue
// on the next line (an open quote, a heredoc without its end, a trailing
// pipe or &&) is an *incompleteError.
func parseScript(in string) (*script, error) {
	l := &lexer{in: in}
	sc := &script{}
	var cur pipeline
	var st *stage
	var seps []string // seps[i] ended pipelines[i]
	afterPipe := false
	for {
		t, err := l.next()
		if err != nil {
			return nil, err
		}
		switch t.op {
		case "":
			if st == nil {
				st = &stage{}
			}
			if len(st.args) == 0 && !t.quoted && isAssignment(t.text) {
				st.assigns = append(st.assigns, t.text)
				continue
			}
			if len(st.args) == 0 {
				st.quoted0 = t.quoted
			}
			st.args = append(st.args, t.text)
		case "|":
			if st == nil {
				return nil, errors.New("syntax error near unexpected token `|'")
			}
			cur = append(cur, st)
			st, afterPipe = nil, true
		case "&&", ";", "newline", "eof":
			if st != nil {
				cur = append(cur, st)
				st, afterPipe = nil, false
			}
			if afterPipe {
				if t.op == "newline" || t.op == "eof" {
					return nil, &incompleteError{"> "}
				}
				return nil, fmt.Errorf("syntax error near unexpected token `%s'", t.op)
			}
			if len(cur) > 0 {
				sc.pipelines = append(sc.pipelines, cur)
				seps = append(seps, t.op)
				cur = nil
			} else if t.op == "&&" || t.op == ";" {
				return nil, fmt.Errorf("syntax error near unexpected token `%s'", t.op)
			}
			if t.op != "eof" {
				continue
			}
			if len(l.pending) > 0 {
				return nil, &incompleteError{"> "}
			}
			// A script ending in "&&" (possibly followed by newlines)
			// waits for the command that follows.
			if n := len(seps); n > 0 && seps[n-1] == "&&" {
				return nil, &incompleteError{"> "}
			}
			for i := 0; i+1 < len(sc.pipelines); i++ {
				sc.andThen = append(sc.andThen, seps[i] == "&&")
			}
			return sc, nil
		case "<<", "<<-":
			w, err := l.next()
			if err != nil {
				return nil, err
			}
			if w.op != "" {
				return nil, fmt.Errorf("syntax error near unexpected token `%s'", opText(w.op))
			}
			if st == nil {
				st = &stage{}
			}
			l.pending = append(l.pending, &heredocReq{delim: w.text, stripTabs: t.op == "<<-", target: st})
		case "<", ">", ">>":
			w, err := l.next()
			if err != nil {
				return nil, err
			}
			if w.op != "" {
				return nil, fmt.Errorf("syntax error near unexpected token `%s'", opText(w.op))
			}
			if st == nil {
				st = &stage{}
			}
			if t.op == "<" {
				st.stdinFile = w.text
			} else {
				st.stdout, st.appendOut = w.text, t.op == ">>"
			}
		}
	}
}

func opText(op string) string {
	if op == "eof" {
		return "newline"
	}
	return op
}

func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		if !(c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || (i > 0 && '0' <= c && c <= '9')) {
			return false
		}
	}
	return true
}

// splitWords splits an alias's value into words, with the same quoting
// rules as a command line.
func splitWords(s string) ([]string, error) {
	l := &lexer{in: s}
	var out []string
	for {
		t, err := l.next()
		if err != nil {
			return nil, err
		}
		if t.op == "eof" {
			return out, nil
		}
		if t.op != "" {
			return nil, fmt.Errorf("an alias may hold only one command (found %s)", opText(t.op))
		}
		out = append(out, t.text)
	}
}
