package console

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// etcdctl as Debian's etcd-client 3.4 (the version rvplay's gateway
// emulates) parses, runs and prints it, against the session's gateway
// instead of a gRPC endpoint. Where 3.5 added a flag the articles or the
// lessons use (get --count-only), the console follows 3.5.

// etcdctl's exit codes (pkg/cobrautl).
const (
	exitError        = 1
	exitInvalidInput = 3
	exitBadFeature   = 4
	exitInterrupted  = 5
	exitBadArgs      = 128
)

// etcdctlVersion is what `etcdctl version` prints and endpoint status
// shows: the etcd release whose behaviour the gateway emulates.
const etcdctlVersion = "3.4.23"

const connectionNote = "the console always talks to this lab's session: --endpoints, --cert, --key, --cacert and the other connection flags are accepted and have no effect"

func etcdctlGlobalFlags() *flagSet {
	conn := func(name, def, usage string, kind flagKind) *flagDef {
		return &flagDef{name: name, kind: kind, def: def, usage: usage, explain: connectionNote}
	}
	return newFlagSet("etcdctl",
		conn("cacert", "", "verify certificates of TLS-enabled secure servers using this CA bundle", stringFlag),
		conn("cert", "", "identify secure client using this TLS certificate file", stringFlag),
		conn("command-timeout", "5s", "timeout for short running command (excluding dial timeout)", durationFlag),
		&flagDef{name: "debug", kind: boolFlag, usage: "enable client-side debug logging"},
		conn("dial-timeout", "2s", "dial timeout for client connections", durationFlag),
		&flagDef{name: "discovery-srv", short: "d", kind: stringFlag, usage: "domain name to query for SRV records describing cluster endpoints", explain: connectionNote},
		conn("discovery-srv-name", "", "service name to query when using DNS discovery", stringFlag),
		&flagDef{name: "endpoints", kind: stringSliceFlag, def: "[127.0.0.1:2379]", usage: "gRPC endpoints", explain: connectionNote},
		&flagDef{name: "hex", kind: boolFlag, usage: "print byte strings as hex encoded strings"},
		&flagDef{name: "insecure-discovery", kind: boolFlag, def: "true", usage: "accept insecure SRV records describing cluster endpoints", explain: connectionNote},
		&flagDef{name: "insecure-skip-tls-verify", kind: boolFlag, usage: "skip server certificate verification (CAUTION: this option should be enabled only for testing purposes)", explain: connectionNote},
		&flagDef{name: "insecure-transport", kind: boolFlag, def: "true", usage: "disable transport security for client connections", explain: connectionNote},
		conn("keepalive-time", "2s", "keepalive time for client connections", durationFlag),
		conn("keepalive-timeout", "6s", "keepalive timeout for client connections", durationFlag),
		conn("key", "", "identify secure client using this TLS key file", stringFlag),
		conn("password", "", "password for authentication (if this option is used, --user option shouldn't include password)", stringFlag),
		conn("user", "", "username[:password] for authentication (prompt if password is not supplied)", stringFlag),
		&flagDef{name: "write-out", short: "w", kind: stringFlag, def: "simple", usage: "set the output format (fields, json, protobuf, simple, table)"},
	)
}

type etcdctlCmd struct {
	use, short string
	flags      func() []*flagDef
	run        func(ctx context.Context, e *etcdctlRun) int
}

// etcdctlRun is one etcdctl invocation.
type etcdctlRun struct {
	*proc
	c     *Console
	fs    *flagSet
	pos   []string
	print printer
	cmd   *etcdctlCmd
}

func (e *etcdctlRun) fail(code int, format string, a ...any) int {
	fmt.Fprintf(e.stderr, "Error: %s\n", fmt.Sprintf(format, a...))
	return code
}

func (e *etcdctlRun) failErr(code int, err error) int { return e.fail(code, "%v", err) }

// endpoint is the first endpoint given (what endpoint status shows).
func (e *etcdctlRun) endpoint() string {
	if eps := e.fs.strs("endpoints"); len(eps) > 0 {
		return eps[0]
	}
	return "127.0.0.1:2379"
}

var etcdctlCommands []*etcdctlCmd

