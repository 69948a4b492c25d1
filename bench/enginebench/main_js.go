//go:build js && wasm

package main

import (
	"runtime/debug"
	"syscall/js"

	"github.com/rvplay/rvplay/wasm/wasmgc"
)

func main() {
	wasmgc.Tune() // as the lab (wasm/main.go) runs
	ns := js.Global().Get("Object").New()
	names := []any{}
	for _, op := range Ops {
		names = append(names, op.Name)
	}
	ns.Set("ops", js.ValueOf(names))
	ns.Set("run", js.FuncOf(func(this js.Value, args []js.Value) any {
		name, n := args[0].String(), 0
		if len(args) > 1 && args[1].Type() == js.TypeNumber {
			n = args[1].Int()
		}
		// A Promise: the op blocks on channels (watch delivery), which must
		// not happen inside the JS callback itself.
		return js.Global().Get("Promise").New(js.FuncOf(func(_ js.Value, pa []js.Value) any {
			resolve, reject := pa[0], pa[1]
			go func() {
				v, err := Run(name, n)
				if err != nil {
					reject.Invoke(js.Global().Get("Error").New(err.Error()))
					return
				}
				resolve.Invoke(v)
			}()
			return nil
		}))
	}))
	// gcPercent(p[, memoryLimitBytes]) → previous percent: GC tuning to
	// compare (GOGC and GOMEMLIMIT as the wasm main would set them).
	ns.Set("gcPercent", js.FuncOf(func(this js.Value, args []js.Value) any {
		if len(args) > 1 && args[1].Type() == js.TypeNumber {
			debug.SetMemoryLimit(int64(args[1].Float()))
		}
		return debug.SetGCPercent(args[0].Int())
	}))
	js.Global().Set("enginebench", ns)
	select {}
}
