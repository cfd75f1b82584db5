#!/usr/bin/env python3
"""Every internal link of the docs resolves: run by test/e2e/doc_examples.sh.

Checks, from the repository root given as the first argument (default: the
current directory):
  - Markdown links [text](target) in README.md, doc/**/*.md, debian/**/*.md
    and test/**/*.md: a relative target names an existing file, and a
    #fragment names a heading of that page, as GitHub makes its anchors
    (lower case; punctuation but '-' and '_' dropped; spaces to '-'; a
    repeated heading gets -1, -2, ...);
  - doc citations in comments of src/, sql/, test/, debian/ and the
    Makefile: doc/PAGE.md#anchor, and doc/PAGE.md, "Section" (or
    doc/PAGE.md "Section"), whose page must exist and whose section must
    be a heading of it, or a paragraph's bold lead (the quoted words,
    lower-cased, are its text or its start).  Released install and update
    scripts (sql/neardup--*.sql but the one to the control file's
    default_version) are never edited, and not checked.
Prints one line per broken link, "FILE:LINE: what", and exits 1 if any.
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else '.')
FENCE = re.compile(r'^\s*(```|~~~)')
HEADING = re.compile(r'^(#{1,6})\s+(.*?)\s*#*\s*$')
LINK = re.compile(r'\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+(?:\([^()]*\))?[^()\s]*)(?:\s+"[^"]*")?\)')


def slug(text):
    text = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', text)   # a link in a heading: its text
    text = text.strip().lower()
    text = re.sub(r'[^\w\- ]', '', text)
    return text.replace(' ', '-')


_headings = {}


def headings(path):
    """(anchors, heading texts) of a Markdown page, fenced blocks skipped."""
    if path not in _headings:
        anchors, texts, seen = set(), [], {}
        infence = False
        with open(path, encoding='utf-8') as f:
            for line in f:
                if FENCE.match(line):
                    infence = not infence
                    continue
                m = not infence and HEADING.match(line)
                if m:
                    base = slug(m.group(2))
                    n = seen.get(base, 0)
                    seen[base] = n + 1
                    anchors.add(base if n == 0 else f'{base}-{n}')
                    texts.append(re.sub(r'[`*]', '', m.group(2)).lower())
                # a paragraph's bold lead, **Long runs: sub-tables.**, is
                # cited as a section too
                b = not infence and re.match(r'^\*\*([^*]+)\*\*', line)
                if b:
                    texts.append(re.sub(r'`', '', b.group(1)).lower())
                # explicit anchors: <a name="x"></a> or <a id="x">
                for a in re.findall(r'<a\s+(?:name|id)="([^"]+)"', line):
                    anchors.add(a)
        _headings[path] = (anchors, texts)
    return _headings[path]


errors = []


def check_target(src, lineno, base_dir, target):
    if re.match(r'^[a-z][a-z0-9+.-]*:', target) or target.startswith('//'):
        return          # http:, https:, mailto: ...
    path, _, frag = target.partition('#')
    dest = os.path.normpath(os.path.join(base_dir, path)) if path else src
    if not os.path.exists(dest):
        errors.append(f'{os.path.relpath(src, ROOT)}:{lineno}: {target}: no such file')
        return
    if frag and dest.endswith('.md'):
        if frag not in headings(dest)[0]:
            errors.append(f'{os.path.relpath(src, ROOT)}:{lineno}: {target}: no heading with that anchor in {os.path.relpath(dest, ROOT)}')


def markdown_files():
    yield os.path.join(ROOT, 'README.md')
    for top in ('doc', 'debian', 'test'):
        for d, dirs, files in os.walk(os.path.join(ROOT, top)):
            for f in sorted(files):
                if f.endswith('.md'):
                    yield os.path.join(d, f)


for md in markdown_files():
    infence = False
    with open(md, encoding='utf-8') as f:
        for i, line in enumerate(f, 1):
            if FENCE.match(line):
                infence = not infence
                continue
            if infence:
                continue
            line = re.sub(r'`[^`]*`', '', line)   # code spans are not links
            for target in LINK.findall(line):
                check_target(md, i, os.path.dirname(md), target)

# Citations in code comments: doc/PAGE.md#anchor and doc/PAGE.md, "Section".
CITE_ANCHOR = re.compile(r'\b(doc/[\w/.-]+\.md)#([\w-]+)')
CITE_SECTION = re.compile(r'\b(doc/[\w/.-]+\.md),?\s*(?:\n\s*(?:\*|--|#)?\s*)?"([^"]+)"')
CITE_PAGE = re.compile(r'\b(doc/[\w/-]+\.md)\b')
with open(os.path.join(ROOT, 'neardup.control'), encoding='utf-8') as f:
    version = re.search(r"default_version\s*=\s*'([^']+)'", f.read()).group(1)
code_files = [os.path.join(ROOT, 'Makefile')]
for top in ('src', 'sql', 'test', 'debian'):
    for d, dirs, files in os.walk(os.path.join(ROOT, top)):
        for f in sorted(files):
            if f.endswith('.md') or f == os.path.basename(__file__):
                continue
            if re.match(r'neardup--.*\.sql$', f) and not f.endswith(f'--{version}.sql'):
                continue
            code_files.append(os.path.join(d, f))
for cf in code_files:
    try:
        with open(cf, encoding='utf-8') as f:
            text = f.read()
    except (UnicodeDecodeError, OSError):
        continue
    if 'doc/' not in text:
        continue

    def lineno(pos):
        return text.count('\n', 0, pos) + 1
    for m in CITE_PAGE.finditer(text):
        if not os.path.exists(os.path.join(ROOT, m.group(1))):
            errors.append(f'{os.path.relpath(cf, ROOT)}:{lineno(m.start())}: {m.group(1)}: no such file')
    for m in CITE_ANCHOR.finditer(text):
        page = os.path.join(ROOT, m.group(1))
        if os.path.exists(page) and m.group(2) not in headings(page)[0]:
            errors.append(f'{os.path.relpath(cf, ROOT)}:{lineno(m.start())}: {m.group(1)}#{m.group(2)}: no heading with that anchor')
    for m in CITE_SECTION.finditer(text):
        page = os.path.join(ROOT, m.group(1))
        want = re.sub(r'\s*\n\s*(?:\*|--|#)?\s*', ' ', m.group(2))
        want = re.sub(r'\s+', ' ', want).strip().lower()
        if os.path.exists(page) and not any(t == want or t.startswith(want) for t in headings(page)[1]):
            errors.append(f'{os.path.relpath(cf, ROOT)}:{lineno(m.start())}: {m.group(1)}, "{m.group(2)}": no such section')

for e in errors:
    print(e)
sys.exit(1 if errors else 0)
