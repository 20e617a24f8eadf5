/*
 * Joining in one step: the invitation line, the invitation file the CA
 * keeps, and the two messages of the exchange, all parsed here without
 * sockets or files so that the fuzzer drives them.
 *
 * The line (printed by vnet-ca invite, given to vnet-join):
 *	vnet://HOST:PORT/ID/SECRET
 * ID is JOIN_ID_HEX hex digits, SECRET JOIN_SECRET_LEN bytes in hex.  The
 * TLS 1.3 external PSK of the exchange is HMAC-SHA256(SECRET,
 * JOIN_PSK_LABEL) under the PSK identity ID; the CA keeps only the PSK.
 *
 * A message on the wire: a 4-byte length (network order, at most
 * JOIN_MSG_MAX) and that many bytes of fields, each "KEY LEN\n", LEN bytes,
 * "\n".  The request has v=1 and csr (PEM); the answer status=ok with node,
 * proxy, link, cert, ca and maybe network and crl, or status=error with reason.
 */
#ifndef VNET_JOIN_H
#define VNET_JOIN_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define JOIN_ID_HEX	16
#define JOIN_SECRET_LEN	32
#define JOIN_PSK_LEN	32
#define JOIN_PSK_LABEL	"vnet-join psk v1"
#define JOIN_REQ_MAX	4096		/* a P-256 CSR is about 400 bytes */
#define JOIN_MSG_MAX	(256 * 1024)	/* the answer: certificates and a CRL */
#define JOIN_FIELDS	8
#define JOIN_PORT	"7871"

struct join_line {
	char	host[256];
	char	port[6];
	char	id[JOIN_ID_HEX + 1];
	uint8_t	secret[JOIN_SECRET_LEN];
};

struct join_invite {
	char	node[32];
	char	proxy[32];
	char	link[300];		/* HOST:PORT of the proxy's listener */
	char	network[32];		/* "" when the default */
	time_t	expires;
	uint8_t	psk[JOIN_PSK_LEN];
};

struct join_field {
	char		 key[16];
	const uint8_t	*val;
	size_t		 len;
};

struct join_msg {
	struct join_field	f[JOIN_FIELDS];
	int			n;
};

int	join_line_parse(const char *, struct join_line *, char *, size_t);
int	join_id_valid(const char *, size_t);
void	join_psk(const uint8_t *, uint8_t *);
int	join_invite_parse(const char *, size_t, struct join_invite *, char *,
	    size_t);
int	join_msg_parse(const uint8_t *, size_t, struct join_msg *, char *,
	    size_t);
const struct join_field *join_msg_get(const struct join_msg *, const char *);
int	join_msg_str(const struct join_msg *, const char *, char *, size_t);
size_t	join_msg_put(uint8_t *, size_t, size_t, const char *, const void *,
	    size_t);

#endif
