/*
 * libFuzzer harness for the tokenizer/shingler and the SimHash accumulator.
 *
 * Input: byte 0 picks the shingle size and unit, byte 1 the piece size for
 * a second, piecewise run; the rest is the text.  Besides the sanitizers'
 * checks it asserts the properties the SQL layer relies on: the same
 * features whatever the piece size, and a fingerprint that equals a naive
 * 64-way vote over those features.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nd_features.h"
#include "nd_simhash.h"

typedef struct
{
	uint64_t	sum;			/* order-sensitive digest of the features */
	uint64_t	n;
	int64_t		votes[64];
	nd_simhash_acc acc;
} digest;

static void
take(void *arg, const uint64_t *f, size_t n)
{
	digest	   *d = arg;

	for (size_t i = 0; i < n; i++)
	{
		d->sum = (d->sum ^ f[i]) * 0x100000001B3ull + 1;
		for (int b = 0; b < 64; b++)
			d->votes[b] += ((f[i] >> b) & 1) ? 1 : -1;
	}
	d->n += n;
	nd_simhash_add(&d->acc, f, n);
}

static size_t tokens_seen;

static void
see_token(void *arg, const uint8_t *bytes, size_t len, bool last)
{
	(void) arg;
	(void) bytes;
	if (len > ND_TOKEN_BLOCK)
		abort();
	if (last)
		tokens_seen++;
}

static void
run(const uint8_t *text, size_t len, int shingle, nd_unit unit, size_t piece,
	digest *d, bool observe)
{
	nd_shingler s;

	memset(d, 0, sizeof(*d));
	nd_simhash_init(&d->acc);
	nd_shingler_init(&s, shingle, unit, 0x5eed, take, d);
	if (observe)
	{
		s.token_sink = see_token;
		s.token_arg = NULL;
	}
	if (piece == 0)
		nd_shingler_feed(&s, (const char *) text, len);
	else
		for (size_t i = 0; i < len; i += piece)
			nd_shingler_feed(&s, (const char *) text + i, len - i < piece ? len - i : piece);
	nd_shingler_finish(&s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	digest		whole,
				parts;
	int			shingle;
	nd_unit		unit;
	size_t		piece;
	uint64_t	fp,
				naive = 0;

	if (size < 2)
		return 0;
	shingle = 1 + (data[0] & 7);
	unit = (data[0] & 8) ? ND_UNIT_CHAR : ND_UNIT_WORD;
	piece = 1 + data[1] % 17;

	tokens_seen = 0;
	run(data + 2, size - 2, shingle, unit, 0, &whole, true);
	run(data + 2, size - 2, shingle, unit, piece, &parts, false);
	if (whole.n != parts.n || whole.sum != parts.sum)
		abort();
	/* a shingle per token past the first shingle-1, or one for a short text */
	if (unit == ND_UNIT_WORD &&
		whole.n != (tokens_seen >= (size_t) shingle ? tokens_seen - shingle + 1 : (tokens_seen > 0)))
		abort();

	for (int b = 0; b < 64; b++)
		if (whole.votes[b] > 0)
			naive |= (uint64_t) 1 << b;
	if (nd_simhash_result(&whole.acc, &fp) != (whole.n > 0) || fp != naive)
		abort();
	return 0;
}
