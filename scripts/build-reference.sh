#!/usr/bin/env bash
# Builds the reference servers from the Go module proxy into
# test/kubediff/.bin: a real etcd 3.6 and k8s.io/sample-apiserver (the
# differential test in test/kubediff) and a real kube-apiserver (issue 15's
# proof in test/clientgo and test/kubectl), so that no `go test` pays for
# a cold build (minutes each on two cores) inside its timeout. Rerunning is
# cheap: a binary is rebuilt only when its wrapper module changes.
#
# One go test per program, each with a timeout of its own: the timeout
# guards against a hang, and on two cores shared with other work a cold
# build can take 25 minutes (sample-apiserver did at load 20-40, and the
# three in one go test passed 50 minutes).
set -euo pipefail
cd "$(dirname "$0")/../test/kubediff"
for ref in etcd36 sampleapiserver kube-apiserver; do
	go test -count=1 -timeout 45m -run "^TestReferenceBuilds\$/^${ref}\$" -v .
done
