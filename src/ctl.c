#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"

int
ctl_connect(const char *path)
{
	struct sockaddr_un	 sun;
	int			 fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		int saved = errno;

		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

static int
write_all(int fd, const char *p, size_t n)
{
	ssize_t	 w;

	while (n > 0) {
		if ((w = write(fd, p, n)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Buffered line reader over the socket; returns a line without newline. */
struct reader {
	int	 fd;
	char	 buf[65536];
	size_t	 len;
	char	*line;
};

static char *
read_line(struct reader *r)
{
	char	*nl;
	ssize_t	 n;

	if (r->line != NULL) {
		size_t used = strlen(r->line) + 1;

		memmove(r->buf, r->buf + used, r->len - used);
		r->len -= used;
		r->line = NULL;
	}
	for (;;) {
		if ((nl = memchr(r->buf, '\n', r->len)) != NULL) {
			*nl = '\0';
			return r->line = r->buf;
		}
		if (r->len == sizeof(r->buf)) {
			errno = EMSGSIZE;
			return NULL;
		}
		n = read(r->fd, r->buf + r->len, sizeof(r->buf) - r->len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = ECONNRESET;
			return NULL;
		}
		r->len += (size_t)n;
	}
}

static void
file_sink(const char *s, size_t len, void *arg)
{
	fwrite(s, 1, len, arg);
}

int
ctl_request(int fd, const char *request, FILE *out, FILE *msgout,
    enum out_format fmt, char *err, size_t errlen)
{
	struct reader	*r;
	struct out	*o;
	char		*line;
	int		 ret = -1;

	if ((o = out_new(fmt, file_sink, out)) == NULL) {
		snprintf(err, errlen, "%s", strerror(errno));
		return -1;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		out_free(o);
		snprintf(err, errlen, "%s", strerror(errno));
		return -1;
	}
	r->fd = fd;
	if (write_all(fd, request, strlen(request)) == -1 ||
	    write_all(fd, "\n", 1) == -1) {
		snprintf(err, errlen, "sending request: %s", strerror(errno));
		goto done;
	}
	while ((line = read_line(r)) != NULL) {
		if (strncmp(line, "%columns ", 9) == 0) {
			if (out_line(o, line) == -1)
				break;
		} else if (strncmp(line, "%message ", 9) == 0) {
			fprintf(msgout, "%s\n", line + 9);
		} else if (strcmp(line, "%end") == 0) {
			ret = 0;
			break;
		} else if (strncmp(line, "%error ", 7) == 0) {
			snprintf(err, errlen, "%s", line + 7);
			ret = 1;
			break;
		} else if (line[0] == '%') {
			snprintf(err, errlen, "unexpected reply '%s'", line);
			goto done;
		} else if (out_line(o, line) == -1)
			break;
	}
	if (line == NULL)
		snprintf(err, errlen, "reading reply: %s", strerror(errno));
	else if (ret == -1)
		snprintf(err, errlen, "out of memory");
	else if (ret == 0)
		out_end(o);
 done:
	out_free(o);
	free(r);
	return ret;
}
