/*-------------------------------------------------------------------------
 *
 * nd_features.c
 *		Streaming tokenizer and shingler (see nd_features.h for the spec).
 *
 * The hot path is ASCII words: one table lookup per byte decides whether the
 * byte continues a word (and gives its lower-case form); everything else
 * goes through the Unicode tables.
 *
 *-------------------------------------------------------------------------
 */
#include "nd_features.h"

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "nd_mix.h"
#include "nd_unicode.h"
#include "xxhash.h"

/* ASCII bytes: 0 = not part of a word, else the folded (lower-case) byte */
static const uint8_t ascii_word[128] = {
	['0'] = '0',['1'] = '1',['2'] = '2',['3'] = '3',['4'] = '4',
	['5'] = '5',['6'] = '6',['7'] = '7',['8'] = '8',['9'] = '9',
#define L(c) [c] = c, [c - 'a' + 'A'] = c
	L('a'), L('b'), L('c'), L('d'), L('e'), L('f'), L('g'), L('h'), L('i'),
	L('j'), L('k'), L('l'), L('m'), L('n'), L('o'), L('p'), L('q'), L('r'),
	L('s'), L('t'), L('u'), L('v'), L('w'), L('x'), L('y'), L('z'),
#undef L
};

/*
 * Bytes by what the word tokenizer's fast path may do with them:
 * IN_PLACE bytes (a-z, 0-9) need no folding, so a token made only of them
 * is hashed where it lies in the input, without a copy.
 */
#define BC_SEP		0			/* ASCII, not part of a word */
#define BC_IN_PLACE 1			/* a-z, 0-9 */
#define BC_FOLD		2			/* A-Z */
#define BC_UTF8		3			/* 0x80-0xFF: a multi-byte sequence */
static const uint8_t byte_class[256] = {
	['0'] = 1,['1'] = 1,['2'] = 1,['3'] = 1,['4'] = 1,
	['5'] = 1,['6'] = 1,['7'] = 1,['8'] = 1,['9'] = 1,
#define L(c) [c] = 1, [c - 'a' + 'A'] = 2
	L('a'), L('b'), L('c'), L('d'), L('e'), L('f'), L('g'), L('h'), L('i'),
	L('j'), L('k'), L('l'), L('m'), L('n'), L('o'), L('p'), L('q'), L('r'),
	L('s'), L('t'), L('u'), L('v'), L('w'), L('x'), L('y'), L('z'),
#undef L
#define U16(b) [b] = 3, [b + 1] = 3, [b + 2] = 3, [b + 3] = 3, [b + 4] = 3, \
	[b + 5] = 3, [b + 6] = 3, [b + 7] = 3, [b + 8] = 3, [b + 9] = 3, [b + 10] = 3, \
	[b + 11] = 3, [b + 12] = 3, [b + 13] = 3, [b + 14] = 3, [b + 15] = 3
	U16(0x80), U16(0x90), U16(0xA0), U16(0xB0), U16(0xC0), U16(0xD0), U16(0xE0), U16(0xF0),
#undef U16
};

static inline uint64_t
to_le64(uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return __builtin_bswap64(v);
#else
	return v;
#endif
}

#define from_le64 to_le64

/* Inlined into the hot paths; the extern versions are for other callers. */
static inline uint64_t
hash_bytes(const void *p, size_t len, uint64_t seed)
{
	return XXH3_64bits_withSeed(p, len, seed);
}

/*
 * A shingle's feature from its token hashes, which are already XXH3 hashes.
 * Each token hash is keyed by its position and folded (the 128-bit
 * product's halves xor-ed, as in wyhash); the sum, with the seed, goes
 * through the murmur3 finalizer.  The folds are independent of each other,
 * so they run in parallel: a fraction of the cost of hashing the token
 * hashes' bytes again, and as good for SimHash, which needs every feature
 * bit to be close to an independent fair coin.
 */
static inline uint64_t
hash_shingle(const uint64_t *token_hashes_le, int n, uint64_t seed)
{
	uint64_t	acc = seed ^ ((uint64_t) n * 0x9E3779B185EBCA87ull);

#define FOLD(i) nd_mul_fold(from_le64(token_hashes_le[i]) ^ ((uint64_t) ((i) + 1) * 0xA0761D6478BD642Full), \
						 0xE7037ED1A0B428DBull)
	if (n == 3)					/* the default, unrolled */
		acc += FOLD(0) + FOLD(1) + FOLD(2);
	else
		for (int i = 0; i < n; i++)
			acc += FOLD(i);
