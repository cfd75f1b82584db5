/*
 * Unit tests of the character classes, folding and UTF-8 (nd_unicode.c),
 * compiled without the server:
 *
 *	gcc -O1 -g -Wall -Wextra -fsanitize=address,undefined -I src/core \
 *		src/core/nd_unicode.c test/unit/test_unicode.c -o /tmp/test_unicode
 *
 * Prints TAP; exits non-zero when a test fails.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "nd_unicode.h"
#include "nd_unicode_table.h"	/* ND_UNICODE_VERSION, the hash, sizes */
#include "tap.h"

#define MAXCP 0x110000
#define INV ND_UTF8_INVALID

/* A copy, independent of the scratch the lookup may have used. */
static nd_fold
lookup(uint32_t cp)
{
	nd_fold		scratch;

	return *nd_unicode_lookup(cp, &scratch);
}

/* cp has class cls and folds to the n code points of want[]. */
static int
folds(uint32_t cp, int cls, int n, const uint32_t *want)
{
	nd_fold		f = lookup(cp);

	if (f.cls != cls || f.n != n)
	{
		printf("#   U+%04X: class %d n %d, expected class %d n %d\n",
			   (unsigned) cp, f.cls, f.n, cls, n);
		return 0;
	}
	for (int i = 0; i < n; i++)
		if (f.cp[i] != want[i])
		{
			printf("#   U+%04X: cp[%d] = U+%04X, expected U+%04X\n",
				   (unsigned) cp, i, (unsigned) f.cp[i], (unsigned) want[i]);
			return 0;
		}
	return 1;
}

static int
folds1(uint32_t cp, int cls, uint32_t to)
{
	return folds(cp, cls, 1, &to);
}

static int
is_class(uint32_t cp, int cls)
{
	nd_fold		f = lookup(cp);

	if (f.cls != cls)
	{
		printf("#   U+%04X: class %d, expected %d\n", (unsigned) cp, f.cls, cls);
		return 0;
	}
	if ((cls == ND_CC_SEP || cls == ND_CC_IGNORE) && f.n != 0)
	{
		printf("#   U+%04X: n %d, expected 0\n", (unsigned) cp, f.n);
		return 0;
	}
	return 1;
}

static int
range_class(uint32_t lo, uint32_t hi, int cls)
{
	for (uint32_t c = lo; c <= hi; c++)
		if (!is_class(c, cls))
			return 0;
	return 1;
}

/* Decoding bytes[0..len) returns ret and stores want (INV when ret <= 0). */
static int
decodes(const char *bytes, size_t len, int ret, uint32_t want)
{
	uint32_t	cp = 0x12345678;
	int			r = nd_utf8_decode((const uint8_t *) bytes, len, &cp);

	if (r != ret || cp != want)
	{
		printf("#   decode returned %d, U+%04X; expected %d, U+%04X\n",
			   r, (unsigned) cp, ret, (unsigned) want);
		return 0;
	}
	return 1;
}

static void
test_ascii(void)
{
	int			letters = 1,
				digits = 1,
				others = 1;

	for (uint32_t c = 0; c < 128; c++)
	{
		if (c >= 'A' && c <= 'Z')
			letters &= folds1(c, ND_CC_WORD, c - 'A' + 'a');
		else if (c >= 'a' && c <= 'z')
			letters &= folds1(c, ND_CC_WORD, c);
		else if (c >= '0' && c <= '9')
			digits &= folds1(c, ND_CC_WORD, c);
		else
			others &= is_class(c, ND_CC_SEP);
	}
	ok(letters, "ASCII letters are WORD and fold to lower case");
	ok(digits, "ASCII digits are WORD and fold to themselves");
	ok(others, "every other ASCII character (space, punctuation, '_', controls) is SEP");
}

