"""markdown_links.py SOURCE_DIR: every relative link of the repository's Markdown files
resolves. A link to a file or folder must name one that the repository holds; a link with
a #fragment must name a heading of its target (as GitHub makes anchors of headings).
Links to other sites are not followed (the tests run offline), and nothing inside code
(fenced blocks, `spans`) is a link. Prints each broken link as FILE:LINE and exits 1 on
any; exits 0 when all resolve.
"""

import re
import subprocess
import sys
from pathlib import Path

# [text](target) and ![alt](target), with an optional "title"; <target> in angle brackets.
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]*)(?:\s+\"[^\"]*\")?\s*\)")
# [label]: target
REFERENCE_DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(\S+)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def markdown_files(root):
    """The Markdown files git tracks (all of them when `root` is not a work tree)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--", "*.md"], cwd=root, check=True,
                             capture_output=True).stdout.decode()
        return sorted(root / p for p in out.split("\0") if p)
    except (OSError, subprocess.CalledProcessError):
        return sorted(p for p in root.rglob("*.md") if "build" not in p.relative_to(root).parts
                      and "node_modules" not in p.parts)


def prose_lines(text, blank_code=True):
    """(line number, line) of the lines outside fenced code blocks, code spans blanked
    unless not `blank_code`."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        opened = FENCE.match(line)
        if fence:
            if opened and opened.group(1) == fence:
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        yield number, re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)), line) if blank_code else line


def slug(heading):
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped (but for
    '-' and '_'), spaces as '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    """The anchors of a Markdown file's headings (repeated ones numbered, as GitHub does)."""
    if path not in cache:
        seen = {}
        found = set()
        for _, line in prose_lines(path.read_text(encoding="utf-8"), blank_code=False):
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else "%s-%d" % (base, n))
        cache[path] = found
    return cache[path]


def problems_of(path, root):
    text = path.read_text(encoding="utf-8")
    for number, line in prose_lines(text):
        targets = [m.group(1) for m in INLINE_LINK.finditer(line)]
        m = REFERENCE_DEFINITION.match(line)
        if m:
            targets.append(m.group(1))
        for target in targets:
            target = target.strip("<>")
            if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, mailto:, ...
                continue
            file_part, _, fragment = target.partition("#")
            dest = path if not file_part else (path.parent / file_part)
            where = "%s:%d" % (path.relative_to(root), number)
            try:
                dest.resolve().relative_to(root.resolve())
            except ValueError:
                yield "%s: %s leaves the repository" % (where, target)
                continue
            if not dest.exists():
                yield "%s: %s: no such file" % (where, target)
                continue
            if fragment and dest.suffix == ".md" and fragment not in anchors(dest):
                yield "%s: %s: %s has no heading with the anchor #%s" % (
                    where, target, dest.relative_to(root), fragment)


def main():
    root = Path(sys.argv[1]).resolve()
    files = markdown_files(root)
    problems = [p for f in files for p in problems_of(f, root)]
    for p in problems:
        print(p)
    if problems:
        print("%d broken links in the repository's Markdown files" % len(problems))
        return 1
    print("links: every relative link of %d Markdown files resolves" % len(files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
