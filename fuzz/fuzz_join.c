/*
 * libFuzzer target: what joining in one step reads from outside: the
 * invitation line (typed or pasted), the exchange's messages (from the
 * other end of the TLS connection) and the CA's invitation file.  The first
 * byte picks the parser; each either refuses with a reason or gives values
 * within their bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "join.h"
#include "stmt.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct join_line	 l;
	struct join_invite	 iv;
	struct join_msg		 m;
	char			 err[256], s[64], *text;
	int			 i;

	if (size < 1)
		return 0;
	switch (data[0] % 3) {
	case 0:
		if ((text = malloc(size)) == NULL)
			return 0;
		memcpy(text, data + 1, size - 1);
		text[size - 1] = '\0';
		if (join_line_parse(text, &l, err, sizeof(err)) == 0 &&
		    (strlen(l.id) != JOIN_ID_HEX || l.host[0] == '\0' ||
		    atoi(l.port) < 1 || atoi(l.port) > 65535))
			abort();
		free(text);
		break;
	case 1:
		if (join_msg_parse(data + 1, size - 1, &m, err, sizeof(err)) == 0) {
			if (m.n > JOIN_FIELDS)
				abort();
			for (i = 0; i < m.n; i++)
				if (m.f[i].val < data + 1 ||
				    m.f[i].val + m.f[i].len > data + size)
					abort();
			(void)join_msg_str(&m, "status", s, sizeof(s));
		}
		break;
	case 2:
		if (join_invite_parse((const char *)data + 1, size - 1, &iv, err,
		    sizeof(err)) == 0 && (!stmt_valid_name(iv.node) ||
		    !stmt_valid_name(iv.proxy) || iv.expires <= 0))
			abort();
		break;
	}
	return 0;
}
