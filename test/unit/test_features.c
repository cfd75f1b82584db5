/*
 * Unit tests of the tokenizer/shingler (nd_features.c) and the SimHash
 * accumulators (nd_simhash.c), compiled without the server.
 */
#include <stdint.h>
#include <string.h>

#include "nd_features.h"
#include "nd_simhash.h"
#include "tap.h"
#include "test_realloc.h"
#include "xxhash.h"

#define MAXF 16384

typedef struct
{
	uint64_t	f[MAXF];
	size_t		n;
} flist;

static void
collect(void *arg, const uint64_t *features, size_t n)
{
	flist	   *l = arg;

	for (size_t i = 0; i < n && l->n < MAXF; i++)
		l->f[l->n++] = features[i];
}

/* features of text fed in pieces of `step` bytes (0 = all at once) */
static void
features(const char *text, size_t len, int shingle, nd_unit unit, uint64_t seed,
		 size_t step, flist *out)
{
	nd_shingler s;

	out->n = 0;
	nd_shingler_init(&s, shingle, unit, seed, collect, out);
	if (step == 0)
		nd_shingler_feed(&s, text, len);
	else
		for (size_t i = 0; i < len; i += step)
			nd_shingler_feed(&s, text + i, (len - i < step) ? len - i : step);
	nd_shingler_finish(&s);
}

static int
same(const flist *a, const flist *b)
{
	return a->n == b->n && memcmp(a->f, b->f, a->n * sizeof(uint64_t)) == 0;
}

static int
same_text(const char *a, const char *b, int shingle, nd_unit unit)
{
	static flist fa, fb;

	features(a, strlen(a), shingle, unit, 0, 0, &fa);
	features(b, strlen(b), shingle, unit, 0, 0, &fb);
	return same(&fa, &fb);
}

static uint64_t
tokhash(const char *t, uint64_t seed)
{
	return XXH3_64bits_withSeed(t, strlen(t), seed);
}

/* the feature recipe of nd_features.h, written out by hand */
static uint64_t
combine(const uint64_t *h, int n, uint64_t seed)
{
	uint64_t	acc = seed ^ ((uint64_t) n * 0x9E3779B185EBCA87ull);

	for (int i = 0; i < n; i++)
	{
		__uint128_t r = (__uint128_t) (h[i] ^ ((uint64_t) (i + 1) * 0xA0761D6478BD642Full)) *
			0xE7037ED1A0B428DBull;

		acc += (uint64_t) r ^ (uint64_t) (r >> 64);
	}
	acc ^= acc >> 33;
	acc *= 0xFF51AFD7ED558CCDull;
	acc ^= acc >> 33;
	acc *= 0xC4CEB9FE1A85EC53ull;
	acc ^= acc >> 33;
	return acc;
}

static uint64_t
shingle_of(const char **toks, int n, uint64_t seed)
{
	uint64_t	h[ND_SHINGLE_MAX];

	for (int i = 0; i < n; i++)
		h[i] = tokhash(toks[i], seed);
	return combine(h, n, seed);
}

static void
test_spec(void)
{
	static flist f;
	const char *abcd[] = {"alpha", "beta", "gamma", "delta"};

	features("Alpha beta, GAMMA delta!", 24, 3, ND_UNIT_WORD, 0, 0, &f);
	ok(f.n == 2, "four words give two 3-shingles (got %zu)", f.n);
	ok(f.n == 2 && f.f[0] == shingle_of(abcd, 3, 0) && f.f[1] == shingle_of(abcd + 1, 3, 0),
	   "shingle hashes follow the documented recipe");

	features("Alpha beta", 10, 3, ND_UNIT_WORD, 42, 0, &f);
	ok(f.n == 1 && f.f[0] == shingle_of(abcd, 2, 42),
	   "a text shorter than a shingle is one shingle of all its tokens (seeded)");

	features("", 0, 3, ND_UNIT_WORD, 0, 0, &f);
	ok(f.n == 0, "empty text has no features");
	features(" \t\n.,;!? -- ", 13, 3, ND_UNIT_WORD, 0, 0, &f);
	ok(f.n == 0, "separators only: no features");
	features(" \t\n.,;!? -- ", 13, 3, ND_UNIT_CHAR, 0, 0, &f);
	ok(f.n == 0, "separators only, char unit: no features");

	features("a a a a a", 9, 1, ND_UNIT_WORD, 0, 0, &f);
	ok(f.n == 5 && f.f[0] == f.f[4], "repeated shingles repeat their feature (count weighting)");

	{
		const char *ab[] = {"a", "b", " ", "c", "d"};

		features("  AB, cd. ", 10, 1, ND_UNIT_CHAR, 0, 0, &f);
		ok(f.n == 5 && f.f[0] == shingle_of(ab, 1, 0) && f.f[2] == shingle_of(ab + 2, 1, 0),
		   "char unit: folded characters, one space per separator run, none at the ends");
		features("  AB, cd. ", 10, 3, ND_UNIT_CHAR, 0, 0, &f);
		ok(f.n == 3 && f.f[0] == shingle_of(ab, 3, 0), "char 3-grams span the space");
	}
}

