/*
 * Logging, in the manner of OpenBGPD: log_warn adds strerror(errno),
 * log_warnx does not; fatal/fatalx log and exit 1.  Messages go to stderr
 * (foreground; when that is systemd's journal, with <N> priority prefixes
 * instead of a time) or syslog (daemon, facility daemon); warnings and
 * fatal errors of a daemon go to stderr as well, for whoever started it.  The log's settings are
 * the one piece of process-wide state: they are set once at start-up.
 */
#ifndef VNET_LOG_H
#define VNET_LOG_H

#include <stdarg.h>

void	log_init(const char *progname, int foreground, int verbose);
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	fatal(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
