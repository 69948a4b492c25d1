package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// envPrefix starts the environment variable of every flag: RVPLAY_ and the
// flag's name upper-cased with '-' as '_' (--max-sessions is
// RVPLAY_MAX_SESSIONS), so that a container or a systemd unit configures
// the server without a command line.
const envPrefix = "RVPLAY_"

// envName is the environment variable of flag name.
func envName(name string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// parseFlags parses args into fs, then sets every flag the command line did
// not set from its environment variable, if that is set: a flag on the
// command line wins over the environment. A repeatable flag takes its
// variable as one comma-separated list.
func parseFlags(fs *flag.FlagSet, args []string, lookupEnv func(string) (string, bool)) error {
	fs.Usage = func() { usage(fs.Output(), fs) }
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (every setting is a flag; --help lists them)", fs.Arg(0))
	}
	onCommandLine := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { onCommandLine[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil || onCommandLine[f.Name] {
			return
		}
		v, ok := lookupEnv(envName(f.Name))
		if !ok {
			return
		}
		if e := fs.Set(f.Name, v); e != nil {
			err = fmt.Errorf("%s=%q: %v", envName(f.Name), v, e)
		}
	})
	return err
}

// usage is --help: each flag with its environment variable, its default
// and what it does.
func usage(out io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(out, `Usage: rvplay [flags]

rvplay serves playground sessions over HTTP: per session the etcd v3 JSON
gateway (/s/<session>/v3/...) and the Kubernetes API (/s/<session>/...),
the lab's pages, /healthz, /livez, /readyz and /metrics.

Every flag can also be set in the environment, as %s and the flag's
name in upper case with '-' as '_' (%s for --addr); a flag given on
the command line wins over its variable.

`, envPrefix, envName("addr"))
	fs.VisitAll(func(f *flag.Flag) {
		kind, text := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if kind != "" {
			line += " " + kind
		}
		fmt.Fprintf(out, "%s\n    \t%s\n    \t(%s", line, strings.ReplaceAll(text, "\n", "\n    \t"), envName(f.Name))
		if d := f.DefValue; d != "" {
			if kind == "string" {
				d = fmt.Sprintf("%q", d)
			}
			fmt.Fprintf(out, "; default %s", d)
		}
		fmt.Fprintln(out, ")")
	})
}

// osEnv is the process environment, for parseFlags.
func osEnv(name string) (string, bool) { return os.LookupEnv(name) }
