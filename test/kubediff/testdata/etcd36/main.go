// Command etcd36 is a real etcd 3.6 server built from the module proxy.
// The differential test needs 3.6 rather than the machine's Debian etcd 3.4:
// the generic API server's watch-list (sendInitialEvents) asks etcd for
// watch progress notifications on demand (RequestWatchProgress), which 3.4
// lacks. It only wraps etcd's own entry point.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