static void
test_folding(void)
{
	static const uint32_t ss[] = {'s', 's'};
	static const uint32_t fi[] = {'f', 'i'};
	static const uint32_t koto[] = {0x30B3, 0x30C8};
	static const uint32_t qa[] = {0x0915, 0x093C};
	int			r;

	ok(folds1(0x00C9, ND_CC_WORD, 'e'), "U+00C9 E-acute folds to e");
	ok(folds1(0x00E9, ND_CC_WORD, 'e') && folds1(0x1EC7, ND_CC_WORD, 'e'),
	   "e-acute and e-circumflex-dot-below fold to e");
	ok(folds(0x00DF, ND_CC_WORD, 2, ss) && folds(0x1E9E, ND_CC_WORD, 2, ss),
	   "sharp s and capital sharp s fold to ss");
	ok(folds1(0x03C2, ND_CC_WORD, 0x03C3) && folds1(0x03A3, ND_CC_WORD, 0x03C3) &&
	   folds1(0x03C3, ND_CC_WORD, 0x03C3),
	   "Greek final sigma, capital sigma and sigma fold the same");
	ok(folds1(0x2126, ND_CC_WORD, 0x03C9) && folds1(0x038F, ND_CC_WORD, 0x03C9),
	   "ohm sign and Omega-tonos fold to omega");
	r = 1;
	for (uint32_t c = 0x0410; c <= 0x042F; c++)
		r &= folds1(c, ND_CC_WORD, c == 0x0419 ? 0x0438 : c + 0x20);
	ok(r, "Cyrillic capitals fold to lower case (short i loses its breve)");
	ok(folds1(0x0401, ND_CC_WORD, 0x0435), "Cyrillic IO folds to ie");
	ok(folds1(0xFF21, ND_CC_WORD, 'a') && folds1(0xFF10, ND_CC_WORD, '0'),
	   "fullwidth A and 0 fold to a and 0");
	ok(folds(0xFB01, ND_CC_WORD, 2, fi), "ligature fi folds to fi");
	ok(folds1(0x0130, ND_CC_WORD, 'i') && folds1(0x212A, ND_CC_WORD, 'k'),
	   "I-dot-above folds to i, Kelvin sign to k");
	ok(folds1(0x00F8, ND_CC_WORD, 0x00F8) && folds1(0x0131, ND_CC_WORD, 0x0131),
	   "o-slash and dotless i (no decomposition) keep their form");
	ok(folds1(0x1D400, ND_CC_WORD, 'a'), "mathematical bold A folds to a");
	ok(folds1(0x00B2, ND_CC_WORD, '2') && folds1(0x2460, ND_CC_WORD, '1'),
	   "superscript two and circled one fold to digits");
	ok(folds1(0xFDFA, ND_CC_WORD, 0xFDFA),
	   "U+FDFA (NFKC longer than ND_FOLD_MAX) falls back to itself");
	ok(folds(0x0958, ND_CC_WORD, 2, qa), "Devanagari QA keeps its nukta (NFKC: KA + nukta)");
	ok(folds1(0x093F, ND_CC_WORD, 0x093F) && folds1(0x0941, ND_CC_WORD, 0x0941),
	   "Devanagari vowel signs are WORD and kept");
	ok(folds1(0x05D1, ND_CC_WORD, 0x05D1) && folds1(0x0628, ND_CC_WORD, 0x0628),
	   "Hebrew and Arabic letters are WORD");

	ok(is_class(0x0301, ND_CC_IGNORE), "combining acute U+0301 is IGNORE");
	ok(range_class(0x0300, 0x036F, ND_CC_IGNORE) &&
	   range_class(0x1AB0, 0x1ACE, ND_CC_IGNORE) &&
	   range_class(0x1DC0, 0x1DFF, ND_CC_IGNORE) &&
	   range_class(0x20D0, 0x20F0, ND_CC_IGNORE) &&
	   range_class(0xFE20, 0xFE2F, ND_CC_IGNORE),
	   "the combining diacritical mark blocks are IGNORE");
	ok(is_class(0x00AD, ND_CC_IGNORE) && is_class(0x200C, ND_CC_IGNORE) &&
	   is_class(0x200D, ND_CC_IGNORE) && is_class(0x2060, ND_CC_IGNORE) &&
	   is_class(0xFEFF, ND_CC_IGNORE) &&
	   range_class(0xFE00, 0xFE0F, ND_CC_IGNORE) &&
	   range_class(0xE0100, 0xE01EF, ND_CC_IGNORE),
	   "soft hyphen, ZWNJ, ZWJ, word joiner, BOM, variation selectors are IGNORE");
	ok(is_class(0x200B, ND_CC_SEP) && is_class(0x00A0, ND_CC_SEP) &&
	   is_class(0x3000, ND_CC_SEP) && is_class(0x2014, ND_CC_SEP) &&
	   is_class(0x3002, ND_CC_SEP) && is_class(0x20AC, ND_CC_SEP) &&
	   is_class(0x1F600, ND_CC_SEP),
	   "ZWSP, NBSP, ideographic space, dashes, full stops, symbols, emoji are SEP");

	ok(folds1(0x4E2D, ND_CC_SOLO, 0x4E2D), "Han U+4E2D is SOLO");
	ok(folds1(0x3042, ND_CC_SOLO, 0x3042), "Hiragana a is SOLO");
	ok(folds1(0x30A2, ND_CC_SOLO, 0x30A2), "Katakana a is SOLO");
	ok(folds1(0xFF71, ND_CC_SOLO, 0x30A2), "halfwidth Katakana a is SOLO, folds to Katakana a");
	ok(folds1(0x0E01, ND_CC_SOLO, 0x0E01), "Thai ko kai is SOLO");
	ok(folds1(0x0E81, ND_CC_SOLO, 0x0E81) && folds1(0x1780, ND_CC_SOLO, 0x1780) &&
	   folds1(0x1000, ND_CC_SOLO, 0x1000) && folds1(0xA000, ND_CC_SOLO, 0xA000) &&
	   folds1(0x3105, ND_CC_SOLO, 0x3105),
	   "Lao, Khmer, Myanmar, Yi and Bopomofo letters are SOLO");
	ok(folds1(0x0F40, ND_CC_WORD, 0x0F40), "Tibetan is WORD");
	ok(folds1(0x30FC, ND_CC_SOLO, 0x30FC) && folds1(0xFF70, ND_CC_SOLO, 0x30FC),
	   "prolonged sound mark U+30FC (script Common) and its halfwidth form are SOLO");
	ok(folds1(0xF900, ND_CC_SOLO, 0x8C48) && folds1(0x2F800, ND_CC_SOLO, 0x4E3D),
	   "CJK compatibility ideographs are SOLO and fold to the unified ones");
	ok(folds1(0x20000, ND_CC_SOLO, 0x20000) && folds1(0x31350, ND_CC_SOLO, 0x31350),
	   "CJK extension B and H ideographs are SOLO");
	ok(folds(0x30FF, ND_CC_SOLO, 2, koto), "Katakana digraph koto folds to ko to");
	ok(folds1(0x3280, ND_CC_SOLO, 0x4E00), "circled ideograph one is SOLO, folds to U+4E00");

	r = 1;
	for (uint32_t c = 0xAC00; c <= 0xD7A3; c++)
		r &= folds1(c, ND_CC_WORD, c);
	ok(r, "all 11172 Hangul syllables are WORD and stay precomposed");
	ok(folds1(0x3131, ND_CC_WORD, 0x1100), "Hangul compatibility jamo fold to conjoining jamo");
}