#undef FOLD
	return nd_fmix64(acc);
}

uint64_t
nd_hash_bytes(const void *p, size_t len, uint64_t seed)
{
	return hash_bytes(p, len, seed);
}

uint64_t
nd_hash_shingle(const uint64_t *token_hashes_le, int n, uint64_t seed)
{
	return hash_shingle(token_hashes_le, n, seed);
}

const char *
nd_shingler_check(int shingle, nd_unit unit)
{
	if (shingle < 1 || shingle > ND_SHINGLE_MAX)
		return "shingle size must be between 1 and 64";
	if (unit != ND_UNIT_WORD && unit != ND_UNIT_CHAR)
		return "unit must be \"word\" or \"char\"";
	return NULL;
}

void
nd_shingler_init(nd_shingler *s, int shingle, nd_unit unit, uint64_t seed,
				 nd_feature_sink sink, void *sink_arg)
{
	memset(s, 0, offsetof(nd_shingler, tok));
	s->shingle = shingle;
	s->unit = unit;
	s->seed = seed;
	s->sink = sink;
	s->sink_arg = sink_arg;
	s->toklen = 0;
	s->in_token = false;
	s->tok_chained = false;
	s->space_pending = false;
	s->nwin = 0;
	s->ntokens = 0;
	s->nout = 0;
	s->nfeatures = 0;
}

static inline void
emit_feature(nd_shingler *s, uint64_t f)
{
	s->out[s->nout++] = f;
	if (s->nout == ND_FEATURE_BATCH)
	{
		s->sink(s->sink_arg, s->out, s->nout);
		s->nfeatures += s->nout;
		s->nout = 0;
	}
}

/* A token's hash enters the window; a full window is a shingle. */
static inline void
add_token_hash(nd_shingler *s, uint64_t h)
{
	if (s->nwin == 2 * ND_SHINGLE_MAX)
	{
		memmove(s->win, s->win + s->nwin - (s->shingle - 1),
				(size_t) (s->shingle - 1) * sizeof(uint64_t));
		s->nwin = s->shingle - 1;
	}
	s->win[s->nwin++] = to_le64(h);
	s->ntokens++;
	if (s->ntokens >= (uint64_t) s->shingle)
		emit_feature(s, hash_shingle(s->win + s->nwin - s->shingle,
										s->shingle, s->seed));
}

/* Folds a full block of a long token into the chained hash. */
static void
flush_token_block(nd_shingler *s)
{
	if (s->token_sink)
		s->token_sink(s->token_arg, s->tok, s->toklen, false);
	s->tok_hash = hash_bytes(s->tok, s->toklen,
								s->tok_chained ? s->tok_hash : s->seed);
	s->tok_chained = true;
	s->toklen = 0;
}

static void
end_token(nd_shingler *s)
{
	uint64_t	h;

	if (s->token_sink)
		s->token_sink(s->token_arg, s->tok, s->toklen, true);
	h = hash_bytes(s->tok, s->toklen, s->tok_chained ? s->tok_hash : s->seed);
	s->toklen = 0;
	s->tok_chained = false;
	s->in_token = false;
	add_token_hash(s, h);
}

/* ASCII scanning, 16 bytes at a time where SSE2 is there (all of x86-64). */
#ifdef __SSE2__
static inline __m128i
in_range(__m128i v, char lo, char hi)
{
	/* signed compares: bytes >= 0x80 are negative, so never in range */
	return _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(lo - 1)),
						 _mm_cmplt_epi8(v, _mm_set1_epi8(hi + 1)));
}
#endif

/* Length of the run of ASCII separators at p[0..len). */
static inline size_t
sep_run(const uint8_t *p, size_t len)
{
	size_t		j = 0;

#ifdef __SSE2__
	while (j + 16 <= len)
	{
		__m128i		v = _mm_loadu_si128((const __m128i *) (p + j));
		__m128i		folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
		unsigned	m = (unsigned) _mm_movemask_epi8(_mm_or_si128(in_range(folded, 'a', 'z'),
																  in_range(v, '0', '9'))) |
			(unsigned) _mm_movemask_epi8(v);

		if (m != 0)
			return j + __builtin_ctz(m);
		j += 16;
	}
#endif
	while (j < len && byte_class[p[j]] == BC_SEP)
		j++;
	return j;
}

