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

static inline uint64_t
to_le64(uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return __builtin_bswap64(v);
#else
	return v;
#endif
}

uint64_t
nd_hash_bytes(const void *p, size_t len, uint64_t seed)
{
	return XXH3_64bits_withSeed(p, len, seed);
}

uint64_t
nd_hash_shingle(const uint64_t *token_hashes_le, int n, uint64_t seed)
{
	return XXH3_64bits_withSeed(token_hashes_le, (size_t) n * sizeof(uint64_t), seed);
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
		emit_feature(s, nd_hash_shingle(s->win + s->nwin - s->shingle,
										s->shingle, s->seed));
}

/* Folds a full block of a long token into the chained hash. */
static void
flush_token_block(nd_shingler *s)
{
	if (s->token_sink)
		s->token_sink(s->token_arg, s->tok, s->toklen, false);
	s->tok_hash = nd_hash_bytes(s->tok, s->toklen,
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
	h = nd_hash_bytes(s->tok, s->toklen, s->tok_chained ? s->tok_hash : s->seed);
	s->toklen = 0;
	s->tok_chained = false;
	s->in_token = false;
	add_token_hash(s, h);
}

static inline void
token_byte(nd_shingler *s, uint8_t b)
{
	if (s->toklen == ND_TOKEN_BLOCK)
		flush_token_block(s);
	s->tok[s->toklen++] = b;
	s->in_token = true;
}

static void
token_codepoint(nd_shingler *s, uint32_t cp)
{
	uint8_t		buf[4];
	int			n = nd_utf8_encode(cp, buf);

	for (int i = 0; i < n; i++)
		token_byte(s, buf[i]);
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

/* One non-ASCII (or invalid) code point. */
static void
add_codepoint(nd_shingler *s, uint32_t cp)
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

/* Consumes as much of p[0..len) as forms whole UTF-8 sequences. */
static size_t
feed_bytes(nd_shingler *s, const uint8_t *p, size_t len)
{
	size_t		i = 0;

	while (i < len)
	{
		uint8_t		b = p[i];

		if (b < 0x80)
		{
			uint8_t		w = ascii_word[b];

			if (s->unit == ND_UNIT_WORD)
			{
				if (w)
				{
					/* the hot loop: the rest of an ASCII word */
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
			int			n = nd_utf8_decode(p + i, len - i, &cp);

			if (n < 0)
				break;			/* cut short: wait for the next piece */
			add_codepoint(s, cp);
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
			add_codepoint(s, cp);
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
		add_codepoint(s, ND_UTF8_INVALID);
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
		emit_feature(s, nd_hash_shingle(s->win + s->nwin - s->ntokens,
										(int) s->ntokens, s->seed));

	if (s->nout > 0)
	{
		s->sink(s->sink_arg, s->out, s->nout);
		s->nfeatures += s->nout;
		s->nout = 0;
	}
}