static void
test_sep(void)
{
	int			r;

	ok(range_class(0xD800, 0xDFFF, ND_CC_SEP), "surrogates are SEP");
	r = is_class(0x110000, ND_CC_SEP) && is_class(0x7FFFFFFF, ND_CC_SEP) &&
		is_class(0xFFFFFFFE, ND_CC_SEP) && is_class(ND_UTF8_INVALID, ND_CC_SEP);
	for (uint32_t c = 0x110000; c < 0x120000; c += 0x3FF)
		r &= is_class(c, ND_CC_SEP);
	ok(r, "values beyond U+10FFFF and ND_UTF8_INVALID are SEP");
	ok(is_class(0x0378, ND_CC_SEP) && is_class(0x0FFFF, ND_CC_SEP) &&
	   is_class(0x2FFFF, ND_CC_SEP) && is_class(0xE0000, ND_CC_SEP) &&
	   is_class(0x10FFFF, ND_CC_SEP) && range_class(0xFDD0, 0xFDEF, ND_CC_SEP) &&
	   range_class(0x40000, 0x4FFFF, ND_CC_SEP),
	   "unassigned code points and noncharacters are SEP");
	ok(is_class(0xE000, ND_CC_SEP) && is_class(0xF0000, ND_CC_SEP) &&
	   is_class(0x100000, ND_CC_SEP),
	   "private use is SEP");
	ok(is_class(0x0000, ND_CC_SEP) && is_class(0x0085, ND_CC_SEP) &&
	   is_class(0x200E, ND_CC_SEP),
	   "controls and other format characters are SEP");
}

