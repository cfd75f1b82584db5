#!/usr/bin/env python3
"""Generate src/core/nd_unicode_table.h from the Unicode Character Database.

Run by developers, not by the build; the output is committed so that
fingerprints do not depend on the Unicode library of the build machine:

    python3 src/core/gen_unicode_table.py            # UCD in /usr/share/unicode
    python3 src/core/gen_unicode_table.py --ucd DIR  # another copy of the UCD

It needs Python 3 (standard library only) and the UCD text files, which
Debian's unicode-data package installs under /usr/share/unicode:
UnicodeData.txt, CaseFolding.txt, Scripts.txt, ScriptExtensions.txt,
PropertyValueAliases.txt, PropList.txt, DerivedNormalizationProps.txt,
DerivedAge.txt and (for the self-test) NormalizationTest.txt(.bz2).

Every property comes from those files, all of one UCD version, which is
checked and written into the table.  Python's own unicodedata module is NOT
used (it carries whatever version Python was built with): normalization
(NFD, NFKD, NFC, NFKC) is implemented here from the decomposition mappings
and combining classes of UnicodeData.txt, the Full_Composition_Exclusion
property and the Hangul algorithm, and is checked against every line of
NormalizationTest.txt before the table is written.

FOLDING RULES (also in nd_unicode.c; the user documentation copies them)
------------------------------------------------------------------------
For each code point c:

1. Class.
   a. SEP for anything that is not a letter, mark or number (General
      Category L*, M*, N*): spaces, punctuation, symbols, controls, format
      characters not listed under IGNORE, private use, surrogates,
      noncharacters, unassigned code points, and everything above U+10FFFF.
   b. IGNORE (dropped without ending the word) for assigned characters in
      the combining diacritical mark blocks U+0300-U+036F, U+1AB0-U+1AFF,
      U+1DC0-U+1DFF, U+20D0-U+20FF, U+FE20-U+FE2F, and for these format
      characters that occur inside words: U+00AD SOFT HYPHEN, U+200C ZWNJ,
      U+200D ZWJ, U+2060 WORD JOINER, U+FEFF ZWNBSP/BOM, and every
      Variation_Selector (PropList.txt: U+FE00-U+FE0F, U+E0100-U+E01EF and
      the Mongolian free variation selectors U+180B-U+180D, U+180F).
   c. SOLO (each character a token of its own) for letters, marks and
      numbers of the scripts written without spaces between words: Han
      (including CJK compatibility ideographs and all extensions),
      Hiragana, Katakana (including halfwidth forms), Bopomofo, Thai, Lao,
      Khmer, Myanmar and Yi.  Tibetan is not among them (it separates
      syllables with the tsheg).  A letter, mark or number whose Script is
      Common or Inherited is SOLO when its Script_Extensions
      (ScriptExtensions.txt) name only such scripts -- e.g. U+30FC KATAKANA-
      HIRAGANA PROLONGED SOUND MARK, its halfwidth form U+FF70, the voiced
      sound marks U+3099/U+309A and U+FF9E/U+FF9F, the kana repeat marks
      U+3031-U+3035, the ideographic closing mark U+3006, the ideographic
      tone marks U+302A-U+302D, the circled and parenthesized ideograph
      numbers (U+3280 -> U+4E00) and the counting rod numerals U+1D360-
      U+1D371.  `gen_unicode_table.py --verbose` lists them all.
   d. WORD for every other letter, mark or number (including Hangul, which
      is written with spaces, and the vowel signs of Indic scripts).

2. Folded form, for WORD and SOLO characters:
   a. s = NFKC(c).
   b. If c is a letter (L*) of the Latin, Greek or Cyrillic script, remove
      its diacritics: s = NFC(NFD(s) without the characters of the IGNORE
      mark blocks of 1b).  So U+00E9 -> e, U+0419 -> U+0418, U+1FB3
      (alpha with ypogegrammeni) -> alpha.  Other scripts keep their marks
      (Devanagari nukta, Hebrew points, Arabic harakat, Hangul is never
      decomposed).
   c. Full case folding (CaseFolding.txt statuses C and F; T is not used).
   d. s = NFKC(s) again.
   e. Drop every code point of s that is not a letter, mark or number.
   f. If s is then longer than ND_FOLD_MAX (4) code points (only the Arabic
      ligatures U+FDFA and U+FDFB), the folded form is the simple case
      folding of c alone (statuses C and S), i.e. c itself.
   g. If s is empty, the class becomes IGNORE (only U+037A GREEK
      YPOGEGRAMMENI, whose NFKC is a space and a combining mark).
   SEP and IGNORE entries have no folded form (n = 0).

The generator checks that folding is idempotent: every code point of a
folded form folds to itself with the same class.

TABLE LAYOUT
------------
Three arrays: stage1[cp >> SHIFT] is a block number; stage2[block << SHIFT |
(cp & MASK)] is an index into entries[], an array of distinct nd_fold
values; SHIFT is chosen to minimise the total size and identical blocks are
stored once.  So that the ideographs, syllables and case pairs do not each
need an entry of their own, a one-code-point folded form is stored relative
to the code point: such an entry has n == ND_FOLD_REL and cp[0] holds
(folded - cp) mod 2^32, which nd_unicode_lookup() turns into a real nd_fold.
"""