func init() {
	etcdctlCommands = []*etcdctlCmd{
		{use: "get [options] <key> [range_end]", short: "Gets the key or a range of keys", flags: getFlags, run: etcdctlGet},
		{use: "put [options] <key> <value> (<value> can also be given from stdin)", short: "Puts the given key into the store", flags: putFlags, run: etcdctlPut},
		{use: "del [options] <key> [range_end]", short: "Removes the specified key or range of keys [key, range_end)", flags: delFlags, run: etcdctlDel},
		{use: "txn [options]", short: "Txn processes all the requests in one transaction", flags: func() []*flagDef {
			return []*flagDef{{name: "interactive", short: "i", kind: boolFlag, usage: "Input transaction in interactive mode"}}
		}, run: etcdctlTxn},
		{use: "compaction [options] <revision>", short: "Compacts the event history in etcd", flags: func() []*flagDef {
			return []*flagDef{{name: "physical", kind: boolFlag, usage: "'true' to wait for compaction to physically remove all old revisions"}}
		}, run: etcdctlCompaction},
		{use: "watch [options] [key or prefix] [range_end] [--] [exec-command arg1 arg2 ...]", short: "Watches events stream on keys or prefixes", flags: func() []*flagDef {
			return []*flagDef{
				{name: "interactive", short: "i", kind: boolFlag, usage: "Interactive mode"},
				{name: "prefix", kind: boolFlag, usage: "Watch on a prefix if prefix is set"},
				{name: "rev", kind: intFlag, usage: "Revision to start watching"},
				{name: "prev-kv", kind: boolFlag, usage: "get the previous key-value pair before the event happens"},
				{name: "progress-notify", kind: boolFlag, usage: "get periodic watch progress notification from server"},
			}
		}, run: etcdctlWatch},
		{use: "endpoint status", short: "Prints out the status of endpoints specified in `--endpoints` flag", flags: func() []*flagDef {
			return []*flagDef{{name: "cluster", kind: boolFlag, usage: "use all endpoints from the cluster member list"}}
		}, run: etcdctlEndpoint},
		{use: "version", short: "Prints the version of etcdctl", flags: func() []*flagDef { return nil }, run: func(_ context.Context, e *etcdctlRun) int {
			fmt.Fprintf(e.stdout, "etcdctl version: %s\nAPI version: 3.4\n", etcdctlVersion)
			return 0
		}},
	}
}

func findEtcdctlCmd(name string) *etcdctlCmd {
	for _, c := range etcdctlCommands {
		if strings.SplitN(c.use, " ", 2)[0] == name {
			return c
		}
	}
	return nil
}

func (c *Console) etcdctl(ctx context.Context, p *proc) int {
	// The command is the first positional argument; its flags may come
	// before or after it, as cobra allows.
	fs := etcdctlGlobalFlags()
	var cmd *etcdctlCmd
	for _, a := range p.args {
		if !strings.HasPrefix(a, "-") {
			if cmd = findEtcdctlCmd(a); cmd != nil {
				break
			}
		}
	}
	if cmd != nil {
		fs.cmd = "etcdctl " + strings.SplitN(cmd.use, " ", 2)[0]
		fs.add(cmd.flags()...)
	}
	pos, err := fs.parse(p.args)
	if err != nil {
		// cobra prints the error and the usage (etcdctl's usage goes to
		// stdout, leaving cobra an empty line), then etcdctl's main prints
		// the error again.
		fmt.Fprintf(p.stderr, "Error: %v\n", err)
		if cmd != nil {
			fmt.Fprint(p.stdout, etcdctlUsage(cmd))
		} else {
			fmt.Fprint(p.stdout, etcdctlTopUsage())
		}
		fmt.Fprintf(p.stderr, "\nError: %v\n", err)
		return exitError
	}
	for _, n := range fs.explanations() {
		p.note("%s", n)
	}
	if len(pos) == 0 {
		fmt.Fprint(p.stdout, etcdctlTopUsage())
		return 0
	}
	if cmd == nil {
		name := pos[0]
		switch name {
		case "lease", "member", "snapshot", "auth", "user", "role", "alarm", "defrag", "move-leader", "lock", "elect", "make-mirror", "check", "migrate":
			fmt.Fprintf(p.stderr, "Error: %q is not available in the lab\n", "etcdctl "+name)
			p.note("the lab's etcd has no %s; the console runs etcdctl %s", name, etcdctlCommandNames())
			return exitBadFeature
		}
		fmt.Fprintf(p.stderr, "Error: unknown command %q for \"etcdctl\"\nRun 'etcdctl --help' for usage.\n", name)
		fmt.Fprintf(p.stderr, "Error: unknown command %q for \"etcdctl\"\n", name)
		p.note("the console runs etcdctl %s", etcdctlCommandNames())
		return exitError
	}
	pos = pos[1:]
	if cmd.use == "endpoint status" {
		if len(pos) == 0 || pos[0] != "status" {
			sub := ""
			if len(pos) > 0 {
				sub = pos[0]
			}
			if sub == "" {
				fmt.Fprint(p.stdout, etcdctlUsage(cmd))
				return 0
			}
			fmt.Fprintf(p.stderr, "Error: %q is not available in the lab\n", "etcdctl endpoint "+sub)
			p.note("the console runs etcdctl endpoint status")
			return exitBadFeature
		}
		pos = pos[1:]
	}
	e := &etcdctlRun{proc: p, c: c, fs: fs, pos: pos, cmd: cmd}
	switch f := fs.str("write-out"); f {
	case "simple":
		e.print = &simplePrinter{w: p.stdout, hex: fs.bool("hex")}
	case "json":
		e.print = &jsonPrinter{w: p.stdout}
	case "fields":
		e.print = &fieldsPrinter{w: p.stdout}
	case "table":
		e.print = &tablePrinter{w: p.stdout, errw: p.stderr}
	case "protobuf":
		p.note("-w protobuf prints etcd's binary messages, which the lab's gateway does not speak; use -w json")
		return e.fail(exitBadFeature, "protobuf not supported as output format")
	default:
		return e.fail(exitBadFeature, "unsupported output format")
	}
	return cmd.run(ctx, e)
}