/*
 * Measures the ASCII word at p (letters and digits; *has_upper if it has
 * capitals) and the run of ASCII separators after it: *word_len, *sep_len.
 * Both come from one 16-byte window in the common case.  A word with
 * capitals that fits in the first window is also stored, folded, at
 * fold_to (16 bytes of room), and *folded says so.
 */
static inline void
scan_word(const uint8_t *p, size_t len, size_t *word_len, size_t *sep_len,
		  bool *has_upper, uint8_t *fold_to, bool *folded)
{
	size_t		j = 0;
	bool		upper = false;

	*folded = false;

#ifdef __SSE2__
	while (j + 16 <= len)
	{
		__m128i		v = _mm_loadu_si128((const __m128i *) (p + j));
		__m128i		lower = _mm_or_si128(v, _mm_set1_epi8(0x20));
		unsigned	letter = (unsigned) _mm_movemask_epi8(in_range(lower, 'a', 'z'));
		unsigned	alnum = letter | (unsigned) _mm_movemask_epi8(in_range(v, '0', '9'));

		if (alnum != 0xFFFF)
		{
			unsigned	n = (unsigned) __builtin_ctz(~alnum);
			unsigned	capital = letter & ~(unsigned) _mm_movemask_epi8(_mm_cmpeq_epi8(lower, v));
			unsigned	rest = (alnum | (unsigned) _mm_movemask_epi8(v)) >> n;

			*has_upper = upper || (capital & ((1u << n) - 1)) != 0;
			/* a short word with capitals: its folded form is at hand */
			if (j == 0 && *has_upper)
			{
				_mm_storeu_si128((__m128i *) fold_to, lower);
				*folded = true;
			}
			*word_len = j + n;
			if (rest != 0)
				*sep_len = (size_t) __builtin_ctz(rest);
			else
				*sep_len = (16 - n) + sep_run(p + j + 16, len - j - 16);
			return;
		}
		upper |= (letter & ~(unsigned) _mm_movemask_epi8(_mm_cmpeq_epi8(lower, v))) != 0;
		j += 16;
	}
#endif
	for (; j < len; j++)
	{
		uint8_t		c = byte_class[p[j]];

		if (c != BC_IN_PLACE && c != BC_FOLD)
			break;
		upper |= c == BC_FOLD;
	}
	*has_upper = upper;
	*word_len = j;
	*sep_len = sep_run(p + j, len - j);
}

static inline void
token_byte(nd_shingler *s, uint8_t b)
{
	if (s->toklen == ND_TOKEN_BLOCK)
		flush_token_block(s);
	s->tok[s->toklen++] = b;
	s->in_token = true;
}

static inline void
token_bytes(nd_shingler *s, const uint8_t *b, int n)
{
	if (s->toklen + n <= ND_TOKEN_BLOCK)
	{
		/* a character's 1-4 bytes: a call to memcpy would cost more */
		for (int i = 0; i < n; i++)
			s->tok[s->toklen + i] = b[i];
		s->toklen += n;
		s->in_token = true;
	}
	else
		for (int i = 0; i < n; i++)
			token_byte(s, b[i]);
}

static inline void
token_codepoint(nd_shingler *s, uint32_t cp)
{
	uint8_t		buf[4];

	token_bytes(s, buf, nd_utf8_encode(cp, buf));
}

/* char unit: every folded character is a token of its own. */
static void
char_token(nd_shingler *s, uint32_t cp)
{
	if (s->space_pending)
	{
		s->space_pending = false;
		if (s->ntokens > 0)
		{
			token_byte(s, ' ');
			end_token(s);
		}
	}
	token_codepoint(s, cp);
	end_token(s);
}

/*
 * One non-ASCII (or invalid) code point; raw[0..nraw) is its UTF-8 encoding
 * when it was well-formed (NULL for an invalid byte).
 */