/* Every code point: well-formed entries, idempotent folding, the hash. */
static void
test_whole_table(void)
{
	int			shape = 1,
				idem = 1;
	uint64_t	h = UINT64_C(0xCBF29CE484222325);
	size_t		bytes;

	for (uint32_t c = 0; c < MAXCP; c++)
	{
		nd_fold		f = lookup(c);
		uint8_t		data[2 + 4 * ND_FOLD_MAX];
		size_t		len = 0;

		if (f.cls > ND_CC_IGNORE || f.n > ND_FOLD_MAX ||
			((f.cls == ND_CC_SEP || f.cls == ND_CC_IGNORE) != (f.n == 0)))
		{
			if (shape)
				printf("#   U+%04X: class %d n %d\n", (unsigned) c, f.cls, f.n);
			shape = 0;
			continue;
		}
		data[len++] = f.cls;
		data[len++] = f.n;
		for (int i = 0; i < f.n; i++)
		{
			uint32_t	x = f.cp[i];
			nd_fold		g = lookup(x);

			if (x > 0x10FFFF || (x >= 0xD800 && x <= 0xDFFF) ||
				g.cls != f.cls || g.n != 1 || g.cp[0] != x)
			{
				if (idem)
					printf("#   U+%04X folds to U+%04X, which is class %d n %d\n",
						   (unsigned) c, (unsigned) x, g.cls, g.n);
				idem = 0;
			}
			data[len++] = (uint8_t) x;
			data[len++] = (uint8_t) (x >> 8);
			data[len++] = (uint8_t) (x >> 16);
			data[len++] = (uint8_t) (x >> 24);
		}
		for (size_t i = 0; i < len; i++)
			h = (h ^ data[i]) * UINT64_C(0x100000001B3);
	}
	ok(shape, "every entry has a valid class and 0 (SEP, IGNORE) or 1..4 code points");
	ok(idem, "folding is idempotent: each folded code point folds to itself, same class");
	ok(h == ND_UNICODE_TABLE_HASH,
	   "lookups of all code points match the generator (Unicode %s, hash %016llx)",
	   ND_UNICODE_VERSION, (unsigned long long) h);
	bytes = sizeof(nd_ucd_stage1) + sizeof(nd_ucd_stage2) + sizeof(nd_ucd_entries);
	ok(bytes < 200 * 1024, "tables are %zu bytes of const data", bytes);
}

static void
test_decode(void)
{
	ok(decodes("", 0, 0, INV), "decode: empty input returns 0");
	ok(decodes("A", 1, 1, 'A') && decodes("\x00", 1, 1, 0x00) && decodes("\x7F", 1, 1, 0x7F),
	   "decode: 1-byte sequences");
	ok(decodes("\xC2\x80", 2, 2, 0x80) && decodes("\xC3\xA9", 2, 2, 0xE9) &&
	   decodes("\xDF\xBF", 2, 2, 0x7FF),
	   "decode: 2-byte sequences");
	ok(decodes("\xE0\xA0\x80", 3, 3, 0x800) && decodes("\xE4\xB8\xAD", 3, 3, 0x4E2D) &&
	   decodes("\xED\x9F\xBF", 3, 3, 0xD7FF) && decodes("\xEE\x80\x80", 3, 3, 0xE000) &&
	   decodes("\xEF\xBF\xBF", 3, 3, 0xFFFF),
	   "decode: 3-byte sequences");
	ok(decodes("\xF0\x90\x80\x80", 4, 4, 0x10000) &&
	   decodes("\xF0\x9F\x98\x80", 4, 4, 0x1F600) &&
	   decodes("\xF4\x8F\xBF\xBF", 4, 4, 0x10FFFF),
	   "decode: 4-byte sequences");
	ok(decodes("Ab", 2, 1, 'A') && decodes("\xC3\xA9z", 3, 2, 0xE9),
	   "decode: consumes one sequence, not what follows");
	ok(decodes("\xC0\x80", 2, 1, INV) && decodes("\xC1\xBF", 2, 1, INV) &&
	   decodes("\xE0\x80\x80", 3, 1, INV) && decodes("\xE0\x9F\xBF", 3, 1, INV) &&
	   decodes("\xF0\x80\x80\x80", 4, 1, INV) && decodes("\xF0\x8F\xBF\xBF", 4, 1, INV),
	   "decode: overlong forms are invalid, consume 1 byte");
	ok(decodes("\xED\xA0\x80", 3, 1, INV) && decodes("\xED\xBF\xBF", 3, 1, INV),
	   "decode: surrogates are invalid");
	ok(decodes("\xF4\x90\x80\x80", 4, 1, INV) && decodes("\xF5\x80\x80\x80", 4, 1, INV) &&
	   decodes("\xF7\xBF\xBF\xBF", 4, 1, INV) && decodes("\xF8\x88\x80\x80\x80", 5, 1, INV) &&
	   decodes("\xFE", 1, 1, INV) && decodes("\xFF", 1, 1, INV),
	   "decode: beyond U+10FFFF and bytes F5..FF are invalid");
	ok(decodes("\x80", 1, 1, INV) && decodes("\xBF\x80", 2, 1, INV) &&
	   decodes("\x80\x41", 2, 1, INV),
	   "decode: stray continuation bytes are invalid");
	ok(decodes("\xC3", 1, -2, INV) && decodes("\xE4", 1, -3, INV) &&
	   decodes("\xE4\xB8", 2, -3, INV) && decodes("\xF0", 1, -4, INV) &&
	   decodes("\xF0\x9F", 2, -4, INV) && decodes("\xF0\x9F\x98", 3, -4, INV),
	   "decode: truncated valid prefixes return -(length needed)");
	ok(decodes("\xE0\x80", 2, 1, INV) && decodes("\xED\xA0", 2, 1, INV) &&
	   decodes("\xF0\x80", 2, 1, INV) && decodes("\xF4\x90", 2, 1, INV),
	   "decode: a prefix that is already invalid is invalid, not truncated");
	ok(decodes("\xC3\x41", 2, 1, INV) && decodes("\xE4\xB8\x41", 3, 1, INV) &&
	   decodes("\xF0\x9F\x98\x41", 4, 1, INV) && decodes("\xE4\xC3\xA9", 3, 1, INV),
	   "decode: a sequence cut by a non-continuation byte is invalid, consumes 1 byte");
}

