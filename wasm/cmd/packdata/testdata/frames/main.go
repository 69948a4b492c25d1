// Command frames prints what the runtime says of its caller and of that
// one's: packdata's test runs it with and without their symbols.
package main

import (
	"fmt"
	"path/filepath"
	"runtime"
)

func main() {
	for skip := range 2 {
		pc, file, line, _ := runtime.Caller(skip)
		fmt.Printf("%s at %s:%d\n", runtime.FuncForPC(pc).Name(), filepath.Base(file), line)
	}
}
