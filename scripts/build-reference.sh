#!/usr/bin/env bash
# Builds the reference servers from the Go module proxy into
# test/kubediff/.bin: a real etcd 3.6 and k8s.io/sample-apiserver (the
# differential test in test/kubediff) and a real kube-apiserver (issue 15's
# proof in test/clientgo and test/kubectl), so that no `go test` pays for
# a cold build (minutes each on two cores) inside its timeout. Rerunning is
# cheap: a binary is rebuilt only when its wrapper module changes.
set -euo pipefail
cd "$(dirname "$0")/../test/kubediff"
exec go test -count=1 -timeout 50m -run '^TestReferenceBuilds$' -v .