static void
test_round_trip(void)
{
	int			rt = 1,
				cut = 1,
				bad = 1;

	for (uint32_t c = 0; c < MAXCP; c++)
	{
		uint8_t		buf[4];
		uint32_t	d;
		int			n;

		if (c >= 0xD800 && c <= 0xDFFF)
			continue;
		n = nd_utf8_encode(c, buf);
		if (n != (c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4) ||
			nd_utf8_decode(buf, n, &d) != n || d != c)
		{
			if (rt)
				printf("#   U+%04X does not round-trip\n", (unsigned) c);
			rt = 0;
		}
		for (int k = 1; k < n; k++)
			if (nd_utf8_decode(buf, k, &d) != -n)
			{
				if (cut)
					printf("#   U+%04X cut to %d bytes is not -%d\n", (unsigned) c, k, n);
				cut = 0;
			}
	}
	ok(rt, "encode/decode round-trip every scalar value, shortest form");
	ok(cut, "every proper prefix of every encoding decodes as truncated");

	{
		static const uint32_t nonscalar[] = {0xD800, 0xDFFF, 0x110000, ND_UTF8_INVALID};

		for (size_t i = 0; i < sizeof(nonscalar) / sizeof(nonscalar[0]); i++)
		{
			uint8_t		buf[4];

			if (nd_utf8_encode(nonscalar[i], buf) != 3 || memcmp(buf, "\xEF\xBF\xBD", 3) != 0)
				bad = 0;
		}
	}
	ok(bad, "encoding a surrogate or a value beyond U+10FFFF writes U+FFFD");

	/* every 2-byte string: decode never claims more than it was given */
	{
		int			sane = 1;

		for (int a = 0; a < 256; a++)
			for (int b = 0; b < 256; b++)
			{
				uint8_t		s[2] = {(uint8_t) a, (uint8_t) b};
				uint32_t	d;
				int			n = nd_utf8_decode(s, 2, &d);

				if (n == 0 || n > 2 || n < -4 ||
					(n > 0 && d != ND_UTF8_INVALID &&
					 (d > 0x10FFFF || (d >= 0xD800 && d <= 0xDFFF))))
					sane = 0;
			}
		ok(sane, "decode of every 2-byte input consumes 1..2 bytes or asks for more");
	}
}

/* The result of a relative entry is materialized in the caller's scratch. */
static void
test_pointer(void)
{
	nd_fold		s1,
				s2,
				s3;
	const nd_fold *a = nd_unicode_lookup(0x4E2D, &s1);
	const nd_fold *sep = nd_unicode_lookup(' ', &s2);
	const nd_fold *sep2 = nd_unicode_lookup(0x110000, &s3);
	int			first = (a == &s1 && a->cls == ND_CC_SOLO && a->n == 1 && a->cp[0] == 0x4E2D);

	ok(first, "a relative entry is materialized in the caller's scratch");
	ok(sep == sep2 && sep->cls == ND_CC_SEP, "SEP results point into the const table");
}

int
main(void)
{
	printf("# Unicode %s\n", ND_UNICODE_VERSION);
	test_ascii();
	test_folding();
	test_sep();
	test_whole_table();
	test_decode();
	test_round_trip();
	test_pointer();
	return tap_done();
}
