package console

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/client"
)

// Editor is the lab's editor as the console uses it.
type Editor interface {
	// Text is the editor's current content: what `kubectl apply -f -` reads
	// when no heredoc follows the command.
	Text(ctx context.Context) (string, error)
	// Edit shows text to the learner and returns what they saved, or
	// ErrEditCanceled. kubectl edit opens it, as kubectl opens $EDITOR.
	Edit(ctx context.Context, text string) (string, error)
}

// ErrEditCanceled is what Editor.Edit returns when the learner closes the
// editor without saving.
var ErrEditCanceled = errors.New("edit canceled")

// Options configure a Console.
type Options struct {
	// Editor is the lab's editor; nil: `-f -` without a heredoc and
	// `kubectl edit` say there is none.
	Editor Editor
	// Fetch reads a URL for `kubectl apply -f https://...` (the browser's
	// fetch); nil: URLs are refused with a note.
	Fetch func(ctx context.Context, url string) ([]byte, error)
	// Now is the clock for what kubectl computes itself (describe's ages);
	// nil: time.Now. Tables' ages come from the server.
	Now func() time.Time
	// Sleep waits between the writes of `lab load`; nil: a timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Output is where a command's output goes.
type Output struct {
	// Stdout and Stderr receive what the tool prints to each.
	Stdout, Stderr io.Writer
	// Note receives the console's own remarks, which are not part of the
	// tool's output: why a flag has no effect in the lab, what to do
	// instead of an unsupported command. Nil: dropped.
	Note func(text string)
	// Streaming is called when the command becomes a long-lived stream (a
	// watch): its output continues until the context ends. Nil: ignored.
	Streaming func()
	// Clear is called by the `clear` command. Nil: ignored.
	Clear func()
}

// Console runs command lines against one session. It is safe for
// concurrent use: a watch may run while other commands do.
type Console struct {
	h    api.Handler
	kube *client.Client
	etcd etcdClient
	opts Options

	mu      sync.Mutex
	aliases map[string]string
	files   map[string][]byte
	// discovery and openapi cache what kubectl caches in ~/.kube/cache:
	// the session's resource types and OpenAPI documents.
	discovery *discovery
	openapi   map[string]map[string]obj
}

// New returns a console for the session behind h.
func New(h api.Handler, opts Options) *Console {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Sleep == nil {
		opts.Sleep = func(ctx context.Context, d time.Duration) error {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	kc := client.New(h)
	kc.UserAgent = "kubectl/v1.32.4 (rvplay console)"
	return &Console{h: h, kube: kc, etcd: etcdClient{h}, opts: opts,
		aliases: map[string]string{"k": "kubectl"}, files: map[string][]byte{}}
}

// proc is one running command: its arguments and streams.
type proc struct {
	c      *Console
	args   []string
	assign []string
	stdin  io.Reader // nil: no stdin given (a terminal)
	stdout io.Writer
	stderr io.Writer
	out    *Output
}

func (p *proc) note(format string, a ...any) {
	if p.out.Note != nil {
		p.out.Note(fmt.Sprintf(format, a...))
	}
}

func (p *proc) streaming() {
	if p.out.Streaming != nil {
		p.out.Streaming()
	}
}

// Continuation says whether input is a whole command. input is the lines
// entered so far, joined by newlines. When it is not whole, it returns the
// prompt a shell would show for the next line: "> " inside a quote or a
// heredoc, etcdctl's section titles for the requests of `etcdctl txn`.
func (c *Console) Continuation(input string) (prompt string, complete bool) {
	first, rest, multi := strings.Cut(input, "\n")
	if c.txnStage(first) != nil {
		n := 0
		if multi {
			n = txnSectionsDone(rest + "\n")
		}
		if n < 3 {
			return txnPrompts[n], false
		}
		return "", true
	}
	_, err := parseScript(input)
	var inc *incompleteError
	if errors.As(err, &inc) {
		return inc.prompt, false
	}
	return "", true
}

var txnPrompts = []string{"compares:", "success requests (get, put, del):", "failure requests (get, put, del):"}

// txnSectionsDone counts the sections of an etcdctl txn's stdin that an
// empty line has ended.
func txnSectionsDone(stdin string) int {
	n := 0
	for _, line := range strings.SplitAfter(stdin, "\n") {
		if !strings.HasSuffix(line, "\n") {
			break
		}
		if strings.TrimSpace(line) == "" {
			n++
		}
	}
	return n
}

// txnStage returns the stage if line is a lone `etcdctl txn` that reads its
// requests from the lines typed after it (no heredoc, no redirection).
func (c *Console) txnStage(line string) *stage {
	sc, err := parseScript(line)
	if err != nil || len(sc.pipelines) != 1 || len(sc.pipelines[0]) < 1 {
		return nil
	}
	st := sc.pipelines[0][0]
	if st.heredoc != nil || st.stdinFile != "" {
		return nil
	}
	args, err := c.expandAliases(st)
	if err != nil || len(args) < 2 || args[0] != "etcdctl" {
		return nil
	}
	fs := etcdctlGlobalFlags()
	fs.add(&flagDef{name: "interactive", short: "i", kind: boolFlag})
	pos, err := fs.parse(args[1:])
	if err != nil || len(pos) != 1 || pos[0] != "txn" {
		return nil
	}
	return st
}

// Run runs one console input and returns its exit status. A watch runs
// until ctx ends (Ctrl+C in the lab).
func (c *Console) Run(ctx context.Context, input string, out Output) int {
	if out.Stdout == nil {
		out.Stdout = io.Discard
	}
	if out.Stderr == nil {
		out.Stderr = io.Discard
	}
	// The lines typed after a lone `etcdctl txn` are its stdin.
	var typedStdin *string
	if first, rest, multi := strings.Cut(input, "\n"); multi && c.txnStage(first) != nil {
		rest += "\n"
		input, typedStdin = first, &rest
	}
	sc, err := parseScript(input)
	if err != nil {
		var inc *incompleteError
		switch {
		case errors.As(err, &inc):
			fmt.Fprintln(out.Stderr, "rvplay: unexpected end of input (an open quote, a heredoc without its end line, or a trailing | or &&)")
			return 2
		case errors.Is(err, errUnsupportedSyntax):
			fmt.Fprintf(out.Stderr, "rvplay: %v\n", err)
			if out.Note != nil {
				out.Note("the console understands quotes, |, ;, &&, <<EOF heredocs, < and > files, NAME=value prefixes and aliases; no variables, globs or subshells")
			}
			return 2
		}
		fmt.Fprintf(out.Stderr, "rvplay: %v\n", err)
		return 2
	}
	status := 0
	for i, p := range sc.pipelines {
		if i > 0 && sc.andThen[i-1] && status != 0 {
			continue
		}
		if ctx.Err() != nil {
			return 130
		}
		if typedStdin != nil && len(p) > 0 && p[0].heredoc == nil {
			p[0].heredoc = typedStdin
		}
		status = c.runPipeline(ctx, p, &out)
	}
	return status
}

// runPipeline runs the stages of a pipeline concurrently, each stage's
// stdout feeding the next one's stdin, as a shell does; its status is the
// last stage's.
func (c *Console) runPipeline(ctx context.Context, p pipeline, out *Output) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := len(p)
	procs := make([]*proc, n)
	pipeR := make([]*io.PipeReader, n) // pipeR[i]: stage i reads the previous stage
	pipeW := make([]*io.PipeWriter, n) // pipeW[i]: stage i writes the next stage
	for i := 0; i+1 < n; i++ {
		pipeR[i+1], pipeW[i] = io.Pipe()
	}
	var files []func() error
	for i, st := range p {
		args, err := c.expandAliases(st)
		if err != nil {
			fmt.Fprintf(out.Stderr, "rvplay: %v\n", err)
			return 2
		}
		pr := &proc{c: c, args: args, assign: st.assigns, stderr: out.Stderr, out: out}
		switch {
		case st.heredoc != nil:
			pr.stdin = strings.NewReader(*st.heredoc)
		case st.stdinFile != "":
			data, err := c.readFile(st.stdinFile)
			if err != nil {
				fmt.Fprintf(out.Stderr, "rvplay: %s: No such file or directory\n", st.stdinFile)
				return 1
			}
			pr.stdin = bytes.NewReader(data)
		case pipeR[i] != nil:
			pr.stdin = pipeR[i]
		}
		switch {
		case st.stdout != "":
			buf := &bytes.Buffer{}
			pr.stdout = buf
			name, appendOut := st.stdout, st.appendOut
			files = append(files, func() error { return c.writeFile(name, buf.Bytes(), appendOut) })
		case pipeW[i] != nil:
			pr.stdout = pipeW[i]
		default:
			pr.stdout = out.Stdout
		}
		procs[i] = pr
	}
	status := make([]int, n)
	var wg sync.WaitGroup
	for i, pr := range procs {
		wg.Add(1)
		go func(i int, pr *proc) {
			defer wg.Done()
			status[i] = c.exec(ctx, pr)
			if pipeW[i] != nil {
				pipeW[i].Close() // the next stage reads to its end
			}
			if pipeR[i] != nil {
				pipeR[i].Close() // the previous stage's writes end, as with SIGPIPE
			}
		}(i, pr)
	}
	wg.Wait()
	for _, f := range files {
		if err := f(); err != nil {
			fmt.Fprintf(out.Stderr, "rvplay: %v\n", err)
			return 1
		}
	}
	return status[n-1]
}

// exec runs one command.
func (c *Console) exec(ctx context.Context, p *proc) (status int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(p.stderr, "rvplay: internal error: %v\n", r)
			status = 70
		}
	}()
	for _, a := range p.assign {
		name, value, _ := strings.Cut(a, "=")
		if len(p.args) == 0 {
			fmt.Fprintf(p.stderr, "rvplay: %s: shell variables are not supported\n", name)
			return 1
		}
		if !(name == "ETCDCTL_API" && value == "3") && !(name == "KUBE_EDITOR" || name == "EDITOR") {
			p.note("%s=%s has no effect in the lab: etcdctl always speaks the v3 API here, and kubectl edit opens the lab's editor", name, value)
		}
	}
	if len(p.args) == 0 {
		return 0
	}
	name, args := p.args[0], p.args[1:]
	p.args = args
	switch name {
	case "kubectl":
		return c.kubectl(ctx, p)
	case "etcdctl":
		return c.etcdctl(ctx, p)
	case "jq":
		return c.jq(p)
	case "grep":
		return c.grep(p)
	case "base64":
		return c.base64(p)
	case "cat":
		return c.cat(p)
	case "echo":
		return c.echo(p)
	case "alias":
		return c.alias(p)
	case "unalias":
		return c.unalias(p)
	case "export":
		return c.export(p)
	case "ls":
		return c.ls(p)
	case "rm":
		return c.rm(p)
	case "help":
		return c.help(p)
	case "clear":
		if p.out.Clear != nil {
			p.out.Clear()
		}
		return 0
	case "lab":
		return c.lab(ctx, p)
	case "sudo":
		p.note("sudo has no meaning in the lab; running the command as is")
		p.args = args
		if len(args) == 0 {
			return 0
		}
		return c.exec(ctx, &proc{c: c, args: args, stdin: p.stdin, stdout: p.stdout, stderr: p.stderr, out: p.out})
	}
	fmt.Fprintf(p.stderr, "rvplay: %s: command not found\n", name)
	p.note("the console runs %s; type help", strings.Join(builtinNames, ", "))
	return 127
}

