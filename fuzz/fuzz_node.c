/*
 * libFuzzer target: the node record codec (format 2), as a link hands it
 * a NODE message's payload.  What decodes encodes again, to a record that
 * decodes the same and encodes to the same bytes once more.  It then
 * goes through the database and the path computation the way a daemon
 * takes it.  A signed record (a certificate section, a signature) is
 * checked under a fixed CA, with the cache and without it, and the two
 * must agree; the corpus holds records that CA's nodes signed (P-256 and
 * Ed25519), a traffic report, a certificate of another node, a DER that
 * is none, and a certificate without a signature.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "node.h"
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "nodedb.h"
#include "nodesig.h"
#include "spf.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* The CA the corpus's signed records chain to (valid 2024 to 2124). */
static const char ca_pem[] =
	"-----BEGIN CERTIFICATE-----\n"
	"MIIBJzCBzqADAgECAgEBMAoGCCqGSM49BAMCMBIxEDAOBgNVBAMMB2Z1enotY2Ew\n"
	"IBcNMjQwMTAxMDAwMDAwWhgPMjEyNDAxMDEwMDAwMDBaMBIxEDAOBgNVBAMMB2Z1\n"
	"enotY2EwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAATxcfjZRdwS9yzj+vfni2F9\n"
	"IFY+ZcXz11LmXvfrRvzqDS6NqiEiJlXm4KXK0kZsVMY5C6URuPw29A6/Gp2D6ltf\n"
	"oxMwETAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCIQDrY0nWHAJC\n"
	"7HIUS2CK8F6bJDdn4l4ohUq0BuVZ1UpqkQIgQsRijgPJeR6Gw0of4Z3iY8hZEj/N\n"
	"WDs3ZqIqNgUy+C4=\n"
	"-----END CERTIFICATE-----\n";

static X509_STORE	*store;
static struct nodesig	*sigcache;

static void
sig_init(void)
{
	BIO	*b;
	X509	*ca;

	if (store != NULL)
		return;
	if ((b = BIO_new_mem_buf(ca_pem, -1)) == NULL ||
	    (ca = PEM_read_bio_X509(b, NULL, NULL, NULL)) == NULL ||
	    (store = X509_STORE_new()) == NULL ||
	    X509_STORE_add_cert(store, ca) != 1 ||
	    (sigcache = nodesig_new()) == NULL)
		abort();
	X509_STORE_set_flags(store, X509_V_FLAG_NO_CHECK_TIME);
	X509_free(ca);
	BIO_free(b);
}

/* Where the sections are, and both checks the same. */
static void
sig_check(const uint8_t *p, size_t n, const struct node_rec *r)
{
	enum nodesig_result a, b;

	if (r->cert_len > 0 && (r->cert_len > NODE_CERT_MAX ||
	    r->cert_off + r->cert_len > n))
		abort();
	if (r->signed_len > 0 && (r->sig_off + r->sig_len != n ||
	    r->signed_len + 3 != r->sig_off))
		abort();
	sig_init();
	a = nodesig_verify_once(store, p, n, r);
	b = nodesig_verify(sigcache, store, p, n, r, 0);
	if (a != b || (unsigned int)a >= NODESIG_NRESULTS)
		abort();
	/* Again: the cache's answer is the same. */
	if (nodesig_verify(sigcache, store, p, n, r, 0) != a)
		abort();
}

static struct node_rec	rec, again;
static uint8_t		buf[NODE_RECORD_MAX], buf2[NODE_RECORD_MAX];

static void
same(const struct node_rec *a, const struct node_rec *b)
{
	size_t	 i;

	if (a->nsegs != b->nsegs)
		abort();
	for (i = 0; i < a->nsegs; i++)
		if (strcmp(a->segs[i].name, b->segs[i].name) != 0 ||
		    a->segs[i].flags != b->segs[i].flags ||
		    a->segs[i].epoch != b->segs[i].epoch)
			abort();
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

/* A copy kept aside, offered again when handed back (its header in arg). */
struct late_arg {
	struct nodedb	*db;
	struct node_hdr	 h;
};

static int
late_offer(const uint8_t *raw, size_t n, const void *from, void *arg)
{
	struct late_arg	*l = arg;

	(void)from;
	return nodedb_offer(l->db, raw, n, &l->h, NODEDB_MIN_ARRIVAL_MS) ==
	    NODEDB_NEW;
}

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	const struct nodedb_entry *e;
	struct late_arg	 la;
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
	sig_check(p, n, &rec);
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
		la.db = db;
		la.h = h;
		if (nodedb_offer(db, p, n, &h, 1) != NODEDB_TOO_SOON ||
		    nodedb_late(db, NODEDB_MIN_ARRIVAL_MS, late_offer, &la) != 0 ||
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
