#!/usr/bin/env bash
# markdown_links_catch.sh PYTHON: markdown_links.py finds what it must, and only that: in a
# folder of Markdown files with three broken links (a missing file, a missing heading, a
# missing heading of this file) and links that resolve (a file, a folder, a heading with
# code and punctuation, a repeated heading, links inside code), it reports the three.
set -euo pipefail
python=${1:?usage: markdown_links_catch.sh PYTHON}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/docs/sub"
cat >"$work/docs/a.md" <<'MD'
# A page

## The checker: `--mode check`

## Notes

## Notes

See [b](b.md), [the folder](sub/), [the checker](#the-checker---mode-check),
[the second notes](#notes-1) and [b's part](b.md#part-two).
Broken: [gone](missing.md), [no part](b.md#part-three) and [no anchor](#nowhere).
Not links: `[x](nothing.md)`, and a site: [site](https://example.org/x.md).

```
[in code](neither.md)
```
MD
printf '# B\n\n## Part two\n' >"$work/docs/b.md"
printf 'kept\n' >"$work/docs/sub/file.txt"

set +e
out=$("$python" "$here/markdown_links.py" "$work")
status=$?
set -e
printf '%s\n' "$out"
[ $status -eq 1 ] || { echo "FAIL: exit $status, not 1"; exit 1; }
for want in "docs/a.md:11: missing.md: no such file" "docs/a.md:11: b.md#part-three:" "docs/a.md:11: #nowhere:"; do
  grep -F -e "$want" <<<"$out" >/dev/null || { echo "FAIL: not reported: $want"; exit 1; }
done
n=$(grep -c '^docs/' <<<"$out")
[ "$n" -eq 3 ] || { echo "FAIL: $n links reported, not 3"; exit 1; }
echo "markdown_links.py reports the 3 broken links and nothing else"
