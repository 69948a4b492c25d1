// Command frames prints what the runtime says of its caller: packdata's
// test runs it with and without the function names.
package main

import (
	"fmt"
	"path/filepath"
	"runtime"
)

func main() {
	pc, file, line, _ := runtime.Caller(0)
	fmt.Printf("function %q at %s:%d\n", runtime.FuncForPC(pc).Name(), filepath.Base(file), line)
}
