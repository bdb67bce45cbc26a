#!/bin/sh
# readme.quick_start: reads README.md's Quick start the way CI does (.ci/run:
# the first two ```sh blocks of the "## Quick start" section) and checks that
# it finds the set-up and the test command, each an executable script of the
# tree. Usage: check_quick_start.sh ROOT
root=$1
cmds=$(awk '
  /^## / { inqs = ($0 ~ /^## Quick start/) }
  inqs && /^```sh$/ { inblk = 1; next }
  inblk && /^```$/ { inblk = 0; next }
  inqs && inblk && NF { print }
' "$root/README.md" | head -2)
n=$(printf '%s\n' "$cmds" | grep -c .)
if [ "$n" -ne 2 ]; then
  echo "readme.quick_start: README.md's Quick start gives $n commands, CI needs 2"
  exit 1
fi
printf '%s\n' "$cmds" | while read -r cmd; do
  script=${cmd%% *}
  if [ ! -x "$root/$script" ]; then
    echo "readme.quick_start: '$cmd': $script is not an executable file of the tree"
    exit 1
  fi
  echo "readme.quick_start: command: $cmd"
done || exit 1
echo "readme.quick_start: set-up and test commands found"