func etcdctlCommandNames() string {
	var ns []string
	for _, c := range etcdctlCommands {
		ns = append(ns, etcdctlCmdName(c))
	}
	return strings.Join(ns, ", ")
}

// etcdctlUsage is the usage text etcdctl prints with a flag error, listing
// the flags the console accepts (etcdctl's own template: flags aligned by a
// tabwriter that pads with tabs).
func etcdctlUsage(cmd *etcdctlCmd) string {
	var b strings.Builder
	name := etcdctlCmdName(cmd)
	fmt.Fprintf(&b, "NAME:\n\t%s - %s\n\nUSAGE:\n\tetcdctl %s [flags]\n\nOPTIONS:\n", name, cmd.short, cmd.use)
	local := append(cmd.flags(), &flagDef{name: "help", short: "h", kind: boolFlag, def: "false", usage: "help for " + strings.Fields(name)[len(strings.Fields(name))-1]})
	writeFlagUsage(&b, local)
	b.WriteString("\nGLOBAL OPTIONS:\n")
	writeFlagUsage(&b, etcdctlGlobalFlags().defs)
	b.WriteString("\n")
	return b.String()
}

func etcdctlCmdName(cmd *etcdctlCmd) string {
	if cmd.use == "endpoint status" {
		return cmd.use
	}
	return strings.SplitN(cmd.use, " ", 2)[0]
}

