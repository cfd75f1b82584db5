/*-------------------------------------------------------------------------
 *
 * nd_unicode.h
 *		Character classes and folding for the neardup tokenizer.
 *
 * Plain C (no server headers), so the tokenizer can be unit-tested and
 * fuzzed on its own.  The tables are generated once by
 * src/core/gen_unicode_table.py and committed: fingerprints must not change
 * when the build machine's Unicode library does.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_UNICODE_H
#define ND_UNICODE_H

#include <stddef.h>
#include <stdint.h>

/* What a code point does to tokenization. */
typedef enum nd_char_class
{
	ND_CC_SEP = 0,				/* separator: ends the current word */
	ND_CC_WORD = 1,				/* part of a word (letters, digits, marks) */
	ND_CC_SOLO = 2,				/* script written without spaces (Han, kana,
								 * Thai, ...): a token of its own */
	ND_CC_IGNORE = 3			/* dropped, but does not end a word (combining
								 * diacritics folded away, format controls) */
} nd_char_class;

#define ND_FOLD_MAX 4			/* longest folded form, in code points */

/* Folded form of one code point. */
typedef struct nd_fold
{
	uint8_t		cls;			/* nd_char_class */
	uint8_t		n;				/* number of code points in cp[] (0..4) */
	uint32_t	cp[ND_FOLD_MAX];	/* the folded code points */
} nd_fold;

/*
 * Class and folded form of a code point.  Any uint32 is accepted: values
 * beyond U+10FFFF, surrogates and unassigned code points are separators.
 * ASCII is handled by the caller's fast path but works here too.  Returns
 * either an entry of the const tables or *scratch, filled in (most folds
 * are stored as an offset from the code point), so the result lives as
 * long as the caller's scratch.
 */
extern const nd_fold *nd_unicode_lookup(uint32_t cp, nd_fold *scratch);

/*
 * The lookup tables themselves, for callers that look up a character per
 * byte or two of text and cannot afford a call each time (the tokenizer's
 * fast paths): nd_unicode_entry() is nd_unicode_lookup() without the
 * materializing of relative entries.  nd_unicode.c checks that these
 * constants match the generated table.
 */
#define ND_FOLD_RELATIVE 0xFF	/* n of an entry folding to cp + cp[0] */
#define ND_UCD_BLOCK_SHIFT 7

typedef struct nd_ucd_tables
{
	const uint8_t *stage1;
	const uint16_t *stage2;
	const nd_fold *entries;
} nd_ucd_tables;

extern const nd_ucd_tables nd_ucd;

/* The raw table entry of cp <= U+10FFFF. */
static inline const nd_fold *
nd_unicode_entry(const nd_ucd_tables *t, uint32_t cp)
{
	return &t->entries[t->stage2[((uint32_t) t->stage1[cp >> ND_UCD_BLOCK_SHIFT]
								  << ND_UCD_BLOCK_SHIFT) |
								 (cp & ((1u << ND_UCD_BLOCK_SHIFT) - 1))]];
}

/*
 * Decodes one UTF-8 sequence from s[0..len).  Returns the number of bytes
 * consumed (1..4) and stores the code point in *cp.  An invalid or
 * truncated sequence consumes 1 byte and yields ND_UTF8_INVALID (a
 * separator); overlong forms and surrogates are invalid.  Returns 0 only
 * when len == 0.  When the sequence is valid so far but cut short by len,
 * returns -(bytes needed in total), so a streaming caller can wait for more.
 */
#define ND_UTF8_INVALID 0xFFFFFFFFu
extern int	nd_utf8_decode(const uint8_t *s, size_t len, uint32_t *cp);

/* Encodes cp (<= U+10FFFF) as UTF-8 into out[0..4); returns its length. */
extern int	nd_utf8_encode(uint32_t cp, uint8_t *out);

#endif							/* ND_UNICODE_H */
