// Command kine is k3s's etcd shim (github.com/k3s-io/kine), built from the
// module proxy for the gRPC benchmark's third system: etcd's API on SQLite
// as k3s runs it. It only wraps kine's own entry point.
package main

import (
	"context"
	"errors"
	"os"

	"github.com/k3s-io/kine/pkg/app"
	"github.com/sirupsen/logrus"
)

func main() {
	if err := app.New().Run(os.Args); err != nil && !errors.Is(err, context.Canceled) {
		logrus.Fatal(err)
	}
}
