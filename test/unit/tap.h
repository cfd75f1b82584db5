/* Minimal TAP output for the C unit tests: "ok N - what" / "not ok N - what". */
#ifndef ND_TAP_H
#define ND_TAP_H

#include <stdio.h>
#include <stdlib.h>

static int	tap_n = 0;
static int	tap_failed = 0;

#define ok(cond, ...) \
	do { \
		int			tap_pass_ = (cond) ? 1 : 0; \
		tap_n++; \
		if (tap_pass_) \
			printf("ok %d - ", tap_n); \
		else \
		{ \
			tap_failed++; \
			printf("not ok %d - ", tap_n); \
		} \
		printf(__VA_ARGS__); \
		printf("\n"); \
		if (!tap_pass_) \
			printf("#   failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
	} while (0)

static int
tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