func writeFlagUsage(b *strings.Builder, defs []*flagDef) {
	sorted := append([]*flagDef(nil), defs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	tw := tabwriter.NewWriter(b, 0, 8, 1, '\t', 0)
	for _, d := range sorted {
		def := d.withDefaults().def
		if d.kind == boolFlag && def == "" {
			def = "false"
		}
		line := fmt.Sprintf("   %s   --%s", d.short, d.name)
		if d.short != "" {
			line = fmt.Sprintf("  -%s, --%s", d.short, d.name)
		}
		switch d.kind {
		case boolFlag:
			line += "[=" + def + "]"
		case stringFlag:
			line += "=" + strconv.Quote(def)
		default:
			line += "=" + def
		}
		fmt.Fprintf(tw, "%s\t%s\n", line, d.usage)
	}
	tw.Flush()
}

func etcdctlTopUsage() string {
	var b strings.Builder
	b.WriteString("NAME:\n\tetcdctl - A simple command line client for etcd3.\n\nUSAGE:\n\tetcdctl [flags]\n\nVERSION:\n\t" + etcdctlVersion + "\n\nAPI VERSION:\n\t3.4\n\n\nCOMMANDS (in the lab):\n")
	tw := tabwriter.NewWriter(&b, 0, 8, 1, '\t', 0)
	for _, c := range etcdctlCommands {
		fmt.Fprintf(tw, "\t%s\t%s\n", etcdctlCmdName(c), c.short)
	}
	tw.Flush()
	b.WriteString("\nOPTIONS:\n")
	writeFlagUsage(&b, etcdctlGlobalFlags().defs)
	return b.String()
}

func getFlags() []*flagDef {
	return []*flagDef{
		{name: "consistency", kind: stringFlag, def: "l", usage: "Linearizable(l) or Serializable(s)"},
		{name: "count-only", kind: boolFlag, usage: "Get only the count"},
		{name: "from-key", kind: boolFlag, usage: "Get keys that are greater than or equal to the given key using byte compare"},
		{name: "keys-only", kind: boolFlag, usage: "Get only the keys"},
		{name: "limit", kind: intFlag, usage: "Maximum number of results"},
		{name: "order", kind: stringFlag, usage: "Order of results; ASCEND or DESCEND (ASCEND by default)"},
		{name: "prefix", kind: boolFlag, usage: "Get keys with matching prefix"},
		{name: "print-value-only", kind: boolFlag, usage: `Only write values when using the "simple" output format`},
		{name: "rev", kind: intFlag, usage: "Specify the kv revision"},
		{name: "sort-by", kind: stringFlag, usage: "Sort target; CREATE, KEY, MODIFY, VALUE, or VERSION"},
	}
}

func putFlags() []*flagDef {
	return []*flagDef{
		{name: "ignore-lease", kind: boolFlag, usage: "updates the key using its current lease"},
		{name: "ignore-value", kind: boolFlag, usage: "updates the key using its current value"},
		{name: "lease", kind: stringFlag, def: "0", usage: "lease ID (in hexadecimal) to attach to the key"},
		{name: "prev-kv", kind: boolFlag, usage: "return the previous key-value pair before modification"},
	}
}

func delFlags() []*flagDef {
	return []*flagDef{
		{name: "from-key", kind: boolFlag, usage: "delete keys that are greater than or equal to the given key using byte compare"},
		{name: "prefix", kind: boolFlag, usage: "delete keys with matching prefix"},
		{name: "prev-kv", kind: boolFlag, usage: "return deleted key-value pairs"},
	}
}

// prefixEnd is clientv3.GetPrefixRangeEnd: the smallest key greater than
// every key with the prefix; "\x00" (to the end) when there is none.
func prefixEnd(prefix string) []byte {
	end := []byte(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return []byte{0}
}

// usageError is a bad-arguments error of a get/put/del, used inside txn too.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func badArgs(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// getRequest builds a range request as etcdctl's getGetOp does.
func getRequest(fs *flagSet, args []string) (*rangeRequest, error) {
	if len(args) == 0 {
		return nil, badArgs("get command needs one argument as key and an optional argument as range_end")
	}
	prefix, fromKey := fs.bool("prefix"), fs.bool("from-key")
	if prefix && fromKey {
		return nil, badArgs("`--prefix` and `--from-key` cannot be set at the same time, choose one")
	}
	if fs.bool("keys-only") && fs.bool("count-only") {
		return nil, badArgs("`--keys-only` and `--count-only` cannot be set at the same time, choose one")
	}
	r := &rangeRequest{}
	switch fs.str("consistency") {
	case "s":
		r.Serializable = true
	case "l":
	default:
		return nil, &featureError{fmt.Sprintf("unknown consistency flag %q", fs.str("consistency"))}
	}
	key := args[0]
	if len(args) > 1 {
		if prefix || fromKey {
			return nil, badArgs("too many arguments, only accept one argument when `--prefix` or `--from-key` is set")
		}
		r.RangeEnd = []byte(args[1])
	}
	r.Limit = fs.int("limit")
	if rev := fs.int("rev"); rev > 0 {
		r.Revision = rev
	}
	order := strings.ToUpper(fs.str("order"))
	switch order {
	case "ASCEND", "DESCEND", "":
	default:
		return nil, &featureError{fmt.Sprintf("bad sort order %v", fs.str("order"))}
	}
	target := strings.ToUpper(fs.str("sort-by"))
	switch target {
	case "CREATE", "KEY", "MODIFY", "VALUE", "VERSION", "":
	default:
		return nil, &featureError{fmt.Sprintf("bad sort target %v", fs.str("sort-by"))}
	}
	if target == "" {
		target = "KEY"
	}
	if target == "KEY" && order == "ASCEND" {
		order = "" // clientv3: the server returns keys in ascending order anyway
	}
	if order != "" {
		r.SortOrder = order
	}
	// The gateway's enum names (etcdserverpb.RangeRequest_SortTarget).
	r.SortTarget = map[string]string{"KEY": "", "CREATE": "CREATE", "MODIFY": "MOD", "VALUE": "VALUE", "VERSION": "VERSION"}[target]
	if prefix {
		if key == "" {
			key, r.RangeEnd = "\x00", []byte{0}
		} else {
			r.RangeEnd = prefixEnd(key)
		}
	}
	if fromKey {
		if key == "" {
			key = "\x00"
		}
		r.RangeEnd = []byte{0}
	}
	r.Key = []byte(key)
	r.KeysOnly = fs.bool("keys-only")
	r.CountOnly = fs.bool("count-only")
	return r, nil
}

// featureError is etcdctl's ExitBadFeature.
type featureError struct{ msg string }

func (e *featureError) Error() string { return e.msg }

func (e *etcdctlRun) usageFail(err error) int {
	var fe *featureError
	if errors.As(err, &fe) {
		return e.failErr(exitBadFeature, err)
	}
	return e.failErr(exitBadArgs, err)
}

func etcdctlGet(ctx context.Context, e *etcdctlRun) int {
	req, err := getRequest(e.fs, e.pos)
	if err != nil {
		return e.usageFail(err)
	}
	resp, err := e.c.etcd.rangeKeys(ctx, req)
	if err != nil {
		return e.failErr(exitError, err)
	}
	if e.fs.bool("count-only") {
		if _, ok := e.print.(*fieldsPrinter); !ok {
			return e.fail(exitBadArgs, "--count-only is only for `--write-out=fields`")
		}
	}
	if e.fs.bool("print-value-only") {
		sp, ok := e.print.(*simplePrinter)
		if !ok {
			return e.fail(exitBadArgs, "print-value-only is only for `--write-out=simple`")
		}
		sp.valueOnly = true
	}
	return e.print.get(resp)
}

func putRequestFrom(fs *flagSet, args []string, stdin io.Reader) (*putRequest, error) {
	if len(args) == 0 {
		return nil, badArgs("put command needs 1 argument and input from stdin or 2 arguments")
	}
	key := args[0]
	if fs.bool("ignore-value") && len(args) > 1 {
		return nil, badArgs("put command needs only 1 argument when 'ignore-value' is set")
	}
	var value string
	if !fs.bool("ignore-value") {
		if len(args) > 1 {
			value = args[1]
		} else {
			if stdin == nil {
				return nil, badArgs("put command needs 1 argument and input from stdin or 2 arguments")
			}
			b, err := io.ReadAll(stdin)
			if err != nil {
				return nil, badArgs("put command needs 1 argument and input from stdin or 2 arguments")
			}
			value = string(b)
		}
	}
	id, err := strconv.ParseInt(fs.str("lease"), 16, 64)
	if err != nil {
		return nil, badArgs("bad lease ID (%v), expecting ID in Hex", err)
	}
	return &putRequest{Key: []byte(key), Value: []byte(value), Lease: id, PrevKv: fs.bool("prev-kv"),
		IgnoreValue: fs.bool("ignore-value"), IgnoreLease: fs.bool("ignore-lease")}, nil
}

func etcdctlPut(ctx context.Context, e *etcdctlRun) int {
	req, err := putRequestFrom(e.fs, e.pos, e.stdin)
	if err != nil {
		return e.usageFail(err)
	}
	resp, err := e.c.etcd.put(ctx, req)
	if err != nil {
		return e.failErr(exitError, err)
	}
	return e.print.put(resp)
}

func delRequestFrom(fs *flagSet, args []string) (*deleteRangeRequest, error) {
	if len(args) == 0 {
		return nil, badArgs("del command needs one argument as key and an optional argument as range_end")
	}
	prefix, fromKey := fs.bool("prefix"), fs.bool("from-key")
	if prefix && fromKey {
		return nil, badArgs("`--prefix` and `--from-key` cannot be set at the same time, choose one")
	}
	r := &deleteRangeRequest{PrevKv: fs.bool("prev-kv")}
	key := args[0]
	if len(args) > 1 {
		if prefix || fromKey {
			return nil, badArgs("too many arguments, only accept one argument when `--prefix` or `--from-key` is set")
		}
		r.RangeEnd = []byte(args[1])
	}
	if prefix {
		if key == "" {
			key, r.RangeEnd = "\x00", []byte{0}
		} else {
			r.RangeEnd = prefixEnd(key)
		}
	}
	if fromKey {
		if key == "" {
			key = "\x00"
		}
		r.RangeEnd = []byte{0}
	}
	r.Key = []byte(key)
	return r, nil
}

func etcdctlDel(ctx context.Context, e *etcdctlRun) int {
	req, err := delRequestFrom(e.fs, e.pos)
	if err != nil {
		return e.usageFail(err)
	}
	resp, err := e.c.etcd.deleteRange(ctx, req)
	if err != nil {
		return e.failErr(exitError, err)
	}
	return e.print.del(resp)
}

func etcdctlCompaction(ctx context.Context, e *etcdctlRun) int {
	if len(e.pos) != 1 {
		return e.fail(exitBadArgs, "compaction command needs 1 argument")
	}
	rev, err := strconv.ParseInt(e.pos[0], 10, 64)
	if err != nil {
		return e.failErr(exitError, err)
	}
	if _, err := e.c.etcd.compact(ctx, rev, e.fs.bool("physical")); err != nil {
		return e.failErr(exitError, err)
	}
	fmt.Fprintln(e.stdout, "compacted revision", rev)
	return 0
}

func etcdctlEndpoint(ctx context.Context, e *etcdctlRun) int {
	if e.fs.bool("cluster") {
		e.note("the lab's etcd is one member: --cluster shows the same endpoint")
	}
	resp, err := e.c.etcd.status(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "Failed to get the status of endpoint %s (%v)\n", e.endpoint(), err)
		return e.fail(exitError, "%v", err)
	}
	return e.print.status([]epStatus{{Ep: e.endpoint(), Resp: resp}})
}

// epStatus is etcdctl's row of endpoint status.
type epStatus struct {
	Ep   string          `json:"Endpoint"`
	Resp *statusResponse `json:"Status"`
}

// argify splits a txn line as etcdctl's Argify does: words, "double
// quoted" strings with Go escapes, 'single quoted' strings.
func argify(s string) ([]string, error) {
	var out []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return nil, errors.New("unexpected EOF")
			}
			v, err := strconv.Unquote(s[i : j+1])
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			i = j + 1
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			out = append(out, s[i+1:i+1+j])
			i += j + 2
		default:
			j := i
			for j < len(s) && s[j] != ' ' && s[j] != '\t' {
				j++
			}
			out = append(out, s[i:j])
			i = j
		}
	}
	return out, nil
}

