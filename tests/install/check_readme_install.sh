#!/bin/sh
# readme.install: README.md's "## Example" section, followed as a user
# follows it. The section's first ```c block is saved as ring.c and its first
# ```sh block (install to "$HOME/lci", PATH and PKG_CONFIG_PATH, cc with
# pkg-config and an rpath, lcrun) runs as written, with sh, in a folder whose
# `build` is this build tree and with HOME a scratch folder, in an
# environment without LD_LIBRARY_PATH. Then:
#   - the README's run printed both ranks' lines;
#   - ./ring started by hand (one rank, no launcher) finds liblci through
#     its rpath alone and loads the installed one;
#   - the same program linked without the rpath does not start (the error
#     the docs quote), unless a liblci is in the loader's own path;
#   - a CMake program (tests/install/consumer, find_package(LCI), LCI::lci)
#     built against the install starts from its build tree without
#     LD_LIBRARY_PATH (CMake's build RPATH; docs/user-guide.md).
# usage: check_readme_install.sh ROOT BUILD WORK CMAKE
set -u
root=$1 build=$2 work=$3 cmake=$4
fail() { echo "readme.install: FAILED: $*"; exit 1; }

rm -rf "$work"
mkdir -p "$work/home" "$work/checkout" || fail "cannot make $work"
ln -s "$build" "$work/checkout/build"
section() {  # the first ```$1 block of README.md's "## Example" section
  awk -v lang="$1" '
    /^## / { inex = ($0 == "## Example") }
    inex && !done && $0 == "```" lang { inblk = 1; next }
    inblk && /^```$/ { inblk = 0; done = 1; next }
    inblk { print }
  ' "$root/README.md"
}
section c >"$work/checkout/ring.c"
section sh >"$work/checkout/commands.sh"
[ -s "$work/checkout/ring.c" ] || fail "README.md's Example section has no \`\`\`c block"
[ -s "$work/checkout/commands.sh" ] || fail "README.md's Example section has no \`\`\`sh block"
grep -q 'cmake --install' "$work/checkout/commands.sh" ||
  fail "the Example's commands do not install (no 'cmake --install')"
echo "readme.install: the README's commands:"
sed 's/^/  /' "$work/checkout/commands.sh"

# A user's shell: HOME is the scratch folder, no LD_LIBRARY_PATH or
# PKG_CONFIG_PATH from this machine's environment, this build's cmake first.
user_env() {
  env -i HOME="$work/home" USER="${USER:-user}" LANG=C.UTF-8 \
    PATH="$(dirname "$cmake"):/usr/local/bin:/usr/bin:/bin" "$@"
}
out=$(cd "$work/checkout" && user_env sh -e ./commands.sh 2>&1)
rc=$?
printf '%s\n' "$out" | sed 's/^/  | /'
[ $rc -eq 0 ] || fail "the README's commands exited with $rc"
for line in 'rank 0: "hello from rank 1" (from rank 1)' 'rank 1: "hello from rank 0" (from rank 0)'; do
  printf '%s\n' "$out" | grep -qF "$line" || fail "the README's run did not print: $line"
done
echo "readme.install: the README's commands built and ran ring on 2 ranks"

prefix=$work/home/lci
lib=$(cd "$prefix/lib" 2>/dev/null && pwd -P) || fail "nothing installed in $prefix/lib"
cd "$work/checkout" || fail "no $work/checkout"
single=$(user_env ./ring 2>&1) || fail "./ring by hand, without LD_LIBRARY_PATH, does not start: $single"
printf '%s\n' "$single" | grep -qF 'rank 0: "hello from rank 0" (from rank 0)' ||
  fail "./ring by hand printed: $single"
loaded=$(user_env ldd ./ring | sed -n 's/.*liblci\.so[.0-9]* => \([^ ]*\).*/\1/p')
[ -n "$loaded" ] || fail "ldd finds no liblci for ./ring"
loaded=$(cd "$(dirname "$loaded")" && pwd -P)
[ "$loaded" = "$lib" ] || fail "./ring loads liblci from $loaded, not from the install ($lib)"
echo "readme.install: ./ring by hand (1 rank, no LD_LIBRARY_PATH) runs and loads liblci from the install"

flags=$(user_env PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs lci) ||
  fail "pkg-config does not know lci"
# shellcheck disable=SC2086
user_env cc -std=c99 ring.c $flags -o ring_no_rpath || fail "ring.c does not build without the rpath"
if err=$(user_env ./ring_no_rpath 2>&1); then
  echo "readme.install: note: a program without the rpath starts too (a liblci is in the loader's own path)"
else
  printf '%s\n' "$err" | grep -q 'liblci\.so\.[0-9]*: cannot open shared object file' ||
    fail "without the rpath the error is not the one the docs quote: $err"
  echo "readme.install: without the rpath: $err"
  single=$(user_env LD_LIBRARY_PATH="$prefix/lib" ./ring_no_rpath 2>&1) ||
    fail "without the rpath but with LD_LIBRARY_PATH the program does not start: $single"
  echo "readme.install: without the rpath, LD_LIBRARY_PATH=$prefix/lib makes it start"
fi

user_env "$cmake" -S "$root/tests/install/consumer" -B "$work/consumer" \
  -DCMAKE_PREFIX_PATH="$prefix" >"$work/consumer.log" 2>&1 &&
  user_env "$cmake" --build "$work/consumer" >>"$work/consumer.log" 2>&1 ||
  { cat "$work/consumer.log"; fail "the find_package(LCI) consumer does not build against the install"; }
single=$(user_env "$work/consumer/consumer" 2>&1) ||
  fail "the find_package(LCI) consumer does not start from its build tree: $single"
echo "readme.install: find_package(LCI) program, from its build tree: $single"
echo "readme.install: passed"
