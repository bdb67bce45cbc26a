#!/bin/sh
# Doxygen input filter for lci.hpp (docs/Doxyfile.in, FILTER_PATTERNS): the
# header's comments are plain // comments; this shows them to Doxygen as
# documentation without changing a line number. The opening comment becomes
# the file's description, a comment line before a declaration documents it,
# a trailing "// ..." after a member documents that member, and the
# "// ---- section ----" rulers stay plain comments.
exec awk '
  NR == 1 { header = 1 }
  NR == 1 && /^\/\/ lci\.hpp - / { sub(/^\/\/ lci\.hpp - /, "/// \\file lci.hpp "); print; next }
  header && /^\/\// { sub(/^\/\/ ?/, "/// "); print; next }
  { header = 0 }
  /^[ \t]*\/\/ ----/ { print; next }
  /^[ \t]*\/\/( |$)/ { sub(/\/\//, "///"); print; next }
  /;[ \t]+\/\/ / { sub(/;[ \t]+\/\/ /, "; ///< "); print; next }
  { print }
' "$1"
