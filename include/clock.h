/*
 * The daemon's clock: monotonic, in milliseconds or microseconds.  Every
 * module that needs the time takes it from here (or is handed a function
 * like these, so that a test can drive time).
 */
#ifndef VNET_CLOCK_H
#define VNET_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t
clock_now_us(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static inline uint64_t
clock_now_ms(void)
{
	return clock_now_us() / 1000;
}

#endif
