/*
 * libFuzzer target: the node record codec, as a link hands it a NODE
 * message's payload.  What decodes must encode back to the same bytes (the
 * layout leaves no freedom), and goes through the database and the path
 * computation the way a daemon takes it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "node.h"
#include "nodedb.h"
#include "spf.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct node_rec	rec;
static uint8_t		buf[NODE_RECORD_MAX];

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	struct nodedb	*db;
	struct spf	*s;
	const char	*why = NULL;
	size_t		 len, i;
	int		 v, a, b;

	v = node_decode(p, n, &rec, &why);
	if (v != NODE_OK) {
		if (why == NULL || (v != NODE_MALFORMED && v != NODE_REFUSED))
			abort();
		return 0;
	}
	if ((len = node_encode(buf, sizeof(buf), &rec)) != n ||
	    memcmp(buf, p, n) != 0)
		abort();
	if ((db = nodedb_new("self", 4)) == NULL)
		abort();
	if (nodedb_offer(db, p, n, rec.name, rec.seq, rec.lifetime, 0) ==
	    NODEDB_NEW && nodedb_get(db, rec.name) == NULL)
		abort();
	/* The same record one sequence on, too soon: kept, then taken. */
	if (strcmp(rec.name, "self") != 0 && rec.seq < UINT64_MAX &&
	    nodedb_get(db, rec.name) != NULL) {
		if (nodedb_offer(db, p, n, rec.name, rec.seq + 1, rec.lifetime,
		    1) != NODEDB_TOO_SOON ||
		    nodedb_late(db, NODEDB_MIN_ARRIVAL_MS, NULL, NULL) != 0 ||
		    nodedb_get(db, rec.name)->seq != rec.seq + 1)
			abort();
	}
	(void)nodedb_age(db, (uint64_t)rec.lifetime * 1000, NULL, NULL);
	nodedb_free(db);
	if ((s = spf_new()) == NULL)
		abort();
	a = spf_node(s, rec.name);
	for (i = 0; i < rec.nlinks; i++) {
		b = spf_node(s, rec.links[i].name);
		spf_link(s, a, b, rec.links[i].rtt_us);
		spf_link(s, b, a, rec.links[i].rtt_us);
	}
	if (spf_run(s, a) == -1 || !spf_reachable(s, a))
		abort();
	spf_free(s);
	return 0;
}
