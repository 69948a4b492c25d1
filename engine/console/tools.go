package console

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strings"
)

// The console's files live in memory, one set per console (a page): enough
// for the articles' `kubectl get deploy x -o yaml > x.yaml`, an edit, and a
// later `kubectl apply -f x.yaml` that meets a newer resourceVersion.

func cleanName(name string) string { return path.Clean(strings.TrimPrefix(name, "./")) }

var errNoFile = errors.New("no such file")

func (c *Console) readFile(name string) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	data, ok := c.files[cleanName(name)]
	if !ok {
		return nil, errNoFile
	}
	return data, nil
}

func (c *Console) writeFile(name string, data []byte, appendTo bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := cleanName(name)
	if n == "/dev/null" {
		return nil
	}
	if strings.Contains(n, "/") {
		return fmt.Errorf("%s: the console's files have plain names (no directories)", name)
	}
	if appendTo {
		c.files[n] = append(append([]byte(nil), c.files[n]...), data...)
	} else {
		c.files[n] = append([]byte(nil), data...)
	}
	return nil
}

func (c *Console) ls(p *proc) int {
	c.mu.Lock()
	names := make([]string, 0, len(c.files))
	for n := range c.files {
		names = append(names, n)
	}
	c.mu.Unlock()
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintln(p.stdout, n)
	}
	return 0
}

func (c *Console) rm(p *proc) int {
	status := 0
	force := false
	for _, a := range p.args {
		if a == "-f" {
			force = true
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range p.args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		n := cleanName(a)
		if _, ok := c.files[n]; !ok {
			if !force {
				fmt.Fprintf(p.stderr, "rm: cannot remove '%s': No such file or directory\n", a)
				status = 1
			}
			continue
		}
		delete(c.files, n)
	}
	return status
}

func (c *Console) cat(p *proc) int {
	if len(p.args) == 0 || (len(p.args) == 1 && p.args[0] == "-") {
		if p.stdin != nil {
			_, _ = io.Copy(p.stdout, p.stdin)
		}
		return 0
	}
	status := 0
	for _, a := range p.args {
		data, err := c.readFile(a)
		if err != nil {
			fmt.Fprintf(p.stderr, "cat: %s: No such file or directory\n", a)
			status = 1
			continue
		}
		_, _ = p.stdout.Write(data)
	}
	return status
}

func (c *Console) echo(p *proc) int {
	args := p.args
	newline := true
	if len(args) > 0 && args[0] == "-n" {
		newline, args = false, args[1:]
	}
	fmt.Fprint(p.stdout, strings.Join(args, " "))
	if newline {
		fmt.Fprintln(p.stdout)
	}
	return 0
}

// base64 is GNU coreutils' base64: encode (wrapped at 76 columns unless
// -w), or -d to decode.
func (c *Console) base64(p *proc) int {
	fs := newFlagSet("base64",
		&flagDef{name: "decode", short: "d", kind: boolFlag},
		&flagDef{name: "wrap", short: "w", kind: intFlag, def: "76"},
		&flagDef{name: "ignore-garbage", short: "i", kind: boolFlag})
	pos, err := fs.parse(p.args)
	if err != nil {
		fmt.Fprintf(p.stderr, "base64: %v\nTry 'base64 --help' for more information.\n", err)
		return 1
	}
	var in []byte
	switch {
	case len(pos) > 1:
		fmt.Fprintf(p.stderr, "base64: extra operand '%s'\nTry 'base64 --help' for more information.\n", pos[1])
		return 1
	case len(pos) == 1 && pos[0] != "-":
		data, err := c.readFile(pos[0])
		if err != nil {
			fmt.Fprintf(p.stderr, "base64: %s: No such file or directory\n", pos[0])
			return 1
		}
		in = data
	case p.stdin != nil:
		in, _ = io.ReadAll(p.stdin)
	}
	if fs.bool("decode") {
		clean := bytes.Map(func(r rune) rune {
			if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
				return -1
			}
			return r
		}, in)
		out := make([]byte, base64.StdEncoding.DecodedLen(len(clean)))
		n, err := base64.StdEncoding.Decode(out, clean)
		_, _ = p.stdout.Write(out[:n])
		if err != nil {
			fmt.Fprintln(p.stderr, "base64: invalid input")
			return 1
		}
		return 0
	}
	enc := base64.StdEncoding.EncodeToString(in)
	wrap := int(fs.int("wrap"))
	for wrap > 0 && len(enc) > wrap {
		fmt.Fprintln(p.stdout, enc[:wrap])
		enc = enc[wrap:]
	}
	if enc != "" || len(in) == 0 {
		if enc != "" {
			fmt.Fprintln(p.stdout, enc)
		}
	}
	return 0
}

