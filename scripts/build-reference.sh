#!/usr/bin/env bash
# Builds the reference servers of the differential test in test/kubediff
# (a real etcd 3.6 and k8s.io/sample-apiserver, from the Go module proxy)
# into test/kubediff/.bin, so that the first `go test` there does not pay
# for the cold build (several minutes on two cores). Rerunning is cheap:
# a binary is rebuilt only when its wrapper module changes.
set -euo pipefail
cd "$(dirname "$0")/../test/kubediff"
exec go test -count=1 -timeout 40m -run '^TestReferenceBuilds$' -v .
