/*
 * libFuzzer target: the node record codec (format 2), as a link hands it
 * a NODE message's payload.  What decodes encodes again, to a record that
 * decodes the same and encodes to the same bytes once more.  It then
 * goes through the database and the path computation the way a daemon
 * takes it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "node.h"
#include "nodedb.h"
#include "spf.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct node_rec	rec, again;
static uint8_t		buf[NODE_RECORD_MAX], buf2[NODE_RECORD_MAX];

static void
same(const struct node_rec *a, const struct node_rec *b)
{
	if (a->kind != b->kind || a->id != b->id || a->seq != b->seq ||
	    a->lifetime != b->lifetime || a->flags != b->flags ||
	    strcmp(a->name, b->name) != 0 || strcmp(a->to, b->to) != 0 ||
	    a->nlinks != b->nlinks || a->nmacs != b->nmacs ||
	    a->naddrs != b->naddrs || a->nrows != b->nrows ||
	    a->ndsts != b->ndsts ||
	    memcmp(a->links, b->links, a->nlinks * sizeof(a->links[0])) != 0 ||
	    memcmp(a->macs, b->macs, a->nmacs * sizeof(a->macs[0])) != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	const struct nodedb_entry *e;
	struct node_hdr	 h;
	struct nodedb	*db;
	struct spf	*s;
	const char	*why = NULL;
	size_t		 len, len2, i;
	int		 v, a, b;

	memset(&rec, 0, sizeof(rec));
	v = node_decode(p, n, &rec, &why);
	if (v != NODE_OK) {
		if (why == NULL || (v != NODE_MALFORMED && v != NODE_REFUSED))
			abort();
		return 0;
	}
	if (node_peek(p, n, &h, &why) != NODE_OK || h.kind != rec.kind ||
	    h.seq != rec.seq || strcmp(h.name, rec.name) != 0)
		abort();
	memset(&again, 0, sizeof(again));
	if ((len = node_encode(buf, sizeof(buf), &rec)) == 0 ||
	    node_decode(buf, len, &again, &why) != NODE_OK)
		abort();
	same(&rec, &again);
	/*
	 * The input need not be in the encoder's own form (sections in
	 * another order, an empty optional section, zero flags): records are
	 * passed on as they came, never re-encoded.  The encoder's form is a
	 * fixed point.
	 */
	if ((len2 = node_encode(buf2, sizeof(buf2), &again)) != len ||
	    memcmp(buf2, buf, len) != 0)
		abort();
	if (rec.kind == NODE_KIND_TRAFFIC)
		return 0;	/* routed, never held */
	if ((db = nodedb_new("self", 4, free)) == NULL)
		abort();
	if (nodedb_offer(db, p, n, &h, 0) == NODEDB_NEW) {
		if ((e = nodedb_get(db, h.name, h.kind, h.id)) == NULL ||
		    e->len != n || memcmp(e->raw, p, n) != 0)
			abort();
		nodedb_set_cache(db, (size_t)nodedb_index(db, h.name, h.kind,
		    h.id), malloc(8));
	}
	/* The same record one sequence on, too soon: kept, then taken. */
	if (strcmp(h.name, "self") != 0 && h.seq < UINT64_MAX &&
	    nodedb_get(db, h.name, h.kind, h.id) != NULL) {
		h.seq++;
		if (nodedb_offer(db, p, n, &h, 1) != NODEDB_TOO_SOON ||
		    nodedb_late(db, NODEDB_MIN_ARRIVAL_MS, NULL, NULL) != 0 ||
		    nodedb_get(db, h.name, h.kind, h.id)->seq != h.seq)
			abort();
	}
	(void)nodedb_age(db, (uint64_t)h.lifetime * 1000, NULL, NULL);
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
