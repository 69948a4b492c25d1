//go:build !(js && wasm)

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
)

func runNative() {
	ops := flag.String("ops", "", "comma-separated ops (default: all)")
	warmup := flag.Bool("warmup", true, "run each op once untimed first")
	flag.Parse()
	names := []string{}
	for _, op := range Ops {
		names = append(names, op.Name)
	}
	if *ops != "" {
		names = strings.Split(*ops, ",")
	}
	out := map[string]float64{}
	for _, name := range names {
		if *warmup {
			if _, err := Run(name, 0); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		ns, err := Run(name, 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		out[name] = ns
	}
	json.NewEncoder(os.Stdout).Encode(out)
}

func main() { runNative() }
