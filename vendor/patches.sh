#!/usr/bin/env bash
# vendor/CRATE is the published crate plus the patches in vendor/patches/CRATE, applied in
# the order of their file names (CRATE: v8x or oxc_parser, at the versions below). This
# script re-creates it from those two inputs.
#
#   vendor/patches.sh CRATE apply      fetch the published crate, apply the patches, write vendor/CRATE
#   vendor/patches.sh CRATE check      the same into a temporary directory; fail if vendor/CRATE differs
#   vendor/patches.sh CRATE manifest   rewrite vendor/patches/CRATE/IMPORT.sha256 from the published crate
#   vendor/patches.sh CRATE unpack DIR unpack the published crate, unpatched, into DIR
#
# The crate comes through cargo itself (a throwaway manifest that depends on the exact
# version, `cargo fetch`, then the .crate from cargo's download cache), so whatever registry
# cargo is configured with is used. `check` needs the network or a warm cache; the tidy test
# `tidy::vendored` checks the same offline against IMPORT.sha256.
#
# To move to another release: change its version below, run `unpack` into a scratch
# directory, apply each patch there (`git apply --directory` is not needed: paths are
# relative to the crate), refresh the ones that no longer apply, then `manifest` and `apply`.
set -euo pipefail

NAME=${1:-}
case "$NAME" in
  v8x) VERSION=149.4.0-rc.4 ;;
  oxc_parser) VERSION=0.146.0 ;;
  *)
    sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
shift
here="$(cd "$(dirname "$0")" && pwd)"
patches="$here/patches/$NAME"
target="$here/$NAME"

die() {
  echo "patches.sh $NAME: $*" >&2
  exit 1
}

# Prints the path of the published .crate, fetching it through cargo when not cached.
crate_file() {
  local scratch cargo_home found
  cargo_home="${CARGO_HOME:-$HOME/.cargo}"
  found=$(ls "$cargo_home"/registry/cache/*/"$NAME-$VERSION.crate" 2>/dev/null | head -n1 || true)
  if [ -z "$found" ]; then
    scratch=$(mktemp -d)
    mkdir -p "$scratch/src"
    : >"$scratch/src/lib.rs"
    cat >"$scratch/Cargo.toml" <<EOF
[package]
name = "vendor-import-probe"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
$NAME = "=$VERSION"
EOF
    (cd "$scratch" && cargo fetch --quiet) >&2
    rm -rf "$scratch"
    found=$(ls "$cargo_home"/registry/cache/*/"$NAME-$VERSION.crate" 2>/dev/null | head -n1 || true)
  fi
  [ -n "$found" ] || die "cargo fetched no $NAME-$VERSION.crate"
  echo "$found"
}

# unpack DIR: the published crate's files directly under DIR.
unpack() {
  local dir=$1 crate
  crate=$(crate_file)
  mkdir -p "$dir"
  tar -xzf "$crate" -C "$dir" --strip-components=1
  # cargo adds this marker when it unpacks into its own source cache; the .crate lacks it.
  rm -f "$dir/.cargo-ok"
}

# The patches, in application order.
series() {
  ls "$patches"/[0-9][0-9][0-9][0-9]-*.patch
}

# apply_all DIR: apply every patch to the crate in DIR; stop at the first that fails.
apply_all() {
  local dir=$1 patch
  for patch in $(series); do
    # GIT_CEILING_DIRECTORIES keeps git apply from treating DIR as part of an enclosing
    # repository, where it would resolve paths against that repository's root.
    (cd "$dir" && GIT_CEILING_DIRECTORIES="$(dirname "$dir")" git apply --whitespace=nowarn "$patch") ||
      die "$(basename "$patch") does not apply"
  done
}

# manifest DIR: sha256 of every file under DIR, one `hash  path` line each, sorted by path.
manifest() {
  (cd "$1" && find . -type f | sed 's|^\./||' | LC_ALL=C sort | xargs -d '\n' sha256sum)
}

cmd=${1:-}
case "$cmd" in
  apply)
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' EXIT
    unpack "$scratch/$NAME"
    apply_all "$scratch/$NAME"
    rm -rf "$target"
    mv "$scratch/$NAME" "$target"
    echo "wrote $target: $NAME $VERSION and $(series | wc -l) patches"
    ;;
  check)
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' EXIT
    unpack "$scratch/$NAME"
    apply_all "$scratch/$NAME"
    diff -r "$scratch/$NAME" "$target" || die "$target differs from $NAME $VERSION and its patches"
    echo "ok: $target is $NAME $VERSION and $(series | wc -l) patches"
    ;;
  manifest)
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' EXIT
    unpack "$scratch/$NAME"
    manifest "$scratch/$NAME" >"$patches/IMPORT.sha256"
    echo "wrote $patches/IMPORT.sha256 ($(wc -l <"$patches/IMPORT.sha256") files)"
    ;;
  unpack)
    [ $# -eq 2 ] || die "usage: $0 $NAME unpack DIR"
    unpack "$2"
    ;;
  *)
    sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
    [ -z "$cmd" ] || exit 2
    ;;
esac
