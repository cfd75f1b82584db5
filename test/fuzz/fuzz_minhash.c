/*
 * libFuzzer harness for the MinHash core: signatures of arbitrary feature
 * sets at arbitrary num_perm (densification's tables and walks), and b-bit
 * signatures read back from arbitrary bytes (minhash_bbit_jaccard() takes
 * user-supplied bytea).
 *
 * Input: bytes 0-1 pick num_perm (1 .. 8192), byte 2 bits; the rest is
 * taken as 64-bit features and, separately, as two candidate packed
 * signatures.  Besides the sanitizers' checks it asserts: every value of a
 * signature is one some feature produced alone (densification only
 * copies); a starts table changes nothing; a packed signature matches
 * itself everywhere; a header that parses describes exactly its length.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nd_minhash.h"

static uint64_t mins[ND_MINHASH_MAX_PERM];
static uint16_t starts[ND_MINHASH_MAX_PERM * ND_MINHASH_WALKS];
static uint32_t sig[ND_MINHASH_MAX_PERM],
			sig2[ND_MINHASH_MAX_PERM];
static uint8_t packed[ND_BBIT_HEADER + ND_MINHASH_MAX_PERM * 4];

static uint32_t
alone(uint64_t f)
{
	uint64_t	m[1];
	uint32_t	v;
	nd_minhash	mh;

	nd_minhash_init(&mh, 1, 0, m, NULL);
	nd_minhash_add(&mh, &f, 1);
	nd_minhash_result(&mh, &v);
	return v;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int			k,
				bits,
				hk,
				hb;
	size_t		n;
	uint64_t   *f;
	nd_minhash	mh;

	if (size < 3)
		return 0;
	k = 1 + ((data[0] | (data[1] << 8)) % ND_MINHASH_MAX_PERM);
	bits = 1 + data[2] % 32;
	data += 3;
	size -= 3;

	/* features: the rest as little 64-bit words (at most 64 of them) */
	n = size / 8 > 64 ? 64 : size / 8;
	f = malloc(sizeof(uint64_t) * (n + 1));
	for (size_t i = 0; i < n; i++)
		memcpy(&f[i], data + 8 * i, 8);

	nd_minhash_init(&mh, k, 0, mins, NULL);
	nd_minhash_add(&mh, f, n);
	if (nd_minhash_result(&mh, sig))
	{
		nd_minhash_starts(k, 0, starts);
		nd_minhash_init(&mh, k, 0, mins, starts);
		nd_minhash_add(&mh, f, n);
		nd_minhash_result(&mh, sig2);
		if (memcmp(sig, sig2, sizeof(uint32_t) * k) != 0)
			abort();

		/* seed 0 with one bin: a feature's value; every bin holds one */
		for (int i = 0; i < k; i += 1 + k / 16)
		{
			int			found = 0;

			for (size_t j = 0; j < n && !found; j++)
				found = sig[i] == alone(f[j]);
			if (!found)
				abort();
		}

		nd_bbit_pack(sig, k, bits, packed);
		if (!nd_bbit_header(packed, nd_bbit_size(k, bits), &hk, &hb) || hk != k || hb != bits)
			abort();
		if (nd_bbit_matches(packed, packed, k, bits) != k)
			abort();
	}
	else if (n != 0)
		abort();
	free(f);

	/* the input itself as a packed signature, compared with itself */
	if (nd_bbit_header(data, size, &hk, &hb))
	{
		if (size != nd_bbit_size(hk, hb))
			abort();
		if (nd_bbit_matches(data, data, hk, hb) != hk)
			abort();
	}
	return 0;
}
