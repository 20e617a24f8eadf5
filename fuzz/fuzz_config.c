/*
 * libFuzzer target: reading a configuration file.  Any bytes load without
 * a crash, every error names the file and a line that the file has, and
 * the count returned is the count reported.
 */
#include <sys/mman.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

struct seen {
	const char	*file;
	size_t		 lines;		/* in the input, a last one unended too */
	int		 errors;
};

static void
errf(const char *msg, void *arg)
{
	struct seen	*s = arg;
	size_t		 n = strlen(s->file);
	char		*end;
	long		 line;

	s->errors++;
	if (strncmp(msg, s->file, n) != 0 || msg[n] != ':')
		abort();
	if (msg[n + 1] == ' ')		/* about the whole file */
		return;
	line = strtol(msg + n + 1, &end, 10);
	if (end == msg + n + 1 || *end != ':' || line < 1 ||
	    (size_t)line > s->lines)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config	 cf;
	struct seen	 s;
	char		 file[64];
	size_t		 i;
	int		 fd, r;

	if ((fd = memfd_create("fuzz.conf", MFD_CLOEXEC)) == -1)
		abort();
	if (size > 0 && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(file, sizeof(file), "/proc/self/fd/%d", fd);
	s.file = file;
	s.lines = 1;
	s.errors = 0;
	for (i = 0; i < size; i++)
		if (data[i] == '\n')
			s.lines++;
	r = config_load(file, &cf, errf, &s);
	if (r < 0 || r != s.errors)
		abort();
	for (i = 0; i < cf.lines.n; i++)
		if (cf.lines.v[i].line < 1 ||
		    (size_t)cf.lines.v[i].line > s.lines)
			abort();
	config_clear(&cf);
	close(fd);
	return 0;
}
