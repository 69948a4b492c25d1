#!/usr/bin/env bash
# Installs what the tests need beyond Go, and only what is missing:
#   - etcd-server, etcd-client: the real etcd the differential tests compare against;
#   - jq: the real jq 1.6 the console's jq is compared with (test/consolediff);
#   - chromium: the browser Playwright drives (/usr/bin/chromium; Playwright's
#     own browser download is impossible on these machines);
#   - fonts-wqy-zenhei: Chinese and Korean glyphs, so that the lab's
#     screenshots in those languages are legible;
#   - nodejs/npm (Node >= 20, which @playwright/test requires);
#   - playwright/node_modules, by `npm ci` from the committed lockfile.
# Idempotent: when everything is present it only looks, and takes well under a
# second. Debian packages come from apt (non-interactive; sudo only when not
# root); `apt-get update` runs once, and only when something must be installed.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "ensure-deps: $*" >&2; }

# Packages to install, keyed by the file that proves them present.
declare -A package_for=(
	[/usr/bin/etcd]=etcd-server
	[/usr/bin/etcdctl]=etcd-client
	[/usr/bin/jq]=jq
	[/usr/bin/chromium]=chromium
	[/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc]=fonts-wqy-zenhei
)

node_ok() {
	command -v node >/dev/null && command -v npm >/dev/null || return 1
	local major
	major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null) || return 1
	[ "$major" -ge 20 ]
}

missing=()
for file in "${!package_for[@]}"; do
	[ -e "$file" ] || missing+=("${package_for[$file]}")
done
if ! command -v node >/dev/null; then
	missing+=(nodejs)
fi
if ! command -v npm >/dev/null; then
	missing+=(npm)
fi

if [ "${#missing[@]}" -gt 0 ]; then
	if ! command -v apt-get >/dev/null; then
		log "missing ${missing[*]} and no apt-get here: install them with your package manager"
		exit 1
	fi
	sudo=()
	if [ "$(id -u)" -ne 0 ]; then
		if ! command -v sudo >/dev/null; then
			log "missing ${missing[*]}: need root or sudo to install them"
			exit 1
		fi
		sudo=(sudo -n)
	fi
	log "installing ${missing[*]}"
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

for file in "${!package_for[@]}"; do
	if [ ! -e "$file" ]; then
		log "${package_for[$file]} was installed but $file is still missing"
		exit 1
	fi
done
if ! node_ok; then
	log "Node.js >= 20 with npm is required by @playwright/test; found $(node --version 2>/dev/null || echo none)"
	exit 1
fi

# playwright/node_modules is stale when the lockfile changed since the last
# `npm ci`: remember the lockfile's hash next to what it installed.
lock=playwright/package-lock.json
stamp=playwright/node_modules/.rvplay-lock.sha256
want=$(sha256sum "$lock" | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] || [ ! -x playwright/node_modules/.bin/playwright ]; then
	log "npm ci in playwright/"
	# @playwright/test never downloads a browser on install; the variable keeps
	# it that way should a dependency start to.
	(cd playwright && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
	echo "$want" >"$stamp"
fi