var builtinNames = []string{"kubectl (k)", "etcdctl", "jq", "grep", "base64", "cat", "echo", "alias", "unalias", "export", "ls", "rm", "clear", "help", "lab load"}

// expandAliases replaces an unquoted command word that names an alias, as
// bash does (an alias whose value ends in a space also expands the next
// word; an alias is not expanded inside its own expansion).
func (c *Console) expandAliases(st *stage) ([]string, error) {
	args := st.args
	if len(args) == 0 || st.quoted0 {
		return args, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[string]bool{}
	for {
		v, ok := c.aliases[args[0]]
		if !ok || seen[args[0]] {
			return args, nil
		}
		seen[args[0]] = true
		words, err := splitWords(v)
		if err != nil {
			return nil, fmt.Errorf("alias %s: %v", args[0], err)
		}
		if len(words) == 0 {
			return args[1:], nil
		}
		args = append(words, args[1:]...)
	}
}

func (c *Console) alias(p *proc) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(p.args) == 0 {
		names := make([]string, 0, len(c.aliases))
		for n := range c.aliases {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(p.stdout, "alias %s=%s\n", n, shellQuote(c.aliases[n]))
		}
		return 0
	}
	status := 0
	for _, a := range p.args {
		name, value, ok := strings.Cut(a, "=")
		if !ok {
			v, found := c.aliases[name]
			if !found {
				fmt.Fprintf(p.stderr, "rvplay: alias: %s: not found\n", name)
				status = 1
				continue
			}
			fmt.Fprintf(p.stdout, "alias %s=%s\n", name, shellQuote(v))
			continue
		}
		c.aliases[name] = value
	}
	return status
}