static void
test_folding(void)
{
	ok(same_text("Hello WORLD again", "hello world again", 3, ND_UNIT_WORD), "ASCII case folds");
	ok(!same_text("hello world again", "hello world agian", 3, ND_UNIT_WORD), "different words differ");
	ok(same_text("Café Ünïcode STRASSE", "cafe unicode straße", 3, ND_UNIT_WORD),
	   "diacritics and sharp s fold");
	ok(same_text("cafe\xcc\x81 x y", "caf\xc3\xa9 x y", 3, ND_UNIT_WORD),
	   "NFD and NFC spellings agree");
	ok(same_text("\xef\xbc\xb0\xef\xbd\x99\xef\xbd\x94\xef\xbd\x88\xef\xbd\x8f\xef\xbd\x8e rocks", "python rocks", 3, ND_UNIT_WORD),
	   "fullwidth Latin folds to ASCII");
	ok(same_text("soft\xc2\xadhyphen word", "softhyphen word", 3, ND_UNIT_WORD),
	   "soft hyphen does not split a word");
	/* 我爱北京 = four Han characters: four tokens, like "w a b j" */
	{
		static flist f;

		features("\xe6\x88\x91\xe7\x88\xb1\xe5\x8c\x97\xe4\xba\xac", 12, 3, ND_UNIT_WORD, 0, 0, &f);
		ok(f.n == 2, "Han text: every character is a token (got %zu features)", f.n);
		features("abc\xe6\x88\x91\xe7\x88\xb1xyz", 12, 1, ND_UNIT_WORD, 0, 0, &f);
		ok(f.n == 4, "mixed Latin and Han: abc, 我, 爱, xyz (got %zu)", f.n);
	}
	ok(same_text("don't", "don t", 3, ND_UNIT_WORD), "apostrophe separates");
	ok(!same_text("x\xff\xfey", "xy", 3, ND_UNIT_WORD) && same_text("x\xff\xfey", "x y", 3, ND_UNIT_WORD),
	   "invalid UTF-8 bytes are separators");
}

static void
test_long_tokens(void)
{
	static char buf[2000];
	static flist f;
	uint64_t	h;

	memset(buf, 'a', 700);
	features(buf, 700, 1, ND_UNIT_WORD, 7, 0, &f);
	h = XXH3_64bits_withSeed(buf, 256, 7);
	h = XXH3_64bits_withSeed(buf, 256, h);
	h = XXH3_64bits_withSeed(buf, 700 - 512, h);
	ok(f.n == 1 && f.f[0] == combine(&h, 1, 7),
	   "a 700-byte token is hashed in chained 256-byte blocks");

	memset(buf, 'a', 512);
	features(buf, 512, 1, ND_UNIT_WORD, 7, 0, &f);
	h = XXH3_64bits_withSeed(buf, 256, 7);
	h = XXH3_64bits_withSeed(buf, 256, h);
	ok(f.n == 1 && f.f[0] == combine(&h, 1, 7),
	   "a token of exactly two blocks has no empty third block");
}

