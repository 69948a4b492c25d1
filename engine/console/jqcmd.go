package console

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rvplay/rvplay/engine/console/jq"
)

// jq is the jq command line as jq 1.6 has it: a filter, then the inputs
// read as a stream of JSON values (so `etcdctl watch -w json | jq` prints
// as events arrive), each result printed pretty (-c compact, -r raw
// strings, -j without newlines, -S sorted keys).
func (c *Console) jq(p *proc) int {
	fs := newFlagSet("jq",
		&flagDef{name: "raw-output", short: "r", kind: boolFlag},
		&flagDef{name: "join-output", short: "j", kind: boolFlag},
		&flagDef{name: "compact-output", short: "c", kind: boolFlag},
		&flagDef{name: "sort-keys", short: "S", kind: boolFlag},
		&flagDef{name: "ascii-output", short: "a", kind: boolFlag},
		&flagDef{name: "null-input", short: "n", kind: boolFlag},
		&flagDef{name: "slurp", short: "s", kind: boolFlag},
		&flagDef{name: "exit-status", short: "e", kind: boolFlag},
		&flagDef{name: "monochrome-output", short: "M", kind: boolFlag},
		&flagDef{name: "color-output", short: "C", kind: boolFlag},
		&flagDef{name: "tab", kind: boolFlag},
		&flagDef{name: "indent", kind: intFlag, def: "2"},
		&flagDef{name: "arg", kind: stringArrayFlag},
		&flagDef{name: "argjson", kind: stringArrayFlag},
	)
	// --arg NAME VALUE takes two words: pflag cannot say that, so they are
	// taken out first.
	var vars []string
	values := map[string]any{}
	var rest []string
	for i := 0; i < len(p.args); i++ {
		a := p.args[i]
		if (a == "--arg" || a == "--argjson") && i+2 < len(p.args) {
			name, raw := p.args[i+1], p.args[i+2]
			if a == "--arg" {
				values[name] = raw
			} else {
				v, err := jq.Parse([]byte(raw))
				if err != nil {
					fmt.Fprintf(p.stderr, "jq: Invalid JSON text passed to --argjson\nUse jq --help for help with command-line options,\nor see the jq manpage, or online docs  at https://stedolan.github.io/jq\n")
					return 2
				}
				values[name] = v
			}
			vars = append(vars, name)
			i += 2
			continue
		}
		rest = append(rest, a)
	}
	pos, err := fs.parse(rest)
	if err != nil {
		fmt.Fprintf(p.stderr, "jq: Unknown option: %s\nUse jq --help for help with command-line options,\nor see the jq manpage, or online docs  at https://stedolan.github.io/jq\n", strings.TrimPrefix(strings.TrimPrefix(err.Error(), "unknown flag: "), "unknown shorthand flag: "))
		return 2
	}
	filter := "."
	if len(pos) > 0 {
		filter, pos = pos[0], pos[1:]
	}
	prog, err := jq.Compile(filter, vars...)
	if err != nil {
		fmt.Fprintf(p.stderr, "jq: error: %v\njq: 1 compile error\n", err)
		return 3
	}
	format := jq.Format{Indent: int(fs.int("indent")), Compact: fs.bool("compact-output"), SortKeys: fs.bool("sort-keys"),
		ASCII: fs.bool("ascii-output"), Tab: fs.bool("tab")}
	if format.Indent == 0 {
		format.Compact = true
	}
	raw := fs.bool("raw-output") || fs.bool("join-output")
	sep := "\n"
	if fs.bool("join-output") {
		sep = ""
	}
	var in io.Reader = strings.NewReader("")
	name := "<stdin>"
	if len(pos) > 0 {
		data, err := c.readFile(pos[0])
		if err != nil {
			fmt.Fprintf(p.stderr, "jq: error: Could not open %s: No such file or directory\n", pos[0])
			return 2
		}
		in, name = strings.NewReader(string(data)), pos[0]
	} else if p.stdin != nil {
		in = p.stdin
	}
	status := 0
	var last any
	outputs := 0
	// jq's exit status is that of the last input.
	run := func(v any, line int) {
		status = 0
		err := prog.Run(v, values, func(r any) error {
			outputs++
			last = r
			if s, ok := r.(string); ok && raw {
				fmt.Fprint(p.stdout, s+sep)
				return nil
			}
			fmt.Fprint(p.stdout, jq.Marshal(r, format)+sep)
			return nil
		})
		if err != nil {
			var je *jq.Error
			if errors.As(err, &je) {
				fmt.Fprintf(p.stderr, "jq: error (at %s:%d): %s\n", name, line, je.Error())
			} else {
				fmt.Fprintf(p.stderr, "jq: error: %v\n", err)
			}
			status = 5
		}
	}
	if fs.bool("null-input") {
		run(nil, 0)
	} else {
		dec := newValueReader(in)
		var slurped []any
		for {
			v, line, err := dec.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				fmt.Fprintf(p.stderr, "parse error: %v\n", err)
				return 2
			}
			if fs.bool("slurp") {
				slurped = append(slurped, v)
				continue
			}
			run(v, line)
		}
		if fs.bool("slurp") {
			if slurped == nil {
				slurped = []any{}
			}
			run(slurped, dec.line)
		}
	}
	if status == 0 && fs.bool("exit-status") {
		switch {
		case outputs == 0:
			return 4
		case last == nil || last == false:
			return 1
		}
	}
	return status
}

// valueReader reads a stream of JSON values as they arrive, counting lines
// as jq does for its error messages.
type valueReader struct {
	r    *bufio.Reader
	line int
}

func newValueReader(r io.Reader) *valueReader { return &valueReader{r: bufio.NewReader(r)} }

// next returns the next value and the line count jq would report for it:
// the newlines read up to the end of the value and the line it ends.
func (d *valueReader) next() (any, int, error) {
	var buf []byte
	depth := 0
	inStr, esc, started := false, false, false
	scalar := false
	for {
		c, err := d.r.ReadByte()
		if err == io.EOF {
			if started {
				if depth == 0 && scalar {
					v, perr := jq.Parse(buf)
					if perr != nil {
						return nil, 0, parseError(strings.Replace(perr.Error(), "at line", "at EOF at line", 1))
					}
					return v, d.line, nil
				}
				return nil, 0, parseError(fmt.Sprintf("Unfinished JSON term at EOF at line %d, column %d", d.line+1, len(buf)))
			}
			return nil, 0, io.EOF
		}
		if err != nil {
			return nil, 0, err
		}
		if c == '\n' {
			d.line++
		}
		if !started {
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				continue
			}
			started = true
			scalar = c != '{' && c != '[' && c != '"'
		}
		if scalar && (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '{' || c == '[' || c == '"') {
			if c == '{' || c == '[' || c == '"' {
				_ = d.r.UnreadByte()
			}
			v, perr := jq.Parse(buf)
			if perr != nil {
				return nil, 0, perr
			}
			return v, d.line, nil
		}
		buf = append(buf, c)
		if scalar {
			continue
		}
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		}
		if depth == 0 && !inStr {
			v, perr := jq.Parse(buf)
			if perr != nil {
				return nil, 0, perr
			}
			// jq counts the rest of the line the value ends on.
			for {
				b, err := d.r.Peek(1)
				if err != nil || (b[0] != ' ' && b[0] != '\t' && b[0] != '\r' && b[0] != '\n') {
					break
				}
				_, _ = d.r.ReadByte()
				if b[0] == '\n' {
					d.line++
					break
				}
			}
			return v, d.line, nil
		}
	}
}

// parseError is jq's message for input that is not JSON.
type parseError string

func (e parseError) Error() string { return string(e) }