import argparse
import bz2
import os
import re
import sys

MAXCP = 0x110000
FOLD_MAX = 4

# Scripts written without spaces between words (Scripts.txt long names).
SOLO_SCRIPTS = {
    "Han", "Hiragana", "Katakana", "Bopomofo", "Thai", "Lao", "Khmer",
    "Myanmar", "Yi",
}
# Letters of these scripts lose their diacritics (rule 2b).
STRIP_SCRIPTS = {"Latin", "Greek", "Cyrillic"}

# Rule 1b.
IGNORE_MARK_BLOCKS = [
    (0x0300, 0x036F), (0x1AB0, 0x1AFF), (0x1DC0, 0x1DFF),
    (0x20D0, 0x20FF), (0xFE20, 0xFE2F),
]
IGNORE_FORMAT = [0x00AD, 0x200C, 0x200D, 0x2060, 0xFEFF]

# Hangul syllable algorithm (Unicode section 3.12).
S_BASE, L_BASE, V_BASE, T_BASE = 0xAC00, 0x1100, 0x1161, 0x11A7
L_COUNT, V_COUNT, T_COUNT = 19, 21, 28
N_COUNT = V_COUNT * T_COUNT
S_COUNT = L_COUNT * N_COUNT


def die(msg):
    sys.exit("gen_unicode_table.py: " + msg)


def ucd_lines(path):
    """Yields the data fields of a UCD file, comments stripped."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                yield [x.strip() for x in line.split(";")]


def cp_range(s):
    if ".." in s:
        a, b = s.split("..")
        return range(int(a, 16), int(b, 16) + 1)
    return range(int(s, 16), int(s, 16) + 1)


def file_version(path):
    """The version in a UCD file's first line, e.g. '# Scripts-15.0.0.txt'."""
    with open(path, encoding="utf-8") as f:
        m = re.match(r"#\s*\S+-(\d+\.\d+\.\d+)\.txt", f.readline())
    if not m:
        die("no version line in " + path)
    return m.group(1)


