/*-------------------------------------------------------------------------
 *
 * nd_features.h
 *		Text to features: tokenize, shingle, hash.
 *
 * A streaming state machine: text may be fed in pieces of any size (cut
 * anywhere, even inside a UTF-8 sequence) and yields exactly the features
 * of the whole text.  Memory is the fixed-size nd_shingler struct, whatever
 * the text's size; the caller decides how often to look for interrupts
 * between pieces.  Plain C, no server headers.
 *
 * The features (what doc/fingerprints.md specifies, and what the regression
 * tests pin):
 *
 *	tokens	word unit: maximal runs of word characters after folding
 *			(nd_unicode.h); every character of a script written without
 *			spaces (Han, kana, Thai, ...) is a token of its own.
 *			char unit: every folded character; each run of separators
 *			between two words becomes one space character.
 *	token hash	XXH3-64 of the token's UTF-8 bytes with the seed; a token
 *			longer than ND_TOKEN_BLOCK bytes is hashed block by block,
 *			each block seeded with the previous block's hash.
 *	shingle	every run of `shingle` consecutive tokens; a text with fewer
 *			tokens than that has one shingle of all its tokens, an empty one
 *			none.
 *	feature	the shingle's token hashes combined (nd_hash_shingle: each
 *			keyed by its position and folded by a 128-bit multiply, summed
 *			with the seed, murmur3-finalized; doc/fingerprints.md gives the
 *			constants).  A shingle occurring n times yields its feature n
 *			times, so features are weighted by count.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ND_FEATURES_H
#define ND_FEATURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ND_SHINGLE_MAX	64		/* largest shingle size, in tokens */
#define ND_TOKEN_BLOCK	256		/* token bytes hashed in one piece */
#define ND_FEATURE_BATCH 256	/* features handed to the sink at a time */

typedef enum nd_unit
{
	ND_UNIT_WORD = 0,
	ND_UNIT_CHAR = 1
} nd_unit;

/* Receives features in batches of up to ND_FEATURE_BATCH. */
typedef void (*nd_feature_sink) (void *arg, const uint64_t *features, size_t n);

/*
 * Optional observer of tokens, for the introspection functions: called with
 * consecutive pieces of a token's folded UTF-8 bytes, `last` set on the final
 * piece.  A token may arrive in several pieces when it is long.
 */
typedef void (*nd_token_sink) (void *arg, const uint8_t *bytes, size_t len, bool last);

typedef struct nd_shingler
{
	/* parameters */
	int			shingle;
	nd_unit		unit;
	uint64_t	seed;
	nd_feature_sink sink;
	void	   *sink_arg;
	nd_token_sink token_sink;
	void	   *token_arg;

	/* a UTF-8 sequence cut by the end of the previous piece */
	uint8_t		partial[4];
	int			npartial;

	/* the token being assembled */
	uint8_t		tok[ND_TOKEN_BLOCK];
	size_t		toklen;
	bool		in_token;
	bool		tok_chained;	/* earlier blocks are folded into tok_hash */
	uint64_t	tok_hash;

	/* char unit: a separator run seen since the last character */
	bool		space_pending;

	/*
	 * Token hashes, little-endian, the last `shingle` of them ending at
	 * win[nwin - 1]; slides back to the front when full.
	 */
	uint64_t	win[2 * ND_SHINGLE_MAX];
	int			nwin;
	uint64_t	ntokens;

	/* features not yet handed to the sink */
	uint64_t	out[ND_FEATURE_BATCH];
	size_t		nout;
	uint64_t	nfeatures;
} nd_shingler;

/*
 * Validates parameters: returns NULL when fine, else a static message
 * suitable for an error report.
 */
extern const char *nd_shingler_check(int shingle, nd_unit unit);

extern void nd_shingler_init(nd_shingler *s, int shingle, nd_unit unit,
							 uint64_t seed, nd_feature_sink sink, void *sink_arg);
extern void nd_shingler_feed(nd_shingler *s, const char *text, size_t len);
extern void nd_shingler_finish(nd_shingler *s);

/*
 * Adds one whole token from outside the tokenizer (a tsvector lexeme, say):
 * it is hashed and shingled exactly like a token found in text.  Must not be
 * mixed with nd_shingler_feed on the same shingler.
 */
extern void nd_shingler_push_token(nd_shingler *s, const char *token, size_t len);

/* Hashes the features functions share, so that every entry point agrees. */
extern uint64_t nd_hash_bytes(const void *p, size_t len, uint64_t seed);
extern uint64_t nd_hash_shingle(const uint64_t *token_hashes_le, int n, uint64_t seed);

#endif							/* ND_FEATURES_H */