static void
add_codepoint(nd_shingler *s, uint32_t cp, const uint8_t *raw, int nraw)
{
	nd_fold		scratch;
	const nd_fold *f = nd_unicode_lookup(cp, &scratch);

	switch ((nd_char_class) f->cls)
	{
		case ND_CC_IGNORE:
			break;
		case ND_CC_SEP:
			if (s->unit == ND_UNIT_CHAR)
				s->space_pending = true;
			else if (s->in_token)
				end_token(s);
			break;
		case ND_CC_WORD:
			if (s->unit == ND_UNIT_CHAR)
				for (int i = 0; i < f->n; i++)
					char_token(s, f->cp[i]);
			else if (f->n == 1 && f->cp[0] == cp && raw != NULL)
				token_bytes(s, raw, nraw);	/* folds to itself: as written */
			else
				for (int i = 0; i < f->n; i++)
					token_codepoint(s, f->cp[i]);
			break;
		case ND_CC_SOLO:
			if (s->unit == ND_UNIT_CHAR)
			{
				for (int i = 0; i < f->n; i++)
					char_token(s, f->cp[i]);
				break;
			}
			if (s->in_token)
				end_token(s);
			for (int i = 0; i < f->n; i++)
				token_codepoint(s, f->cp[i]);
			if (s->in_token)
				end_token(s);
			break;
	}
}

/*
 * The hot path of the word tokenizer: consumes ASCII words, each followed
 * by ASCII separators within this piece, for as long as they come.  Such a
 * word is hashed where it lies (or from a folded copy when it has
 * capitals); the shingler's counters live in registers meanwhile.  Returns
 * the bytes consumed, 0 when the text at p is not such a word.
 */
static size_t
ascii_words(nd_shingler *s, const uint8_t *p, size_t len)
{
	const int	k = s->shingle;
	const uint64_t seed = s->seed;
	int			nwin = s->nwin;
	uint64_t	ntokens = s->ntokens;
	size_t		nout = s->nout;
	size_t		i = 0;

	while (i < len)
	{
		bool		upper,
					folded;
		size_t		n,
					seps;
		uint64_t	h;

		scan_word(p + i, len - i, &n, &seps, &upper, s->tok, &folded);
		if (n == 0 || seps == 0 || n > ND_TOKEN_BLOCK)
			break;
		if (s->token_sink)
			break;				/* introspection takes the general path */
		if (upper)
		{
			if (!folded)
				for (size_t j = 0; j < n; j++)
					s->tok[j] = ascii_word[p[i + j]];
			h = hash_bytes(s->tok, n, seed);
		}
		else
			h = hash_bytes(p + i, n, seed);

		if (nwin == 2 * ND_SHINGLE_MAX)
		{
			memmove(s->win, s->win + nwin - (k - 1), (size_t) (k - 1) * sizeof(uint64_t));
			nwin = k - 1;
		}
		s->win[nwin++] = to_le64(h);
		if (++ntokens >= (uint64_t) k)
		{
			s->out[nout++] = hash_shingle(s->win + nwin - k, k, seed);
			if (nout == ND_FEATURE_BATCH)
			{
				s->sink(s->sink_arg, s->out, nout);
				s->nfeatures += nout;
				nout = 0;
			}
		}
		i += n + seps;
	}
	s->nwin = nwin;
	s->ntokens = ntokens;
	s->nout = nout;
	return i;
}

/*
 * UTF-8 of a folded code point (a Unicode scalar value, as the tables
 * guarantee), without a call for the common lengths.
 */