class UCD:
    def __init__(self, d):
        self.dir = d
        p = lambda name: os.path.join(d, name)

        versioned = ["CaseFolding.txt", "Scripts.txt", "ScriptExtensions.txt",
                     "PropertyValueAliases.txt", "PropList.txt",
                     "DerivedNormalizationProps.txt", "DerivedAge.txt"]
        versions = {n: file_version(p(n)) for n in versioned}
        if len(set(versions.values())) != 1:
            die("UCD files of different versions: %r" % versions)
        self.version = versions["Scripts.txt"]

        # UnicodeData.txt: category, combining class, decomposition.
        self.gc = ["Cn"] * MAXCP
        self.ccc = [0] * MAXCP
        self.decomp = {}        # cp -> (is_compat, [cps])
        first = None
        for fields in ucd_lines(p("UnicodeData.txt")):
            cp = int(fields[0], 16)
            name, gc, ccc, dm = fields[1], fields[2], int(fields[3]), fields[5]
            if name.endswith(", First>"):
                first = cp
                continue
            if name.endswith(", Last>"):
                for c in range(first, cp + 1):
                    self.gc[c] = gc
                    self.ccc[c] = ccc
                first = None
                continue
            self.gc[cp] = gc
            self.ccc[cp] = ccc
            if dm:
                compat = dm.startswith("<")
                if compat:
                    dm = dm.split(">", 1)[1]
                self.decomp[cp] = (compat, [int(x, 16) for x in dm.split()])

        # UnicodeData.txt has no version line: check that it assigns exactly
        # the code points DerivedAge.txt of the stated version lists.
        aged = set()
        for fields in ucd_lines(p("DerivedAge.txt")):
            aged.update(cp_range(fields[0]))
        # (DerivedAge also lists the noncharacters, which are Cn.)
        aged -= set(range(0xFDD0, 0xFDF0))
        aged -= {p + x for p in range(0, MAXCP, 0x10000) for x in (0xFFFE, 0xFFFF)}
        assigned = {c for c in range(MAXCP) if self.gc[c] != "Cn"}
        if aged != assigned:
            die("UnicodeData.txt does not match DerivedAge-%s.txt" % self.version)

        # Full_Composition_Exclusion (CompositionExclusions.txt + singletons
        # + non-starter decompositions).
        self.comp_excl = set()
        for fields in ucd_lines(p("DerivedNormalizationProps.txt")):
            if fields[1] == "Full_Composition_Exclusion":
                self.comp_excl.update(cp_range(fields[0]))
        self.compose_map = {}
        for cp, (compat, dm) in self.decomp.items():
            if not compat and len(dm) == 2 and cp not in self.comp_excl:
                self.compose_map[(dm[0], dm[1])] = cp

        # Case folding.
        self.fold_full = {}
        self.fold_simple = {}
        for fields in ucd_lines(p("CaseFolding.txt")):
            cp, status, mapping = int(fields[0], 16), fields[1], fields[2]
            m = [int(x, 16) for x in mapping.split()]
            if status in ("C", "F"):
                self.fold_full[cp] = m
            if status in ("C", "S"):
                self.fold_simple[cp] = m

        # Scripts and their extensions (which use the short names).
        long_name = {}
        for fields in ucd_lines(p("PropertyValueAliases.txt")):
            if fields[0] == "sc":
                long_name[fields[1]] = fields[2]
                long_name[fields[2]] = fields[2]
        self.script = ["Unknown"] * MAXCP
        for fields in ucd_lines(p("Scripts.txt")):
            for c in cp_range(fields[0]):
                self.script[c] = fields[1]
        self.scx = {}
        for fields in ucd_lines(p("ScriptExtensions.txt")):
            names = {long_name[x] for x in fields[1].split()}
            for c in cp_range(fields[0]):
                self.scx[c] = names

        self.variation_selector = set()
        for fields in ucd_lines(p("PropList.txt")):
            if fields[1] == "Variation_Selector":
                self.variation_selector.update(cp_range(fields[0]))

    def script_extensions(self, c):
        return self.scx.get(c, {self.script[c]})

    # -- normalization -------------------------------------------------

    def _decompose(self, c, compat, out):
        if S_BASE <= c < S_BASE + S_COUNT:
            s = c - S_BASE
            out.append(L_BASE + s // N_COUNT)
            out.append(V_BASE + (s % N_COUNT) // T_COUNT)
            if s % T_COUNT:
                out.append(T_BASE + s % T_COUNT)
            return
        d = self.decomp.get(c)
        if d and (compat or not d[0]):
            for x in d[1]:
                self._decompose(x, compat, out)
        else:
            out.append(c)

    def _reorder(self, s):
        """Canonical ordering: stable sort of each run of non-starters."""
        i = 0
        while i < len(s):
            if self.ccc[s[i]] == 0:
                i += 1
                continue
            j = i
            while j < len(s) and self.ccc[s[j]] != 0:
                j += 1
            s[i:j] = sorted(s[i:j], key=lambda x: self.ccc[x])
            i = j
        return s

    def _compose_pair(self, a, b):
        if L_BASE <= a < L_BASE + L_COUNT and V_BASE <= b < V_BASE + V_COUNT:
            return S_BASE + ((a - L_BASE) * V_COUNT + (b - V_BASE)) * T_COUNT
        if (S_BASE <= a < S_BASE + S_COUNT and (a - S_BASE) % T_COUNT == 0
                and T_BASE < b < T_BASE + T_COUNT):
            return a + (b - T_BASE)
        return self.compose_map.get((a, b))

    def _compose(self, s):
        res = []
        starter = None
        last_ccc = 0
        for c in s:
            cc = self.ccc[c]
            if starter is not None and (len(res) - 1 == starter or
                                        (last_ccc != 0 and last_ccc < cc)):
                comp = self._compose_pair(res[starter], c)
                if comp is not None:
                    res[starter] = comp
                    continue
            if cc == 0:
                starter = len(res)
                last_ccc = 0
            else:
                last_ccc = cc
            res.append(c)
        return res

    def nfd(self, s):
        out = []
        for c in s:
            self._decompose(c, False, out)
        return self._reorder(out)

    def nfkd(self, s):
        out = []
        for c in s:
            self._decompose(c, True, out)
        return self._reorder(out)

    def nfc(self, s):
        return self._compose(self.nfd(s))

    def nfkc(self, s):
        return self._compose(self.nfkd(s))

    def self_test(self):
        """Checks the normalization forms against NormalizationTest.txt."""
        path = os.path.join(self.dir, "NormalizationTest.txt")
        opener = open
        if not os.path.exists(path):
            path += ".bz2"
            opener = bz2.open
        if not os.path.exists(path):
            die("NormalizationTest.txt(.bz2) not found: cannot check normalization")
        with opener(path, "rt", encoding="utf-8") as f:
            first = f.readline()
            m = re.match(r"#\s*NormalizationTest-(\d+\.\d+\.\d+)\.txt", first)
            if not m or m.group(1) != self.version:
                die("NormalizationTest.txt is not version " + self.version)
            part1 = set()
            in_part1 = False
            n = 0
            for line in f:
                if line.startswith("@Part"):
                    in_part1 = line.startswith("@Part1")
                    continue
                line = line.split("#", 1)[0].strip()
                if not line:
                    continue
                cols = [[int(x, 16) for x in col.split()]
                        for col in line.split(";")[:5]]
                c1, c2, c3, c4, c5 = cols
                if in_part1:
                    part1.add(c1[0])
                for src in (c1, c2, c3):
                    if self.nfc(src) != c2 or self.nfd(src) != c3:
                        die("NFC/NFD self-test failed on: " + line)
                for src in (c1, c2, c3, c4, c5):
                    if self.nfkc(src) != c4 or self.nfkd(src) != c5:
                        die("NFKC/NFKD self-test failed on: " + line)
                n += 1
        # Characters not in part 1 are unchanged by every form.
        for c in range(MAXCP):
            if c in part1 or 0xD800 <= c <= 0xDFFF:
                continue
            if self.nfd([c]) != [c] or self.nfkc([c]) != [c]:
                die("normalization self-test failed on U+%04X" % c)
        return n


# Classes, as in nd_unicode.h.
SEP, WORD, SOLO, IGNORE = 0, 1, 2, 3
CLASS_NAMES = {SEP: "ND_CC_SEP", WORD: "ND_CC_WORD", SOLO: "ND_CC_SOLO",
               IGNORE: "ND_CC_IGNORE"}


def is_lmn(ucd, c):
    return ucd.gc[c][0] in "LMN"


def in_ignore_blocks(c):
    return any(a <= c <= b for a, b in IGNORE_MARK_BLOCKS)


def fold_string(ucd, c):
    """Rule 2 a-f: the folded form of a letter, mark or number c."""
    s = ucd.nfkc([c])
    if ucd.gc[c][0] == "L" and ucd.script[c] in STRIP_SCRIPTS:
        s = ucd.nfc([x for x in ucd.nfd(s) if not in_ignore_blocks(x)])
    t = []
    for x in s:
        t.extend(ucd.fold_full.get(x, [x]))
    s = [x for x in ucd.nfkc(t) if is_lmn(ucd, x)]
    if len(s) > FOLD_MAX:
        s = ucd.fold_simple.get(c, [c])
    return s


def classify(ucd):
    """Returns (cls, fold, special) with cls[c], fold[c] for every c."""
    cls = [SEP] * MAXCP
    fold = [()] * MAXCP
    special = []        # (c, reason) for the notes
    solo_script = lambda x: ucd.script[x] in SOLO_SCRIPTS

    for c in range(MAXCP):
        if ucd.gc[c] == "Cn":
            continue
        if (in_ignore_blocks(c) or c in IGNORE_FORMAT
                or c in ucd.variation_selector):
            cls[c] = IGNORE
            continue
        if not is_lmn(ucd, c):
            continue
        s = fold_string(ucd, c)
        k = WORD
        if solo_script(c):
            k = SOLO
        elif ucd.script[c] in ("Common", "Inherited"):
            if ucd.script_extensions(c) <= SOLO_SCRIPTS:
                k = SOLO
                special.append((c, "Script_Extensions=" +
                                "+".join(sorted(ucd.script_extensions(c)))))
        if not s:
            cls[c] = IGNORE
            special.append((c, "folds to nothing: IGNORE"))
            continue
        cls[c] = k
        fold[c] = tuple(s)
    return cls, fold, special


def check_invariants(ucd, cls, fold):
    errors = []
    for c in range(MAXCP):
        if cls[c] in (SEP, IGNORE):
            assert not fold[c]
            continue
        assert 1 <= len(fold[c]) <= FOLD_MAX
        for x in fold[c]:
            if fold[x] != (x,) or cls[x] != cls[c]:
                errors.append("U+%04X -> U+%04X, which is %s %s" %
                              (c, x, CLASS_NAMES[cls[x]],
                               " ".join("U+%04X" % y for y in fold[x])))
    return errors


# -- table ----------------------------------------------------------------

def entry_of(c, cls, fold):
    """The (deduplicable) entry of code point c."""
    f = fold[c]
    if len(f) == 1:
        return (cls[c], "rel", (f[0] - c) & 0xFFFFFFFF)
    return (cls[c], len(f), f)


def build_tables(cls, fold):
    entries = [(SEP, 0, ())]            # index 0 is SEP: nd_unicode.c relies on it
    index = {entries[0]: 0}
    per_cp = []
    for c in range(MAXCP):
        e = entry_of(c, cls, fold)
        i = index.get(e)
        if i is None:
            i = index[e] = len(entries)
            entries.append(e)
        per_cp.append(i)
    if len(entries) > 0xFFFF:
        die("too many entries for uint16 indexes: %d" % len(entries))

    best = None
    for shift in range(4, 11):
        size = 1 << shift
        blocks = []
        bindex = {}
        stage1 = []
        for b in range(0, MAXCP, size):
            blk = tuple(per_cp[b:b + size])
            j = bindex.get(blk)
            if j is None:
                j = bindex[blk] = len(blocks)
                blocks.append(blk)
            stage1.append(j)
        s1type = "uint8_t" if len(blocks) <= 256 else "uint16_t"
        s1bytes = len(stage1) * (1 if s1type == "uint8_t" else 2)
        total = s1bytes + len(blocks) * size * 2
        if best is None or total < best[0]:
            best = (total, shift, stage1, blocks, s1type, s1bytes)
    total, shift, stage1, blocks, s1type, s1bytes = best
    return entries, shift, stage1, blocks, s1type, s1bytes


def table_hash(cls, fold):
    """FNV-1a 64 of every code point's class, n and folded code points (as
    little-endian 32-bit words), U+0000..U+10FFFF in order: the unit test
    recomputes it through nd_unicode_lookup() to check the C side against
    this generator for every code point."""
    h = 0xCBF29CE484222325
    for c in range(MAXCP):
        f = fold[c]
        data = bytes([cls[c], len(f)])
        for x in f:
            data += x.to_bytes(4, "little")
        for b in data:
            h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def c_array(values, fmt, per_line):
    lines = []
    for i in range(0, len(values), per_line):
        lines.append("\t" + ", ".join(fmt % v for v in values[i:i + per_line]) + ",")
    return "\n".join(lines)


def write_header(path, ucd, entries, shift, stage1, blocks, s1type, s1bytes,
                 counts, thash):
    entry_bytes = len(entries) * 20     # sizeof(nd_fold)
    stage2_bytes = len(blocks) * (1 << shift) * 2
    total = s1bytes + stage2_bytes + entry_bytes
    out = []
    w = out.append
    w("/*-------------------------------------------------------------------------")
    w(" *")
    w(" * nd_unicode_table.h")
    w(" *\t\tCharacter classes and folded forms, Unicode %s." % ucd.version)
    w(" *")
    w(" * GENERATED FILE -- DO NOT EDIT.  Regenerate with")
    w(" *\t\tpython3 src/core/gen_unicode_table.py")
    w(" * from the Unicode Character Database %s files (Debian's unicode-data" % ucd.version)
    w(" * package, /usr/share/unicode); the rules are described there and in")
    w(" * nd_unicode.c.  Included only by nd_unicode.c.")
    w(" *")
    w(" * WORD %d, SOLO %d, IGNORE %d code points; the rest are SEP." %
      (counts[WORD], counts[SOLO], counts[IGNORE]))
    w(" * %d distinct entries, %d distinct blocks of %d code points." %
      (len(entries), len(blocks), 1 << shift))
    w(" * Const data: stage1 %d + stage2 %d + entries %d = %d bytes." %
      (s1bytes, stage2_bytes, entry_bytes, total))
    w(" *")
    w(" *-------------------------------------------------------------------------")
    w(" */")
    w("#ifndef ND_UNICODE_TABLE_H")
    w("#define ND_UNICODE_TABLE_H")
    w("")
    w("#include <stdint.h>")
    w("")
    w('#include "nd_unicode.h"')
    w("")
    w('#define ND_UNICODE_VERSION "%s"' % ucd.version)
    w("")
    w("/* FNV-1a 64 of the whole table, for test/unit/test_unicode.c */")
    w("#define ND_UNICODE_TABLE_HASH UINT64_C(0x%016X)" % thash)
    w("")
    w("/* stage1[cp >> ND_UCD_SHIFT] -> block; stage2[block << ND_UCD_SHIFT | low bits] */")
    w("#define ND_UCD_SHIFT %d" % shift)
    w("#define ND_UCD_MASK 0x%X" % ((1 << shift) - 1))
    w("")
    w("/*")
    w(" * An entry whose n is ND_FOLD_REL folds to the single code point")
    w(" * cp + cp[0] (mod 2^32); any other entry is the nd_fold itself.")
    w(" */")
    w("#define ND_FOLD_REL 0xFF")
    w("")
    w("static const %s nd_ucd_stage1[%d] = {" % (s1type, len(stage1)))
    w(c_array(stage1, "%d", 16))
    w("};")
    w("")
    flat = [i for blk in blocks for i in blk]
    w("static const uint16_t nd_ucd_stage2[%d] = {" % len(flat))
    for b, blk in enumerate(blocks):
        w("\t/* block %d */" % b)
        w(c_array(list(blk), "%d", 16))
    w("};")
    w("")
    w("static const nd_fold nd_ucd_entries[%d] = {" % len(entries))
    for i, (k, n, f) in enumerate(entries):
        if n == "rel":
            w("\t{%s, ND_FOLD_REL, {0x%Xu}},\t/* %d: %+d */" %
              (CLASS_NAMES[k], f, i, f - (1 << 32) if f >= 1 << 31 else f))
        elif n == 0:
            w("\t{%s, 0, {0}},\t/* %d */" % (CLASS_NAMES[k], i))
        else:
            w("\t{%s, %d, {%s}},\t/* %d */" %
              (CLASS_NAMES[k], n, ", ".join("0x%04X" % x for x in f), i))
    w("};")
    w("")
    w("#endif\t\t\t\t\t\t\t/* ND_UNICODE_TABLE_H */")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    return total, stage2_bytes, entry_bytes


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ucd", default="/usr/share/unicode",
                    help="directory of the UCD text files")
    ap.add_argument("--out", default=os.path.join(here, "nd_unicode_table.h"))
    ap.add_argument("--verbose", action="store_true",
                    help="list every special case")
    args = ap.parse_args()

    ucd = UCD(args.ucd)
    ntests = ucd.self_test()
    print("Unicode %s: normalization matches all %d NormalizationTest lines"
          % (ucd.version, ntests))

    cls, fold, special = classify(ucd)

    # Hangul syllables must stay precomposed (rule 2: no NFD for Hangul).
    for c in range(S_BASE, S_BASE + S_COUNT):
        if cls[c] != WORD or fold[c] != (c,):
            die("Hangul syllable U+%04X does not fold to itself" % c)

    errors = check_invariants(ucd, cls, fold)
    if errors:
        die("folding is not idempotent:\n  " + "\n  ".join(errors[:50]))

    counts = {k: cls.count(k) for k in (SEP, WORD, SOLO, IGNORE)}
    entries, shift, stage1, blocks, s1type, s1bytes = build_tables(cls, fold)
    thash = table_hash(cls, fold)
    total, s2, eb = write_header(args.out, ucd, entries, shift, stage1, blocks,
                                 s1type, s1bytes, counts, thash)
    print("classes: WORD %d, SOLO %d, IGNORE %d, SEP %d" %
          (counts[WORD], counts[SOLO], counts[IGNORE], counts[SEP]))
    print("special cases: %d (--verbose lists them)" % len(special))
    if args.verbose:
        for c, why in special:
            print("  U+%04X %s: %s" % (c, ucd.gc[c], why))
    print("table: shift %d, %d stage1 (%s), %d blocks, %d entries; "
          "const data %d bytes (stage2 %d, entries %d)" %
          (shift, len(stage1), s1type, len(blocks), len(entries), total, s2, eb))
    print("wrote " + args.out)


if __name__ == "__main__":
    main()