func (c *Console) unalias(p *proc) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	status := 0
	for _, n := range p.args {
		if n == "-a" {
			c.aliases = map[string]string{}
			continue
		}
		if _, ok := c.aliases[n]; !ok {
			fmt.Fprintf(p.stderr, "rvplay: unalias: %s: not found\n", n)
			status = 1
			continue
		}
		delete(c.aliases, n)
	}
	return status
}

func (c *Console) export(p *proc) int {
	for _, a := range p.args {
		name, value, _ := strings.Cut(a, "=")
		if name == "ETCDCTL_API" && value == "3" {
			continue
		}
		p.note("export %s has no effect in the lab: the console keeps no environment (etcdctl speaks the v3 API, kubectl talks to this session)", a)
	}
	return 0
}

// shellQuote quotes s for bash's `alias` listing.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func (c *Console) help(p *proc) int {
	fmt.Fprint(p.stdout, helpText)
	return 0
}

const helpText = `The console runs kubectl and etcdctl against this lab's session, as the articles write them.

etcdctl get KEY [RANGE_END] [--prefix|--from-key] [--rev=N] [--limit=N] [--keys-only] [--count-only]
        [--print-value-only] [--sort-by=KEY|CREATE|MODIFY|VALUE|VERSION] [--order=ASCEND|DESCEND]
etcdctl put KEY VALUE [--prev-kv] [--ignore-value]       etcdctl del KEY [RANGE_END] [--prefix|--from-key] [--prev-kv]
etcdctl txn [-i]   (then the compares, the success and the failure requests, each ended by an empty line)
etcdctl watch KEY [RANGE_END] [--prefix] [--rev=N] [--prev-kv]   (Ctrl+C or Stop ends it)
etcdctl compaction REV [--physical]      etcdctl endpoint status
  -w simple|json|fields (|table for endpoint status); --endpoints, --cert, --key, --cacert are accepted:
  the console always talks to this session.
kubectl get|describe|create|apply|replace|patch|scale|edit|delete|rollout status ...
  -o json|yaml|wide|name|jsonpath=...|custom-columns=..., -w, --watch-only, --output-watch-events,
  -n NS, -A, -l SELECTOR, --show-managed-fields, --server-side, --force-conflicts, --field-manager=NAME,
  -f FILE|URL|- (- reads a heredoc or the lab's editor), --type merge|json|strategic -p PATCH,
  scale --replicas=N [--resource-version=RV] [--current-replicas=N]; get --raw '/api/v1/...?resourceVersion=N'
... | jq FILTER       ... | grep PATTERN       base64 -d      cat FILE      ... > FILE
alias e="etcdctl --endpoints ..."     lab load RATE SECONDS (update a ConfigMap RATE times a second)
`