/* Any split of the input gives the same features as the whole. */
static void
test_chunking(void)
{
	static const char *texts[] = {
		"The quick brown fox jumps over the lazy dog, again and again.",
		"Gr\xc3\xbc\xc3\x9f" "e aus K\xc3\xb6ln \xe6\x88\x91\xe7\x88\xb1\xe5\x8c\x97\xe4\xba\xac caf\xc3\xa9 \xf0\x9f\x98\x80 end",
		"bad \xe2\x82 utf \xf0\x9f\x98 8 \xc0\x80 \xed\xa0\x80 \xf4\x90\x80\x80 \x80\x80 x\xe2",
		"short",
		/* words and separator runs longer than a 16-byte SIMD window */
		"Supercalifragilisticexpialidocious AND antidisestablishmentarianism,"
		"                                   ...   ---   MixedCASEwords123 x9Y8z7"
		"\n\n\t\t  Ends.With.Dots....................................word",
	};
	static flist whole, parts;
	int			all = 1;

	for (size_t t = 0; t < sizeof(texts) / sizeof(texts[0]); t++)
		for (int unit = 0; unit < 2; unit++)
			for (int k = 1; k <= 4; k++)
			{
				size_t		len = strlen(texts[t]);

				features(texts[t], len, k, unit, 1, 0, &whole);
				for (size_t step = 1; step <= len; step++)
				{
					features(texts[t], len, k, unit, 1, step, &parts);
					if (!same(&whole, &parts))
					{
						all = 0;
						printf("# text %zu unit %d k %d step %zu differs\n", t, unit, k, step);
					}
				}
			}
	ok(all, "feeding in pieces of every size gives the same features");

	{
		static char big[5000];

		for (size_t i = 0; i < sizeof(big); i++)
			big[i] = (i % 97 == 0) ? ' ' : 'a' + (i * 7) % 26;
		features(big, sizeof(big), 3, ND_UNIT_WORD, 0, 0, &whole);
		features(big, sizeof(big), 3, ND_UNIT_WORD, 0, 255, &parts);
		ok(same(&whole, &parts) && whole.n > 40, "long tokens split across pieces");
	}
}

static void
ignore_tokens(void *arg, const uint8_t *bytes, size_t len, bool last)
{
	(void) arg;
	(void) bytes;
	(void) len;
	(void) last;
}

/* features through the general, character-at-a-time path only */
static void
features_slow(const char *text, size_t len, int shingle, nd_unit unit, flist *out)
{
	nd_shingler s;

	out->n = 0;
	nd_shingler_init(&s, shingle, unit, 1, collect, out);
	s.token_sink = ignore_tokens;	/* the fast paths leave tokens to it */
	nd_shingler_feed(&s, text, len);
	nd_shingler_finish(&s);
}

/*
 * Long non-ASCII texts: the fast paths for two- and three-byte characters
 * give what the general path gives, whole or in pieces of any size.
 */