// parseCompare reads one compare line: target("key") op "value".
func parseCompare(line string) (*compare, error) {
	target, rest, ok := strings.Cut(line, "(")
	if !ok {
		return nil, fmt.Errorf("malformed comparison: %s", line)
	}
	key, rest, err := scanQuoted(rest)
	if err == nil && !strings.HasPrefix(rest, ")") {
		err = errors.New("input does not match format")
	}
	var op, val string
	n := 0
	if err == nil {
		n = 1
		fields := strings.TrimLeft(rest[1:], " \t")
		op, rest, _ = strings.Cut(fields, " ")
		if op != "" {
			n = 2
			val, _, err = scanQuoted(strings.TrimLeft(rest, " \t"))
			if err == nil {
				n = 3
			}
		}
	}
	if n != 3 {
		return nil, fmt.Errorf("malformed comparison: %s; got %s(%q) %s %q", line, target, key, op, val)
	}
	cmp := &compare{Key: []byte(key)}
	switch op {
	case "=":
		cmp.Result = "EQUAL"
	case "!=":
		cmp.Result = "NOT_EQUAL"
	case "<":
		cmp.Result = "LESS"
	case ">":
		cmp.Result = "GREATER"
	default:
		return nil, fmt.Errorf("invalid txn compare request: %s (unknown operator %s: use =, !=, < or >)", line, op)
	}
	num := func(base int) (*int64, error) {
		v, err := strconv.ParseInt(val, base, 64)
		if err != nil {
			return nil, fmt.Errorf("invalid txn compare request: %s", line)
		}
		return &v, nil
	}
	switch target {
	case "ver", "version":
		cmp.Target = "VERSION"
		cmp.Version, err = num(10)
	case "c", "create":
		cmp.Target = "CREATE"
		cmp.CreateRevision, err = num(10)
	case "m", "mod":
		cmp.Target = "MOD"
		cmp.ModRevision, err = num(10)
	case "val", "value":
		cmp.Target = "VALUE"
		cmp.Value = []byte(val)
	case "lease":
		cmp.Target = "LEASE"
		cmp.Lease, err = num(16)
	default:
		return nil, fmt.Errorf("malformed comparison: %s (unknown target %s)", line, target)
	}
	if err != nil {
		return nil, err
	}
	return cmp, nil
}

