#!/usr/bin/env bash
# Refresh the vendored upstream trees in third_party/ from their repositories at
# the commits pinned in third_party/VERSIONS (needs network access and git).
#   tools/update_third_party.sh            every tree
#   tools/update_third_party.sh lwip ...   only the trees named
# For each tree: clone the repository, check out the pinned commit, copy the
# files third_party/MANIFEST.sha256 lists for that tree into a fresh copy, and
# replace the tree with it; then rewrite the manifest's hashes. A file the
# manifest lists that the commit does not have stops the script (nothing is
# replaced); git shows what changed afterwards.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
tp=$here/third_party
manifest=$tp/MANIFEST.sha256
command -v git >/dev/null || { echo "update_third_party: git not found" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

want=("$@")
refresh() { # refresh TREE REPO COMMIT
  local tree=$1 repo=$2 commit=$3 src=$work/$1.git dst=$work/$1
  echo "update_third_party: $tree at $commit from $repo"
  git init -q "$src"
  git -C "$src" fetch -q --depth 1 "$repo" "$commit"
  git -C "$src" -c advice.detachedHead=false checkout -q FETCH_HEAD
  mkdir -p "$dst"
  local n=0 path
  while read -r _ path; do
    case $path in "$tree"/*) ;; *) continue ;; esac
    local rel=${path#"$tree"/}
    if [ ! -f "$src/$rel" ]; then
      echo "update_third_party: $tree@$commit has no $rel (listed in MANIFEST.sha256); nothing replaced" >&2
      exit 1
    fi
    mkdir -p "$dst/$(dirname "$rel")"
    cp "$src/$rel" "$dst/$rel"
    n=$((n + 1))
  done <"$manifest"
  [ "$n" -gt 0 ] || { echo "update_third_party: MANIFEST.sha256 lists no file of $tree" >&2; exit 1; }
  echo "update_third_party: $tree: $n files"
}

while read -r tree repo commit; do
  case $tree in ''|'#'*) continue ;; esac
  if [ ${#want[@]} -gt 0 ] && [[ ! " ${want[*]} " == *" $tree "* ]]; then continue; fi
  refresh "$tree" "$repo" "$commit"
  rm -rf "${tp:?}/$tree"
  mv "$work/$tree" "$tp/$tree"
done <"$tp/VERSIONS"

# The manifest: every file of every tree, sorted, with its SHA-256.
trees=$(awk '!/^#/ && NF {print $1}' "$tp/VERSIONS")
# shellcheck disable=SC2086
(cd "$tp" && find $trees -type f | LC_ALL=C sort | xargs sha256sum) >"$manifest.new"
mv "$manifest.new" "$manifest"
echo "update_third_party: done; review with: git -C $here status third_party"