static void
test_chunking_intl(void)
{
	static const char *const pieces[] = {
		"\xd0\x9f\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82 ",	/* Привет */
		"\xd0\x99\xd0\xbe\xd0\xb3\xd0\xb0, ",	/* Йога: fold with a mark removed */
		"\xd1\x91\xd0\xbb\xd0\xba\xd0\xb0 ",	/* ёлка */
		"Stra\xc3\x9f" "e ",	/* ß folds to two letters */
		"Caf\xc3\xa9-\xc3\x89" "COLE ",
		"\xce\x9f\xce\x94\xce\x9f\xce\xa3 \xcf\x82\xcf\x83 ",	/* Greek, final sigma */
		"\xe6\x88\x91\xe7\x88\xb1\xe5\x8c\x97\xe4\xba\xac",	/* Han run */
		"\xe3\x81\x8b\xe3\x82\x99\xef\xbd\xb6\xef\xbe\x9e",	/* kana, halfwidth */
		"\xe3\x80\x82",		/* ideographic full stop */
		"e\xcc\x81t\xc3\xa9 ",	/* combining acute: ignored */
		"so\xc2\xad" "ft ",		/* soft hyphen inside a word */
		"\xef\xbc\xa1\xef\xbc\xa2 ",	/* fullwidth AB */
		"\xea\xb0\x80\xeb\x82\x98 ",	/* Hangul: a word */
		"\xc2\xbd \xe2\x85\xa0 ",	/* one half, roman numeral one */
		"mixed\xd0\xa1\xd0\xbb\xd0\xbe\xd0\xb2\xd0\xbeword ",
		"\xf0\x9f\x98\x80 \xf0\xa0\x80\x80 ",	/* four-byte: emoji, Han ext. B */
		"\xe2\x82 \xed\xa0\x80 \xe0\x80\xaf \xc0\x80 \xdf ",	/* invalid */
		"\xe2\x80\x94",			/* em dash between words */
	};
	static char text[16384];
	static flist whole, slow, parts;
	int			all = 1;
	int			slow_ok = 1;
	size_t		len = 0;
	uint32_t	r = 12345;

	/* a one-letter word first: the char unit's first separator run */
	memcpy(text, "\xd0\xaf, ", 4);
	len = 4;
	/* a pseudo-random mix of the pieces and of long tokens */
	while (len < 8000)
	{
		const char *p;

		r = r * 1103515245 + 12345;
		p = pieces[(r >> 16) % (sizeof(pieces) / sizeof(pieces[0]))];
		memcpy(text + len, p, strlen(p));
		len += strlen(p);
		if ((r >> 20) % 100 == 0)
		{
			/*
			 * Now and then a token over several blocks, of characters
			 * whose folds are 1 to 3 bytes long (ß -> ss, U+FB03 -> ffi),
			 * so that block ends fall inside them.
			 */
			static const char *const c[] = {"\xd0\x94", "\xc3\x9f", "\xef\xac\x83",
			"\xd0\xb4", "x", "\xc3\xa9", "Q"};
			int			nc = 150 + (int) ((r >> 8) % 150);

			for (int i = 0; i < nc; i++)
			{
				const char *ch;

				r = r * 1103515245 + 12345;
				ch = c[(r >> 16) % 7];
				memcpy(text + len, ch, strlen(ch));
				len += strlen(ch);
			}
			text[len++] = ' ';
		}
	}

	/*
	 * And tokens whose block ends fall inside a character's fold for
	 * certain: after 0-2 ASCII letters, runs of U+FB03 (folds to "ffi") or
	 * of U+00DF (folds to "ss").
	 */
	for (int pre = 0; pre < 3; pre++)
		for (int ch = 0; ch < 2; ch++)
		{
			for (int i = 0; i < pre; i++)
				text[len++] = 'x';
			for (int i = 0; i < 150; i++)
			{
				const char *c = ch ? "\xef\xac\x83" : "\xc3\x9f";

				memcpy(text + len, c, strlen(c));
				len += strlen(c);
			}
			text[len++] = ' ';
		}

	for (int unit = 0; unit < 2; unit++)
		for (int k = 1; k <= 5; k += 2)
		{
			features(text, len, k, unit, 1, 0, &whole);
			features_slow(text, len, k, unit, &slow);
			if (!same(&whole, &slow) || whole.n < 600)
			{
				slow_ok = 0;
				printf("# unit %d k %d: fast and general paths differ (%zu, %zu features)\n", unit, k, whole.n, slow.n);
			}
			for (size_t step = 1; step <= 300; step += (step < 40 ? 1 : 37))
			{
				features(text, len, k, unit, 1, step, &parts);
				if (!same(&whole, &parts))
				{
					all = 0;
					printf("# unit %d k %d step %zu differs\n", unit, k, step);
				}
			}
		}
	ok(slow_ok, "non-ASCII text: the fast paths agree with the general path");
	ok(all, "non-ASCII text: feeding in pieces gives the same features");
}

static void
test_push_token(void)
{
	static flist a, b;
	nd_shingler s;

	features("Alpha beta gamma delta", 22, 2, ND_UNIT_WORD, 3, 0, &a);
	b.n = 0;
	nd_shingler_init(&s, 2, ND_UNIT_WORD, 3, collect, &b);
	nd_shingler_push_token(&s, "alpha", 5);
	nd_shingler_push_token(&s, "beta", 4);
	nd_shingler_push_token(&s, "gamma", 5);
	nd_shingler_push_token(&s, "delta", 5);
	nd_shingler_finish(&s);
	ok(same(&a, &b), "pushed tokens shingle like tokenized text");
	ok(nd_shingler_check(0, ND_UNIT_WORD) != NULL && nd_shingler_check(65, ND_UNIT_WORD) != NULL &&
	   nd_shingler_check(64, ND_UNIT_CHAR) == NULL && nd_shingler_check(3, (nd_unit) 7) != NULL,
	   "parameter checks");
}

