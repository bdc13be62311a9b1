#!/usr/bin/env bash
# Dependency-checked compiles for the scripts that call the compiler directly
# (tools/freertos_build.sh, tools/lwip_build.sh, tools/cortex_m3_build.sh):
# an object is compiled again only when something it was built from changed.
#
#   . tools/cc.sh                 defines, for the script that sources it:
#     cc_one OBJ COMPILER ARGS... compile (ARGS hold -c SOURCE) into OBJ, or
#                                 nothing when OBJ is up to date
#     cc_all PREFIX COMPILER ARGS... -- SOURCES...
#                                 each source into PREFIX<name>.o (cc_one), as
#                                 many at a time as there are CPUs
#                                 ($RTS_BUILD_JOBS); fails if any fails
#     objs_of PREFIX SOURCES...   appends the objects cc_all makes of SOURCES
#                                 to the array objs
#     sync_tree FROM TO           makes TO a copy of FROM, writing only the
#                                 files whose content differs (a patched
#                                 copy of a source tree made anew each run
#                                 keeps its unchanged files' times)
#   tools/cc.sh OBJ COMPILER ARGS...         cc_one, from a shell or xargs
#   tools/cc.sh --each PREFIX COMPILER ARGS... SOURCE   one job of cc_all
#   tools/cc.sh --unchanged DIR COMMAND...
#                                 run COMMAND, a build into DIR that ran
#                                 before with the same sources; fail naming
#                                 each object under DIR it compiled again
#
# Up to date means: OBJ exists; OBJ.cmd holds exactly this command (the
# compiler's resolved path, size and time, every argument, one a line); and
# OBJ.d (the compiler's -MD list: the source and every header it read, system
# headers too) is complete and names no file that is missing or not older
# than OBJ (a file time's grain is coarse: the same time counts as changed). Anything else (no or a damaged OBJ.d, a different command, a header
# gone) compiles again. OBJ.cmd is written last, after a successful compile,
# and removed before one: a compile that failed or was killed is never taken
# for up to date. OBJ gets the time the compile started, so a file edited
# while it compiled is newer than it next time.

# __cc_key COMPILER ARGS...: the text OBJ.cmd holds for this command.
__cc_key() {
  local cc
  cc=$(command -v "$1") || { echo "cc.sh: compiler $1 not found" >&2; return 1; }
  stat -L -c '%n %s %Y' "$cc"
  printf '%s\n' "${@:2}"
}

# __cc_fresh OBJ KEY: OBJ is up to date for the command KEY.
__cc_fresh() {
  local obj=$1 key=$2 text="" deps dep
  [ -f "$obj" ] && [ -f "$obj.cmd" ] && [ -f "$obj.d" ] || return 1
  [ "$(<"$obj.cmd")" = "$key" ] || return 1
  IFS= read -r -d '' text <"$obj.d" || true
  # One rule, "OBJ: SOURCE HEADER... \" continued over lines, ending in a
  # newline; blanks in names escaped as "\ ". Anything else is damaged (a
  # file cut short ends without its newline or in a backslash).
  case $text in "$obj:"*$'\n') ;; *) return 1 ;; esac
  text=${text#"$obj:"}
  text=${text%$'\n'}
  text=${text//$'\\\n'/ }
  text=${text//'\ '/$'\x01'}
  case $text in *\\* | *$'\n'*) return 1 ;; esac
  read -r -a deps <<<"$text" || true
  [ ${#deps[@]} -gt 0 ] || return 1
  for dep in "${deps[@]}"; do
    dep=${dep//$'\x01'/ }
    [ -e "$dep" ] && [ "$obj" -nt "$dep" ] || return 1
  done
  return 0
}

cc_one() {
  local obj=$1 key
  shift
  key=$(__cc_key "$@") || return 1
  __cc_fresh "$obj" "$key" && return 0
  rm -f "$obj.cmd" "$obj.d"
  : >"$obj.start"
  "$@" -MD -MF "$obj.d" -MT "$obj" -o "$obj" || { rm -f "$obj" "$obj.start"; return 1; }
  touch -r "$obj.start" "$obj"
  rm -f "$obj.start"
  printf '%s\n' "$key" >"$obj.cmd"
}

__cc_self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/cc.sh

cc_all() {
  local prefix=$1 cmd=()
  shift
  while [ "$1" != -- ]; do cmd+=("$1"); shift; done
  shift
  [ $# -gt 0 ] || return 0
  printf '%s\0' "$@" |
    xargs -0 -n1 -P "${RTS_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}" "$__cc_self" --each "$prefix" "${cmd[@]}"
}

objs_of() {
  local prefix=$1 f
  shift
  for f in "$@"; do objs+=("$prefix$(basename "${f%.c}").o"); done
}

sync_tree() {
  local from=$1 to=$2 f
  mkdir -p "$to"
  while IFS= read -r -d '' f; do
    if [ -d "$from/$f" ] && [ ! -L "$from/$f" ]; then
      [ -d "$to/$f" ] && [ ! -L "$to/$f" ] || { rm -rf "${to:?}/$f"; mkdir -p "$to/$f"; }
    elif ! cmp -s "$from/$f" "$to/$f"; then
      rm -rf "${to:?}/$f"
      cp -P "$from/$f" "$to/$f"
    fi
  done < <(cd "$from" && find . -mindepth 1 -print0)
  while IFS= read -r -d '' f; do
    [ -e "$from/$f" ] || [ -L "$from/$f" ] || rm -rf "${to:?}/$f"
  done < <(cd "$to" && find . -mindepth 1 -depth -print0)
}

# Run, not sourced (a sourced file may `return` at its top level).
if ! (return 0 2>/dev/null); then
  set -euo pipefail
  if [ "${1:-}" = --unchanged ]; then
    dir=${2:?usage: tools/cc.sh --unchanged DIR COMMAND...}
    shift 2
    objects() { find "$dir" -name '*.o' -printf '%p %T@\n' | sort; }
    before=$(objects)
    [ -n "$before" ] || { echo "cc.sh: no objects under $dir (the first build did not run)" >&2; exit 1; }
    "$@"
    again=$(comm -13 <(echo "$before") <(objects) | cut -d' ' -f1)
    if [ -n "$again" ]; then
      echo "cc.sh: FAILED: compiled again, although nothing changed:" $again >&2
      exit 1
    fi
    echo "cc.sh: $(wc -l <<<"$before") objects under $dir, none compiled again"
  elif [ "${1:-}" = --each ]; then
    prefix=$2
    shift 2
    src=${*: -1}
    set -- "${@:1:$#-1}"
    cc_one "$prefix$(basename "${src%.c}").o" "$@" -c "$src"
  else
    [ $# -ge 2 ] || { echo "usage: tools/cc.sh OBJ COMPILER ARGS... | --each PREFIX COMPILER ARGS... SOURCE" >&2; exit 2; }
    cc_one "$@"
  fi
fi
