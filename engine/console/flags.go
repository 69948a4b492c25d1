package console

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Both tools parse their command lines with spf13/pflag through cobra, so
// the console parses flags with pflag's rules and words its errors the same
// way: "--name value", "--name=value", "-n value", "-nvalue", "-n=value",
// booleans without a value ("--prefix", "--prefix=false"), flags anywhere
// among the arguments, and "--" ending the flags.

type flagKind int

const (
	boolFlag flagKind = iota
	stringFlag
	intFlag
	durationFlag
	stringArrayFlag // every use appends (kubectl --from-literal, -f)
	stringSliceFlag // every use appends, commas split (etcdctl --endpoints)
)

type flagDef struct {
	name, short string
	kind        flagKind
	def         string
	usage       string
	// noOpt is the value of a flag written without one; "" means the flag
	// needs a value (booleans default to "true").
	noOpt string
	// explain, when set, is what the console notes when the flag is used:
	// the flag is accepted for compatibility and has no effect here.
	explain string
}

type flagSet struct {
	cmd    string // for errors and usage: "get", "kubectl get"
	defs   []*flagDef
	byName map[string]*flagDef
	short  map[string]*flagDef
	values map[string][]string
	set    map[string]bool
	// normalize maps a written flag name to its defined one (kubectl
	// accepts underscores for dashes).
	normalize func(string) string
}

func newFlagSet(cmd string, defs ...*flagDef) *flagSet {
	fs := &flagSet{cmd: cmd, byName: map[string]*flagDef{}, short: map[string]*flagDef{}, values: map[string][]string{}, set: map[string]bool{}}
	fs.add(defs...)
	return fs
}

// withDefaults fills the defaults pflag gives a flag without one.
func (d *flagDef) withDefaults() *flagDef {
	if d.kind == boolFlag && d.noOpt == "" {
		d.noOpt = "true"
	}
	if d.def == "" && d.kind == boolFlag {
		d.def = "false"
	}
	if d.def == "" && d.kind == intFlag {
		d.def = "0"
	}
	return d
}

func (fs *flagSet) add(defs ...*flagDef) {
	for _, d := range defs {
		d.withDefaults()
		fs.defs = append(fs.defs, d)
		fs.byName[d.name] = d
		if d.short != "" {
			fs.short[d.short] = d
		}
	}
}

// flagError is a parse error, worded as pflag words it.
type flagError struct{ msg string }

func (e *flagError) Error() string { return e.msg }

func flagErrorf(format string, a ...any) error { return &flagError{fmt.Sprintf(format, a...)} }

// parse reads args and returns the positional arguments.
func (fs *flagSet) parse(args []string) ([]string, error) {
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(pos, args[i+1:]...), nil
		case strings.HasPrefix(a, "--") && len(a) > 2:
			name, value, hasValue := strings.Cut(a[2:], "=")
			if fs.normalize != nil {
				name = fs.normalize(name)
			}
			d := fs.byName[name]
			if d == nil {
				return nil, flagErrorf("unknown flag: --%s", name)
			}
			if !hasValue {
				if d.noOpt != "" && d.kind == boolFlag {
					value = d.noOpt
				} else if i+1 < len(args) {
					i++
					value = args[i]
				} else {
					return nil, flagErrorf("flag needs an argument: --%s", name)
				}
			}
			if err := fs.setValue(d, value); err != nil {
				return nil, err
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			shorts := a[1:]
			for len(shorts) > 0 {
				c := shorts[:1]
				d := fs.short[c]
				if d == nil {
					return nil, flagErrorf("unknown shorthand flag: %q in -%s", rune(c[0]), shorts)
				}
				rest := shorts[1:]
				var value string
				switch {
				case strings.HasPrefix(rest, "="):
					value, rest = rest[1:], ""
				case d.kind == boolFlag:
					value = d.noOpt
				case rest != "":
					value, rest = rest, ""
				case i+1 < len(args):
					i++
					value = args[i]
				default:
					return nil, flagErrorf("flag needs an argument: %q in -%s", rune(c[0]), shorts)
				}
				if err := fs.setValue(d, value); err != nil {
					return nil, err
				}
				shorts = rest
			}
		default:
			pos = append(pos, a)
		}
	}
	return pos, nil
}

func (fs *flagSet) setValue(d *flagDef, value string) error {
	written := "--" + d.name
	if d.short != "" {
		written = "-" + d.short + ", --" + d.name
	}
	switch d.kind {
	case boolFlag:
		if _, err := strconv.ParseBool(value); err != nil {
			return flagErrorf("invalid argument %q for %q flag: %v", value, written, err)
		}
	case intFlag:
		if _, err := strconv.ParseInt(value, 0, 64); err != nil {
			return flagErrorf("invalid argument %q for %q flag: %v", value, written, err)
		}
	case durationFlag:
		if _, err := time.ParseDuration(value); err != nil {
			return flagErrorf("invalid argument %q for %q flag: %v", value, written, err)
		}
	}
	switch d.kind {
	case stringArrayFlag:
		fs.values[d.name] = append(fs.values[d.name], value)
	case stringSliceFlag:
		if !fs.set[d.name] {
			fs.values[d.name] = nil
		}
		fs.values[d.name] = append(fs.values[d.name], strings.Split(value, ",")...)
	default:
		fs.values[d.name] = []string{value}
	}
	fs.set[d.name] = true
	return nil
}

func (fs *flagSet) changed(name string) bool { return fs.set[name] }

func (fs *flagSet) str(name string) string {
	if v := fs.values[name]; len(v) > 0 {
		return v[len(v)-1]
	}
	if d := fs.byName[name]; d != nil {
		return d.def
	}
	return ""
}

func (fs *flagSet) strs(name string) []string { return fs.values[name] }

func (fs *flagSet) bool(name string) bool {
	b, _ := strconv.ParseBool(fs.str(name))
	return b
}

func (fs *flagSet) int(name string) int64 {
	n, _ := strconv.ParseInt(fs.str(name), 0, 64)
	return n
}

// explanations returns the notes for the flags used that have no effect in
// the lab, once each, in definition order.
func (fs *flagSet) explanations() []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range fs.defs {
		if d.explain != "" && fs.set[d.name] && !seen[d.explain] {
			seen[d.explain] = true
			out = append(out, d.explain)
		}
	}
	return out
}
