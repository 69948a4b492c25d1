#!/usr/bin/env bash
# Writes dist/: the offline playground as plain files (index.html, lab.html,
# static/ with the WebAssembly engine, raw and precompressed). Any static
# file server can host it; nothing in it needs the rvplay server.
#   python3 -m http.server -d dist 8000   then open http://localhost:8000/
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist}"
./scripts/build-wasm.sh
go run ./web/internal/staticgen -out "$out"
echo "build-static: wrote $out/ ($(du -sh "$out" | cut -f1))"