// grep filters lines as GNU grep does, line by line as they arrive (so it
// works on a watch): basic regular expressions by default, -E extended,
// -F fixed strings.
func (c *Console) grep(p *proc) int {
	fs := newFlagSet("grep",
		&flagDef{name: "ignore-case", short: "i", kind: boolFlag},
		&flagDef{name: "invert-match", short: "v", kind: boolFlag},
		&flagDef{name: "count", short: "c", kind: boolFlag},
		&flagDef{name: "line-number", short: "n", kind: boolFlag},
		&flagDef{name: "extended-regexp", short: "E", kind: boolFlag},
		&flagDef{name: "fixed-strings", short: "F", kind: boolFlag},
		&flagDef{name: "word-regexp", short: "w", kind: boolFlag},
		&flagDef{name: "only-matching", short: "o", kind: boolFlag},
		&flagDef{name: "regexp", short: "e", kind: stringArrayFlag},
		&flagDef{name: "after-context", short: "A", kind: intFlag},
		&flagDef{name: "before-context", short: "B", kind: intFlag},
		&flagDef{name: "context", short: "C", kind: intFlag},
	)
	pos, err := fs.parse(p.args)
	if err != nil {
		fmt.Fprintf(p.stderr, "grep: %v\nUsage: grep [OPTION]... PATTERNS [FILE]...\n", err)
		return 2
	}
	patterns := fs.strs("regexp")
	if len(patterns) == 0 {
		if len(pos) == 0 {
			fmt.Fprintln(p.stderr, "Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.")
			return 2
		}
		patterns, pos = strings.Split(pos[0], "\n"), pos[1:]
	}
	var exprs []string
	for _, pat := range patterns {
		switch {
		case fs.bool("fixed-strings"):
			exprs = append(exprs, regexp.QuoteMeta(pat))
		case fs.bool("extended-regexp"):
			exprs = append(exprs, pat)
		default:
			exprs = append(exprs, basicToExtended(pat))
		}
	}
	expr := "(?:" + strings.Join(exprs, ")|(?:") + ")"
	if fs.bool("word-regexp") {
		expr = `(?:^|\W)(` + expr + `)(?:$|\W)`
	}
	if fs.bool("ignore-case") {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		fmt.Fprintf(p.stderr, "grep: %v\n", err)
		return 2
	}
	after, before := int(fs.int("after-context")), int(fs.int("before-context"))
	if fs.changed("context") {
		after, before = int(fs.int("context")), int(fs.int("context"))
	}
	var in io.Reader = strings.NewReader("")
	if len(pos) > 0 && pos[0] != "-" {
		data, err := c.readFile(pos[0])
		if err != nil {
			fmt.Fprintf(p.stderr, "grep: %s: No such file or directory\n", pos[0])
			return 2
		}
		in = bytes.NewReader(data)
	} else if p.stdin != nil {
		in = p.stdin
	}
	invert, count, number, only := fs.bool("invert-match"), fs.bool("count"), fs.bool("line-number"), fs.bool("only-matching")
	r := bufio.NewReader(in)
	matches, lineNo, lastPrinted, afterLeft := 0, 0, 0, 0
	var held []string // the lines before a match, for -B
	print := func(n int, line string, sep string) {
		if lastPrinted > 0 && n > lastPrinted+1 && (before > 0 || after > 0) {
			fmt.Fprintln(p.stdout, "--")
		}
		if number {
			fmt.Fprintf(p.stdout, "%d%s", n, sep)
		}
		fmt.Fprintln(p.stdout, line)
		lastPrinted = n
	}
	for {
		line, err := r.ReadString('\n')
		if line == "" && err != nil {
			break
		}
		lineNo++
		line = strings.TrimSuffix(line, "\n")
		match := re.MatchString(line) != invert
		if match {
			matches++
			if !count {
				for i, h := range held {
					print(lineNo-len(held)+i, h, "-")
				}
				held = held[:0]
				if only && !invert {
					for _, m := range re.FindAllString(line, -1) {
						print(lineNo, m, ":")
					}
				} else {
					print(lineNo, line, ":")
				}
				afterLeft = after
			}
		} else if !count {
			if afterLeft > 0 {
				print(lineNo, line, "-")
				afterLeft--
			} else if before > 0 {
				held = append(held, line)
				if len(held) > before {
					held = held[1:]
				}
			}
		}
		if err != nil {
			break
		}
	}
	if count {
		fmt.Fprintln(p.stdout, matches)
	}
	if matches == 0 {
		return 1
	}
	return 0
}

// basicToExtended rewrites a POSIX basic regular expression as an
// extended one: in BRE, + ? | ( ) { } are literal and their backslashed
// forms are the operators.
func basicToExtended(bre string) string {
	var b strings.Builder
	for i := 0; i < len(bre); i++ {
		ch := bre[i]
		if ch == '\\' && i+1 < len(bre) {
			n := bre[i+1]
			if strings.IndexByte("+?|(){}", n) >= 0 {
				b.WriteByte(n)
			} else {
				b.WriteByte('\\')
				b.WriteByte(n)
			}
			i++
			continue
		}
		if strings.IndexByte("+?|(){}", ch) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(ch)
	}
	return b.String()
}
