#!/usr/bin/env python3
"""Checks the relative links of Markdown files: every [text](target) whose
target is not a URL must name an existing file or folder, and a #anchor must
name a heading of the target file (GitHub's anchors: lower case, punctuation
but '-' and '_' dropped, spaces as '-', repeats numbered -1, -2, ...).
Links and headings inside code blocks and code spans are ignored.

Nothing may point outside the repository, in prose, code spans or code
blocks: a link with a scheme (https:, mailto:, ...), a relative link that
climbs above ROOT, any http://, https:// or ftp:// address, and any path
through the folder beside the repository (../shared) are reported as
"leaves the repository".

usage: check_links.py ROOT FILE_OR_GLOB...   (paths relative to ROOT)
Prints each broken link as "FILE:LINE: link TARGET: why" and exits 1 if
there is one; otherwise prints how many links were checked."""
import glob
import os
import re
import sys

LINK = re.compile(r'(?<!\!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+"[^"]*")?\)')
IMAGE = re.compile(r'!\[[^\]]*\]\(([^()\s]+)\)')


def prose_lines(path, keep_spans=False):
    """Yields (line number, text) of the lines outside fenced code blocks,
    with code spans blanked (kept with keep_spans, for headings)."""
    fence = None
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            m = re.match(r'^\s*(```+|~~~+)', line)
            if m:
                if fence is None:
                    fence = m.group(1)
                    continue
                if m.group(1).startswith(fence):
                    fence = None
                    continue
            if fence is not None:
                continue
            yield n, line if keep_spans else re.sub(
                r'`[^`]*`', lambda s: ' ' * len(s.group(0)), line)


OUTSIDE = re.compile(r'(?:https?|ftp)://[^\s`)>\]]*|(?<![\w.])(?:\.\./)+shared\b[^\s`)>\]]*')


def outside_references(path):
    """Yields (line number, reference) of every address or path of PATH,
    code included, that leaves the repository."""
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            for m in OUTSIDE.finditer(line):
                yield n, m.group(0)


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r'[^\w\- ]', '', s)
    return s.replace(' ', '-')


_anchors = {}


def anchors(path):
    if path not in _anchors:
        seen = {}
        found = set()
        for _, line in prose_lines(path, keep_spans=True):
            m = re.match(r'^(#{1,6})\s+(.*?)\s*#*\s*$', line)
            if not m:
                continue
            base = slug(m.group(2))
            k = seen.get(base, 0)
            seen[base] = k + 1
            found.add(base if k == 0 else '%s-%d' % (base, k))
        _anchors[path] = found
    return _anchors[path]


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    root = sys.argv[1]
    files = []
    for pattern in sys.argv[2:]:
        matches = sorted(glob.glob(os.path.join(root, pattern)))
        if not matches:
            print('check_links: %s: no such file' % pattern)
            return 1
        files += matches
    broken = 0
    checked = 0
    root_real = os.path.realpath(root)
    for path in files:
        rel = os.path.relpath(path, root)
        reports = []  # (line, message), printed in line order
        for n, ref in outside_references(path):
            reports.append((n, 'reference %s: leaves the repository' % ref))
        for n, line in prose_lines(path):
            targets = [m.group(1) for m in LINK.finditer(line)]
            targets += [m.group(1) for m in IMAGE.finditer(line)]
            for target in targets:
                if re.match(r'^[a-z][a-z0-9+.-]*:', target):
                    if not OUTSIDE.match(target):  # reported above otherwise
                        reports.append((n, 'link %s: leaves the repository' % target))
                    continue
                checked += 1
                file_part, _, anchor = target.partition('#')
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) \
                    if file_part else path
                why = None
                real = os.path.realpath(dest)
                if real != root_real and not real.startswith(root_real + os.sep):
                    why = 'leaves the repository'
                elif not os.path.exists(dest):
                    why = 'no such file %s' % os.path.relpath(dest, root)
                elif anchor:
                    if os.path.isdir(dest) or not dest.endswith('.md'):
                        why = 'an anchor into something that is not a Markdown file'
                    elif anchor not in anchors(dest):
                        why = 'no heading #%s in %s' % (anchor, os.path.relpath(dest, root))
                if why:
                    reports.append((n, 'link %s: %s' % (target, why)))
        for n, message in sorted(reports, key=lambda r: r[0]):
            broken += 1
            print('%s:%d: %s' % (rel, n, message))
    if broken:
        print('check_links: %d broken of %d relative links in %d files '
              '(a reference that leaves the repository counts as broken)'
              % (broken, checked, len(files)))
        return 1
    print('check_links: %d relative links in %d files resolve' % (checked, len(files)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