static uint64_t
rnd(uint64_t *state)
{
	uint64_t	z = (*state += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static uint64_t
naive_simhash(const uint64_t *f, size_t n)
{
	int64_t		v[64] = {0};
	uint64_t	fp = 0;

	for (size_t i = 0; i < n; i++)
		for (int b = 0; b < 64; b++)
			v[b] += ((f[i] >> b) & 1) ? 1 : -1;
	for (int b = 0; b < 64; b++)
		if (v[b] > 0)
			fp |= (uint64_t) 1 << b;
	return fp;
}

/*
 * An independent exact reference for weighted votes: each bit's vote as a
 * 384-bit two's-complement integer in units of 2^-149 (float4's smallest
 * step), to which every weight M * 2^E is added shifted.
 */
#define BIG_WORDS 6
typedef struct big
{
	uint64_t	w[BIG_WORDS];
} big;

static void
big_add_weight(big *x, float weight, int negate)
{
	uint32_t	bits,
				e;
	uint64_t	m,
				add[BIG_WORDS] = {0};
	int			shift,
				neg;
	unsigned	carry = 0;

	memcpy(&bits, &weight, sizeof(bits));
	e = (bits >> 23) & 0xFF;
	m = bits & 0x7FFFFF;
	if (e != 0)
		m |= 0x800000;
	else
		e = 1;
	shift = (int) e - 1;
	neg = (int) (bits >> 31) ^ negate;
	add[shift / 64] = m << (shift % 64);
	if (shift % 64 > 40)
		add[shift / 64 + 1] = m >> (64 - shift % 64);
	if (neg)
	{
		/* two's complement of add */
		for (int i = 0; i < BIG_WORDS; i++)
			add[i] = ~add[i];
		for (int i = 0; i < BIG_WORDS && ++add[i] == 0; i++)
			;
	}
	for (int i = 0; i < BIG_WORDS; i++)
	{
		uint64_t	s = x->w[i] + add[i];
		unsigned	c = s < x->w[i];

		s += carry;
		c |= s < (uint64_t) carry;
		x->w[i] = s;
		carry = c;
	}
}

static int
big_positive(const big *x)
{
	int			nonzero = 0;

	if (x->w[BIG_WORDS - 1] >> 63)
		return 0;
	for (int i = 0; i < BIG_WORDS; i++)
		nonzero |= x->w[i] != 0;
	return nonzero;
}

static uint64_t
exact_wsimhash(const uint64_t *f, const float *wt, size_t n)
{
	big			v[64];
	uint64_t	fp = 0;

	memset(v, 0, sizeof(v));
	for (size_t i = 0; i < n; i++)
		for (int b = 0; b < 64; b++)
			big_add_weight(&v[b], wt[i], !((f[i] >> b) & 1));
	for (int b = 0; b < 64; b++)
		if (big_positive(&v[b]))
			fp |= (uint64_t) 1 << b;
	return fp;
}

/* 0.1's summation, in double precision, in the given order */
static uint64_t
double_wsimhash(const uint64_t *f, const float *wt, size_t n)
{
	double		v[64] = {0};
	uint64_t	fp = 0;

	for (size_t i = 0; i < n; i++)
		for (int b = 0; b < 64; b++)
			v[b] += ((f[i] >> b) & 1) ? (double) wt[i] : -(double) wt[i];
	for (int b = 0; b < 64; b++)
		if (v[b] > 0)
			fp |= (uint64_t) 1 << b;
	return fp;
}

static uint64_t
acc_wsimhash(const uint64_t *f, const float *wt, const size_t *order, size_t n, size_t split)
{
	nd_wsimhash_acc a,
				b;
	uint64_t	fp;

	/* the features in the given order, split across two merged states */
	nd_wsimhash_init(&a, test_realloc, NULL);
	nd_wsimhash_init(&b, test_realloc, NULL);
	for (size_t i = 0; i < n; i++)
		nd_wsimhash_add(i < split ? &a : &b, f[order[i]], wt[order[i]]);
	nd_wsimhash_merge(&b, &a);
	nd_wsimhash_result(&b, &fp);
	nd_wsimhash_free(&a);
	nd_wsimhash_free(&b);
	return fp;
}

static void
test_wsimhash_exact(const uint64_t *f)
{
	static float wt[400];
	static size_t order[400];
	uint64_t	st = 99;
	int			exact = 1,
				same_order = 1,
				compat = 1,
				cancel_seen = 0;

	/*
	 * Weights over float4's whole range, both signs, subnormals too, and
	 * exact cancellations (w and -w): every shuffle and split gives the
	 * exact reference's fingerprint.
	 */
	for (int round = 0; round < 40; round++)
	{
		size_t		n = 5 + rnd(&st) % 395;
		uint64_t	want;

		for (size_t i = 0; i < n; i++)
		{
			uint32_t	bits = (uint32_t) rnd(&st);

			/* no NaN or infinity: exponent field below 255 */
			if (((bits >> 23) & 0xFF) == 0xFF)
				bits &= ~((uint32_t) 1 << 30);
			memcpy(&wt[i], &bits, sizeof(bits));
			if (round % 2)
			{
				/* small weights between huge ones that cancel */
				wt[i] = (float) (0.5 + (double) (rnd(&st) % 1000) / 500.0);
				if (i % 8 == 0)
					wt[i] = 1e30f;
				else if (i % 8 == 5)
					wt[i] = -1e30f;
			}
			else if (i > 0 && rnd(&st) % 4 == 0)
				wt[i] = -wt[i - 1 - rnd(&st) % i];
			order[i] = i;
		}
		want = exact_wsimhash(f, wt, n);
		if (double_wsimhash(f, wt, n) != want)
			cancel_seen = 1;
		for (int shuffle = 0; shuffle < 6; shuffle++)
		{
			for (size_t i = n - 1; i > 0; i--)
			{
				size_t		j = rnd(&st) % (i + 1),
							t = order[i];

				order[i] = order[j];
				order[j] = t;
			}
			if (acc_wsimhash(f, wt, order, n, rnd(&st) % (n + 1)) != want)
				exact = 0;
		}
	}
	ok(exact, "weighted: any order and any split give the exact vote (40 sets, weights over the whole float range)");
	ok(cancel_seen, "weighted: those sets include some where 0.1's double-precision sum is wrong");

	/* the audit's case: 1e20, 1, -1e20 in every order is the vote of the 1 alone */
	{
		uint64_t	fx = 0x0123456789ABCDEFull,
					fy = 0xFEDCBA9876543210ull;
		uint64_t	ff[3] = {fx, fy, fx};
		float		w3[3] = {1e20f, 1.0f, -1e20f};
		size_t		orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};

		for (int o = 0; o < 6; o++)
			if (acc_wsimhash(ff, w3, orders[o], 3, 3) != fy)
				same_order = 0;
		ok(same_order, "weighted: 1e20, 1, -1e20 in all six orders vote as the 1 alone");
	}

	/*
	 * Ordinary weights (0.1 .. 100, and small integers): the same
	 * fingerprints as 0.1's double sums, so stored fingerprints stay valid.
	 */
	for (int round = 0; round < 200; round++)
	{
		size_t		n = 1 + rnd(&st) % 400;

		for (size_t i = 0; i < n; i++)
		{
			wt[i] = round % 2 ? (float) (1 + rnd(&st) % 9) :
				(float) (0.1 + (double) (rnd(&st) % 100000) / 1000.0);
			order[i] = i;
		}
		if (acc_wsimhash(f + round, wt, order, n, n / 2) != double_wsimhash(f + round, wt, n))
			compat = 0;
	}
	ok(compat, "weighted: ordinary weights give 0.1's fingerprints (200 sets)");
}

static void
test_simhash(void)
{
	static uint64_t f[3000];
	uint64_t	st = 1,
				fp;
	nd_simhash_acc acc;
	nd_wsimhash_acc w,
				w2;
	int			good = 1;

	for (size_t i = 0; i < 3000; i++)
		f[i] = rnd(&st);
	for (size_t n = 0; n <= 3000; n += (n < 600 ? 1 : 97))
	{
		nd_simhash_init(&acc);
		/* uneven batches cross the 255-feature spill point */
		for (size_t i = 0; i < n; i += 37)
			nd_simhash_add(&acc, f + i, (n - i < 37) ? n - i : 37);
		if (nd_simhash_result(&acc, &fp) != (n > 0) || fp != naive_simhash(f, n))
			good = 0;
	}
	ok(good, "bit-sliced counting equals the naive 64-way vote, 0..3000 features");

	/* long runs: every spill of the 16s and the 1s lanes, all batch shapes */
	{
		static uint64_t big[100000];
		static const size_t batches[] = {1, 3, 15, 16, 17, 37, 256, 100000};

		good = 1;
		for (size_t i = 0; i < 100000; i++)
			big[i] = rnd(&st) & (i % 3 ? ~0ull : 0xFFFF0000FFFF0000ull);	/* skewed bits */
		for (size_t b = 0; b < sizeof(batches) / sizeof(batches[0]); b++)
		{
			nd_simhash_init(&acc);
			for (size_t i = 0; i < 100000; i += batches[b])
				nd_simhash_add(&acc, big + i, (100000 - i < batches[b]) ? 100000 - i : batches[b]);
			if (!nd_simhash_result(&acc, &fp) || fp != naive_simhash(big, 100000))
			{
				good = 0;
				printf("# batch %zu differs\n", batches[b]);
			}
		}
		ok(good, "100000 features in batches of 1..100000 equal the naive vote");
	}

	{
		uint64_t	two[2] = {0xF0F0F0F0F0F0F0F0ull, 0x0F0F0F0F0F0F0F0Full};

		nd_simhash_init(&acc);
		nd_simhash_add(&acc, two, 2);
		ok(nd_simhash_result(&acc, &fp) && fp == 0, "ties vote 0");
		nd_simhash_init(&acc);
		nd_simhash_add(&acc, two, 1);
		ok(nd_simhash_result(&acc, &fp) && fp == two[0], "one feature is its own fingerprint");
	}

	nd_wsimhash_init(&w, test_realloc, NULL);
	ok(!nd_wsimhash_result(&w, &fp) && fp == 0, "weighted: nothing, no fingerprint");
	nd_wsimhash_add(&w, f[0], 0.0f);
	ok(!nd_wsimhash_result(&w, &fp), "weighted: zero weights do not count");
	nd_wsimhash_add(&w, 0xFFull, 3.0f);
	nd_wsimhash_add(&w, 0xF0ull, -2.0f);
	nd_wsimhash_add(&w, 0xF00ull, 1.5f);
	/* bits 0-3: 3+2-1.5; 4-7: 3-2-1.5; 8-11: -3+2+1.5; others: -3+2-1.5 */
	ok(nd_wsimhash_result(&w, &fp) && fp == 0xF0Full,
	   "weighted: votes add up with sign (got %016llx)", (unsigned long long) fp);
	nd_wsimhash_free(&w);

	nd_wsimhash_init(&w, test_realloc, NULL);
	nd_wsimhash_init(&w2, test_realloc, NULL);
	for (size_t i = 0; i < 1000; i++)
		nd_wsimhash_add(i % 2 ? &w : &w2, f[i], 1.0f);
	nd_wsimhash_merge(&w, &w2);
	ok(nd_wsimhash_result(&w, &fp) && fp == naive_simhash(f, 1000),
	   "weighted with unit weights and a merge equals the plain count");
	nd_wsimhash_free(&w);
	nd_wsimhash_free(&w2);

	test_wsimhash_exact(f);
}

int
main(void)
{
	test_spec();
	test_folding();
	test_long_tokens();
	test_chunking();
	test_chunking_intl();
	test_push_token();
	test_simhash();
	return tap_done();
}