// scanQuoted reads a Go double-quoted string (or a bare word, as
// fmt.Sscanf's %q does) at the start of s.
func scanQuoted(s string) (string, string, error) {
	if s == "" {
		return "", "", io.ErrUnexpectedEOF
	}
	if s[0] == '"' || s[0] == '`' {
		q := s[0]
		for j := 1; j < len(s); j++ {
			if s[j] == '\\' && q == '"' {
				j++
				continue
			}
			if s[j] == q {
				v, err := strconv.Unquote(s[:j+1])
				return v, s[j+1:], err
			}
		}
		return "", "", io.ErrUnexpectedEOF
	}
	return "", s, errors.New("expected quoted string")
}

// parseRequestOp reads one txn request line: get, put or del with their
// flags.
func parseRequestOp(line string) (*requestOp, error) {
	args, err := argify(line)
	if err != nil || len(args) < 2 {
		return nil, fmt.Errorf("invalid txn compare request: %s", line)
	}
	bad := fmt.Errorf("invalid txn request: %s", line)
	var defs []*flagDef
	switch args[0] {
	case "get":
		defs = getFlags()
	case "put":
		defs = putFlags()
	case "del":
		defs = delFlags()
	default:
		return nil, bad
	}
	fs := newFlagSet(args[0], defs...)
	pos, err := fs.parse(args[1:])
	if err != nil {
		return nil, bad
	}
	switch args[0] {
	case "get":
		r, err := getRequest(fs, pos)
		if err != nil {
			return nil, err
		}
		return &requestOp{RequestRange: r}, nil
	case "put":
		r, err := putRequestFrom(fs, pos, nil)
		if err != nil {
			return nil, err
		}
		return &requestOp{RequestPut: r}, nil
	default:
		r, err := delRequestFrom(fs, pos)
		if err != nil {
			return nil, err
		}
		return &requestOp{RequestDeleteRange: r}, nil
	}
}

