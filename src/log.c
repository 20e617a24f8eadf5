#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

/*
 * Set once by log_init() before anything else runs and only read after:
 * passing a context into every log call would buy nothing.
 */
static struct {
	int	foreground;
	int	verbose;
	int	journal;	/* stderr is systemd's journal */
	char	name[32];
} logcfg = { 1, 0, 0, "vnet" };

/*
 * systemd names the stream it connected to standard error in
 * $JOURNAL_STREAM (DEVICE:INODE); only when it is still that stream do
 * lines carry a priority for the journal instead of a time of their own.
 */
static int
log_is_journal(void)
{
	const char		*env = getenv("JOURNAL_STREAM");
	struct stat		 sb;
	unsigned long long	 dev, ino;

	if (env == NULL || sscanf(env, "%llu:%llu", &dev, &ino) != 2 ||
	    fstat(STDERR_FILENO, &sb) == -1)
		return 0;
	return (unsigned long long)sb.st_dev == dev &&
	    (unsigned long long)sb.st_ino == ino;
}

void
log_init(const char *progname, int foreground, int verbose)
{
	snprintf(logcfg.name, sizeof(logcfg.name), "%s", progname);
	logcfg.foreground = foreground;
	logcfg.verbose = verbose;
	logcfg.journal = foreground && log_is_journal();
	if (!foreground)
		openlog(logcfg.name, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

static void
vlog(int pri, const char *fmt, va_list ap, const char *suffix)
{
	char		 msg[1024];
	struct timespec	 ts;
	struct tm	 tm;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	/*
	 * A daemon that cannot start, or starts with a warning, says so where
	 * it was started, too: until it detaches, standard error is still the
	 * terminal (after, /dev/null).
	 */
	if (!logcfg.foreground && pri <= LOG_WARNING)
		fprintf(stderr, "%s: %s%s%s\n", logcfg.name, msg,
		    suffix ? ": " : "", suffix ? suffix : "");
	if (logcfg.journal)
		fprintf(stderr, "<%d>%s%s%s\n", pri, msg, suffix ? ": " : "",
		    suffix ? suffix : "");
	else if (logcfg.foreground) {
		clock_gettime(CLOCK_REALTIME, &ts);
		localtime_r(&ts.tv_sec, &tm);
		fprintf(stderr, "%02d:%02d:%02d.%03ld %s: %s%s%s\n",
		    tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
		    logcfg.name, msg, suffix ? ": " : "", suffix ? suffix : "");
	} else
		syslog(pri, "%s%s%s", msg, suffix ? ": " : "",
		    suffix ? suffix : "");
}

void
log_warn(const char *fmt, ...)
{
	va_list	 ap;
	int	 saved = errno;

	va_start(ap, fmt);
	vlog(LOG_WARNING, fmt, ap, strerror(saved));
	va_end(ap);
	errno = saved;
}

void
log_warnx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_WARNING, fmt, ap, NULL);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_INFO, fmt, ap, NULL);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list	 ap;

	if (logcfg.verbose < 1)
		return;
	va_start(ap, fmt);
	vlog(LOG_DEBUG, fmt, ap, NULL);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list	 ap;
	int	 saved = errno;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap, strerror(saved));
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap, NULL);
	va_end(ap);
	exit(1);
}