static inline int
put_utf8(uint32_t cp, uint8_t *out)
{
	if (cp < 0x800)
	{
		if (cp < 0x80)
		{
			out[0] = (uint8_t) cp;
			return 1;
		}
		out[0] = (uint8_t) (0xC0 | (cp >> 6));
		out[1] = (uint8_t) (0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0xD800 || (cp >= 0xE000 && cp < 0x10000))
	{
		out[0] = (uint8_t) (0xE0 | (cp >> 12));
		out[1] = (uint8_t) (0x80 | ((cp >> 6) & 0x3F));
		out[2] = (uint8_t) (0x80 | (cp & 0x3F));
		return 3;
	}
	return nd_utf8_encode(cp, out);
}

/* A token's hash enters the window, with the counters in the caller's locals. */
static inline void
push_hash(nd_shingler *s, int *nwin, uint64_t *ntokens, size_t *nout, uint64_t h)
{
	const int	k = s->shingle;

	if (*nwin == 2 * ND_SHINGLE_MAX)
	{
		memmove(s->win, s->win + *nwin - (k - 1), (size_t) (k - 1) * sizeof(uint64_t));
		*nwin = k - 1;
	}
	s->win[(*nwin)++] = to_le64(h);
	if (++(*ntokens) >= (uint64_t) k)
	{
		s->out[(*nout)++] = hash_shingle(s->win + *nwin - k, k, s->seed);
		if (*nout == ND_FEATURE_BATCH)
		{
			s->sink(s->sink_arg, s->out, *nout);
			s->nfeatures += *nout;
			*nout = 0;
		}
	}
}

/*
 * Decodes a complete, well-formed two- or three-byte UTF-8 sequence at
 * p[0..len) inline: returns its length, or 0 for anything else (ASCII, four
 * bytes, invalid, cut short), which nd_utf8_decode() then handles.
 */
static inline int
decode_2or3(const uint8_t *p, size_t len, uint32_t *cp)
{
	uint8_t		b = p[0];

	if (b >= 0xC2 && b < 0xE0)
	{
		if (len < 2 || (p[1] & 0xC0) != 0x80)
			return 0;
		*cp = ((uint32_t) (b & 0x1F) << 6) | (p[1] & 0x3F);
		return 2;
	}
	if (b >= 0xE0 && b < 0xF0)
	{
		if (len < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80)
			return 0;
		*cp = ((uint32_t) (b & 0x0F) << 12) | ((uint32_t) (p[1] & 0x3F) << 6) | (p[2] & 0x3F);
		if (*cp < 0x800 || (*cp >= 0xD800 && *cp <= 0xDFFF))
			return 0;			/* overlong or surrogate: invalid */
		return 3;
	}
	return 0;
}

/*
 * The word tokenizer's path for text that is not ASCII words: two- and
 * three-byte characters (Latin, Greek, Cyrillic, Han, kana, ...), with the
 * ASCII separators and letters between and inside them.  It does what
 * add_codepoint() does, one table lookup per character, with the token and
 * the shingler's counters in locals.  It stops, leaving the rest to the
 * general path, at anything less common: a four-byte or invalid or cut
 * sequence, a token about to fill its block, an ASCII letter that starts
 * a word (ascii_words() takes those).  Returns the bytes consumed.
 */
static size_t
utf8_words(nd_shingler *s, const uint8_t *p, size_t len)
{
	const nd_ucd_tables *const ucd = &nd_ucd;
	const uint64_t seed = s->seed;
	uint8_t    *const tok = s->tok;
	int			nwin = s->nwin;
	uint64_t	ntokens = s->ntokens;
	size_t		nout = s->nout;
	size_t		toklen = s->toklen;
	bool		in_token = s->in_token;
	size_t		i = 0;

#define END_TOKEN() \
	do { \
		push_hash(s, &nwin, &ntokens, &nout, \
				  hash_bytes(tok, toklen, s->tok_chained ? s->tok_hash : seed)); \
		s->tok_chained = false; \
		toklen = 0; \
		in_token = false; \
	} while (0)

	while (i < len)
	{
		uint32_t	b = p[i];
		uint32_t	cp;
		int			n;
		const nd_fold *e;

		if (b < 0x80)
		{
			uint8_t		w = ascii_word[b];

			if (w)
			{
				if (!in_token || toklen == ND_TOKEN_BLOCK)
					break;
				tok[toklen++] = w;
			}
			else if (in_token)
				END_TOKEN();
			i++;
			continue;
		}
		n = decode_2or3(p + i, len - i, &cp);
		if (n == 0)
			break;

		e = nd_unicode_entry(ucd, cp);
		switch ((nd_char_class) e->cls)
		{
			case ND_CC_WORD:
				/* room for the longest fold (4 code points of 4 bytes) */
				if (toklen + 4 * ND_FOLD_MAX > ND_TOKEN_BLOCK)
					goto out;
				if (e->n == ND_FOLD_RELATIVE)
				{
					if (e->cp[0] == 0)
					{
						/* folds to itself: as written */
						tok[toklen] = p[i];
						tok[toklen + 1] = p[i + 1];
						if (n == 3)
							tok[toklen + 2] = p[i + 2];
						toklen += n;
					}
					else
						toklen += put_utf8(cp + e->cp[0], tok + toklen);
				}
				else
					for (int j = 0; j < e->n; j++)
						toklen += put_utf8(e->cp[j], tok + toklen);
				in_token = true;
				break;
			case ND_CC_IGNORE:
				break;
			case ND_CC_SEP:
				if (in_token)
					END_TOKEN();
				break;
			case ND_CC_SOLO:
				if (in_token)
					END_TOKEN();
				/* a token of its own, hashed without a copy when unfolded */
				if (e->n == ND_FOLD_RELATIVE && e->cp[0] == 0)
					push_hash(s, &nwin, &ntokens, &nout, hash_bytes(p + i, n, seed));
				else
				{
					/* folded into the token buffer, empty after END_TOKEN */
					size_t		nbuf = 0;

					if (e->n == ND_FOLD_RELATIVE)
						nbuf = put_utf8(cp + e->cp[0], tok);
					else
						for (int j = 0; j < e->n; j++)
							nbuf += put_utf8(e->cp[j], tok + nbuf);
					push_hash(s, &nwin, &ntokens, &nout, hash_bytes(tok, nbuf, seed));
				}
				break;
		}
		i += n;
	}
out:
#undef END_TOKEN
	s->nwin = nwin;
	s->ntokens = ntokens;
	s->nout = nout;
	s->toklen = toklen;
	s->in_token = in_token;
	return i;
}

/*
 * The char unit's path: char_token() for every character of one, two or
 * three bytes, with the shingler's counters in locals.  Stops, leaving the
 * rest to the general path, at a four-byte, invalid or cut sequence.
 * Returns the bytes consumed.
 */
static size_t
utf8_chars(nd_shingler *s, const uint8_t *p, size_t len)
{
	const nd_ucd_tables *const ucd = &nd_ucd;
	const uint64_t seed = s->seed;
	const uint64_t space_hash = hash_bytes(" ", 1, seed);
	uint8_t    *const tok = s->tok;
	int			nwin = s->nwin;
	uint64_t	ntokens = s->ntokens;
	size_t		nout = s->nout;
	bool		space_pending = s->space_pending;
	size_t		i = 0;

	/* as char_token(): a pending separator run first, then the character */
#define CHAR_TOKEN(bytes, nbytes) \
	do { \
		if (space_pending) \
		{ \
			space_pending = false; \
			if (ntokens > 0) \
				push_hash(s, &nwin, &ntokens, &nout, space_hash); \
		} \
		push_hash(s, &nwin, &ntokens, &nout, hash_bytes((bytes), (nbytes), seed)); \
	} while (0)

	while (i < len)
	{
		uint32_t	b = p[i];
		uint32_t	cp;
		int			n;
		const nd_fold *e;

		if (b < 0x80)
		{
			uint8_t		w = ascii_word[b];

			if (w)
			{
				tok[0] = w;
				CHAR_TOKEN(tok, 1);
			}
			else
				space_pending = true;
			i++;
			continue;
		}
		n = decode_2or3(p + i, len - i, &cp);
		if (n == 0)
			break;

		e = nd_unicode_entry(ucd, cp);
		switch ((nd_char_class) e->cls)
		{
			case ND_CC_IGNORE:
				break;
			case ND_CC_SEP:
				space_pending = true;
				break;
			case ND_CC_WORD:
			case ND_CC_SOLO:
				if (e->n == ND_FOLD_RELATIVE)
				{
					if (e->cp[0] == 0)
						CHAR_TOKEN(p + i, (size_t) n);	/* as written */
					else
					{
						int			nb = put_utf8(cp + e->cp[0], tok);

						CHAR_TOKEN(tok, (size_t) nb);
					}
				}
				else
					for (int j = 0; j < e->n; j++)
					{
						int			nb = put_utf8(e->cp[j], tok);

						CHAR_TOKEN(tok, (size_t) nb);
					}
				break;
		}
		i += n;
	}
#undef CHAR_TOKEN
	s->nwin = nwin;
	s->ntokens = ntokens;
	s->nout = nout;
	s->space_pending = space_pending;
	return i;
}

/* Consumes as much of p[0..len) as forms whole UTF-8 sequences. */
static size_t
feed_bytes(nd_shingler *s, const uint8_t *p, size_t len)
{
	size_t		i = 0;

	while (i < len)
	{
		uint8_t		b = p[i];

		if (s->unit == ND_UNIT_CHAR && s->token_sink == NULL && s->toklen == 0)
		{
			size_t		used = utf8_chars(s, p + i, len - i);

			if (used > 0)
			{
				i += used;
				continue;
			}
		}

		if (b < 0x80)
		{
			uint8_t		w = ascii_word[b];

			if (s->unit == ND_UNIT_WORD)
			{
				if (w)
				{
					/* the hottest path: a run of whole ASCII words */
					if (!s->in_token)
					{
						size_t		used = ascii_words(s, p + i, len - i);

						if (used > 0)
						{
							i += used;
							continue;
						}
					}
					/* otherwise: fold and copy the rest of the word */
					do
					{
						if (s->toklen == ND_TOKEN_BLOCK)
							flush_token_block(s);
						s->tok[s->toklen++] = w;
						i++;
					} while (i < len && p[i] < 0x80 && (w = ascii_word[p[i]]) != 0);
					s->in_token = true;
				}
				else
				{
					if (s->in_token)
						end_token(s);
					i++;
				}
			}
			else
			{
				if (w)
					char_token(s, w);
				else
					s->space_pending = true;
				i++;
			}
		}
		else
		{
			uint32_t	cp;
			int			n;

			if (s->unit == ND_UNIT_WORD && s->token_sink == NULL)
			{
				size_t		used = utf8_words(s, p + i, len - i);

				if (used > 0)
				{
					i += used;
					continue;
				}
			}

			n = decode_2or3(p + i, len - i, &cp);
			if (n == 0)
			{
				n = nd_utf8_decode(p + i, len - i, &cp);
				if (n < 0)
					break;		/* cut short: wait for the next piece */
			}
			add_codepoint(s, cp, cp == ND_UTF8_INVALID ? NULL : p + i, n);
			i += n;
		}
	}
	return i;
}

void
nd_shingler_feed(nd_shingler *s, const char *text, size_t len)
{
	const uint8_t *p = (const uint8_t *) text;

	/* complete a sequence left over from the previous piece */
	while (s->npartial > 0 && len > 0)
	{
		uint32_t	cp;
		int			n;

		s->partial[s->npartial++] = *p++;
		len--;
		n = nd_utf8_decode(s->partial, s->npartial, &cp);
		if (n < 0)
			continue;			/* still incomplete */
		/* decoded (or invalid, consuming only its first byte) */
		{
			uint8_t		rest[4];
			int			nrest = s->npartial - n;

			memcpy(rest, s->partial + n, nrest);
			s->npartial = 0;
			add_codepoint(s, cp, cp == ND_UTF8_INVALID ? NULL : s->partial, n);
			/* bytes after an invalid lead byte are re-examined */
			if (nrest > 0)
			{
				size_t		used = feed_bytes(s, rest, nrest);

				if (used < (size_t) nrest)
				{
					memcpy(s->partial, rest + used, nrest - used);
					s->npartial = (int) (nrest - used);
				}
			}
		}
	}

	if (len > 0)
	{
		size_t		used = feed_bytes(s, p, len);

		if (used < len)
		{
			memcpy(s->partial, p + used, len - used);
			s->npartial = (int) (len - used);
		}
	}
}

void
nd_shingler_push_token(nd_shingler *s, const char *token, size_t len)
{
	const uint8_t *p = (const uint8_t *) token;

	for (size_t i = 0; i < len; i++)
		token_byte(s, p[i]);
	end_token(s);
}

void
nd_shingler_finish(nd_shingler *s)
{
	/* a truncated sequence at the very end: each byte is invalid */
	while (s->npartial > 0)
	{
		uint8_t		rest[4];
		int			nrest = s->npartial - 1;

		memcpy(rest, s->partial + 1, nrest);
		s->npartial = 0;
		add_codepoint(s, ND_UTF8_INVALID, NULL, 0);
		if (nrest > 0)
		{
			size_t		used = feed_bytes(s, rest, nrest);

			memcpy(s->partial, rest + used, nrest - used);
			s->npartial = (int) (nrest - used);
		}
	}

	if (s->in_token)
		end_token(s);

	/* a text shorter than one shingle is a single shingle of all of it */
	if (s->ntokens > 0 && s->ntokens < (uint64_t) s->shingle)
		emit_feature(s, hash_shingle(s->win + s->nwin - s->ntokens,
										(int) s->ntokens, s->seed));

	if (s->nout > 0)
	{
		s->sink(s->sink_arg, s->out, s->nout);
		s->nfeatures += s->nout;
		s->nout = 0;
	}
}