func etcdctlTxn(ctx context.Context, e *etcdctlRun) int {
	if len(e.pos) != 0 {
		return e.fail(exitBadArgs, "txn command does not accept argument")
	}
	interactive := e.fs.bool("interactive")
	in := e.stdin
	if in == nil {
		in = strings.NewReader("")
		e.note("etcdctl txn reads its compares and requests from stdin: type them after the command (an empty line ends each section) or use a heredoc")
	}
	r := bufio.NewReader(in)
	readLines := func() ([]string, error) {
		var lines []string
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return nil, err
			}
			line = strings.TrimSpace(line)
			if line == "" {
				return lines, nil
			}
			lines = append(lines, line)
		}
	}
	req := &txnRequest{}
	prompt := func(s string) {
		if interactive {
			fmt.Fprintln(e.stdout, s)
		}
	}
	prompt(txnPrompts[0])
	lines, err := readLines()
	if err != nil {
		return e.failErr(exitInvalidInput, err)
	}
	for _, l := range lines {
		cmp, err := parseCompare(l)
		if err != nil {
			return e.failErr(exitInvalidInput, err)
		}
		req.Compare = append(req.Compare, *cmp)
	}
	for i, ops := range []*[]requestOp{&req.Success, &req.Failure} {
		prompt(txnPrompts[i+1])
		lines, err := readLines()
		if err != nil {
			return e.failErr(exitInvalidInput, err)
		}
		for _, l := range lines {
			op, err := parseRequestOp(l)
			if err != nil {
				// A get/put/del that parsed but has bad arguments exits
				// from inside, as the command itself would.
				var ue *usageError
				var fe *featureError
				if errors.As(err, &ue) || errors.As(err, &fe) {
					return e.usageFail(err)
				}
				return e.failErr(exitInvalidInput, err)
			}
			*ops = append(*ops, *op)
		}
	}
	resp, err := e.c.etcd.txn(ctx, req)
	if err != nil {
		return e.failErr(exitError, err)
	}
	return e.print.txn(resp)
}

func etcdctlWatch(ctx context.Context, e *etcdctlRun) int {
	if e.fs.bool("interactive") {
		e.note("etcdctl watch -i is not available in the lab: run one etcdctl watch per stream")
		return e.fail(exitBadFeature, "interactive watch is not available in the lab")
	}
	args := e.pos
	for i, a := range args {
		if a == "--" {
			e.note("etcdctl watch ... -- COMMAND runs a program per event; the lab runs no programs")
			args = args[:i]
			break
		}
	}
	if len(args) < 1 {
		return e.fail(exitBadArgs, "bad number of arguments")
	}
	req := watchCreateRequest{Key: []byte(args[0]), StartRevision: e.fs.int("rev"), PrevKv: e.fs.bool("prev-kv")}
	if len(args) == 2 {
		if e.fs.bool("prefix") {
			return e.fail(exitBadArgs, "`range_end` and `--prefix` are mutually exclusive")
		}
		req.RangeEnd = []byte(args[1])
	}
	if e.fs.bool("prefix") {
		if args[0] == "" {
			req.Key, req.RangeEnd = []byte{0}, []byte{0}
		} else {
			req.RangeEnd = prefixEnd(args[0])
		}
	}
	if e.fs.bool("progress-notify") {
		e.note("--progress-notify: the lab's gateway sends progress notifications only to watches that ask in their create request; this console does not")
	}
	canceled := false
	err := e.c.etcd.watch(ctx, req, func(r *watchResponse) error {
		if r.Created {
			e.streaming()
			return nil
		}
		if r.Canceled {
			canceled = true
			reason := r.CancelReason
			if r.CompactRevision != 0 {
				reason = "etcdserver: mvcc: required revision has been compacted"
			}
			fmt.Fprintf(e.stderr, "watch was canceled (%s)\n", reason)
		}
		e.print.watch(r)
		if canceled {
			return io.EOF
		}
		return nil
	})
	if ctx.Err() != nil {
		return 130
	}
	if err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintf(e.stderr, "Error: %v\n", err)
	}
	return e.fail(exitInterrupted, "watch is canceled by the server")
}

// printer is one of etcdctl's output formats.
type printer interface {
	get(*rangeResponse) int
	put(*putResponse) int
	del(*deleteRangeResponse) int
	txn(*txnResponse) int
	watch(*watchResponse)
	status([]epStatus) int
}

type simplePrinter struct {
	w         io.Writer
	hex       bool
	valueOnly bool
}

func (s *simplePrinter) kv(kv *keyValue) {
	k, v := string(kv.Key), string(kv.Value)
	if s.hex {
		k, v = hexPrefixed(kv.Key), hexPrefixed(kv.Value)
	}
	if !s.valueOnly {
		fmt.Fprintln(s.w, k)
	}
	fmt.Fprintln(s.w, v)
}

func hexPrefixed(b []byte) string {
	h := hex.EncodeToString(b)
	var out strings.Builder
	for i := 0; i < len(h); i += 2 {
		out.WriteString(`\x`)
		out.WriteString(h[i : i+2])
	}
	return out.String()
}

func (s *simplePrinter) get(r *rangeResponse) int {
	for _, kv := range r.Kvs {
		s.kv(kv)
	}
	return 0
}

func (s *simplePrinter) put(r *putResponse) int {
	fmt.Fprintln(s.w, "OK")
	if r.PrevKv != nil {
		s.kv(r.PrevKv)
	}
	return 0
}

func (s *simplePrinter) del(r *deleteRangeResponse) int {
	fmt.Fprintln(s.w, int64(r.Deleted))
	for _, kv := range r.PrevKvs {
		s.kv(kv)
	}
	return 0
}

func (s *simplePrinter) txn(r *txnResponse) int {
	if r.Succeeded {
		fmt.Fprintln(s.w, "SUCCESS")
	} else {
		fmt.Fprintln(s.w, "FAILURE")
	}
	for _, op := range r.Responses {
		fmt.Fprintln(s.w)
		switch {
		case op.ResponseDeleteRange != nil:
			s.del(op.ResponseDeleteRange)
		case op.ResponsePut != nil:
			s.put(op.ResponsePut)
		case op.ResponseRange != nil:
			s.get(op.ResponseRange)
		default:
			fmt.Fprintf(s.w, "unexpected response %+v\n", op)
		}
	}
	return 0
}

func (s *simplePrinter) watch(r *watchResponse) {
	for _, ev := range r.Events {
		fmt.Fprintln(s.w, ev.Type)
		if ev.PrevKv != nil {
			s.kv(ev.PrevKv)
		}
		if ev.Kv == nil {
			ev.Kv = &keyValue{}
		}
		s.kv(ev.Kv)
	}
}

func (s *simplePrinter) status(eps []epStatus) int {
	for _, row := range endpointStatusRows(eps) {
		fmt.Fprintln(s.w, strings.Join(row, ", "))
	}
	return 0
}

var endpointStatusHeader = []string{"endpoint", "ID", "version", "db size", "is leader", "is learner", "raft term", "raft index", "raft applied index", "errors"}

func endpointStatusRows(eps []epStatus) [][]string {
	var rows [][]string
	for _, ep := range eps {
		r := ep.Resp
		var member uint64
		if r.Header != nil {
			member = uint64(r.Header.MemberID)
		}
		rows = append(rows, []string{ep.Ep, fmt.Sprintf("%x", member), r.Version, humanizeBytes(uint64(r.DbSize)),
			fmt.Sprint(uint64(r.Leader) == member), fmt.Sprint(r.IsLearner), fmt.Sprint(uint64(r.RaftTerm)),
			fmt.Sprint(uint64(r.RaftIndex)), fmt.Sprint(uint64(r.RaftAppliedIndex)), strings.Join(r.Errors, ", ")})
	}
	return rows
}

// humanizeBytes is go-humanize's Bytes (SI units), which etcdctl uses for
// the db size.
func humanizeBytes(s uint64) string {
	sizes := []string{"B", "kB", "MB", "GB", "TB", "PB", "EB"}
	if s < 10 {
		return fmt.Sprintf("%d B", s)
	}
	e := 0
	v := float64(s)
	for v >= 1000 && e < len(sizes)-1 {
		v /= 1000
		e++
	}
	v = float64(int64(v*10+0.5)) / 10
	if v < 10 {
		return fmt.Sprintf("%.1f %s", v, sizes[e])
	}
	return fmt.Sprintf("%.0f %s", v, sizes[e])
}
