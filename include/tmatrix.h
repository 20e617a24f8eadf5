/*
 * The traffic matrix made small enough to draw: guest pairs in, at most
 * top + 1 rows (sources) and top + 1 columns (destinations) out, every
 * byte, frame and rate of the pairs in exactly one cell.
 *
 * An axis with no more than top MACs keeps each MAC.  Past that, the
 * top / 2 heaviest MACs keep their own row (column); the others are summed
 * by the node they are behind, the heaviest of those nodes taking the
 * places left up to top; what is still left, and MACs of no known node,
 * is one "rest".  Heaviest is by rate over 10 s, then bytes.
 *
 * Pure: pairs in, a matrix out.  Costs O(n log n) for n pairs, whatever
 * top, and the matrix is O(top^2).
 */
#ifndef VNET_TMATRIX_H
#define VNET_TMATRIX_H

#include <stddef.h>
#include <stdint.h>

#include "ether.h"
#include "node.h"

#define TMATRIX_TOP_DEFAULT	32
#define TMATRIX_TOP_MAX		64

/* One guest pair: the nodes its MACs are behind ("": not known). */
struct tmatrix_pair {
	uint8_t			 src[ETHER_ADDR_LEN], dst[ETHER_ADDR_LEN];
	char			 src_node[NODE_NAME_MAX + 1];
	char			 dst_node[NODE_NAME_MAX + 1];
	struct node_rate	 r;
};

enum tmatrix_kind {
	TMATRIX_MAC,
	TMATRIX_NODE,		/* the lighter MACs behind one node */
	TMATRIX_REST,
};

/* A row or column: a MAC (with its node, "" if none), a node, or rest. */
struct tmatrix_label {
	enum tmatrix_kind	 kind;
	uint8_t			 mac[ETHER_ADDR_LEN];
	char			 node[NODE_NAME_MAX + 1];
	uint64_t		 rate10, bytes;	/* its sum, to rank it */
};

/* A cell's sums (rates in bytes/s, summed past what a record carries). */
struct tmatrix_cell {
	uint64_t		 bytes, frames, rate1, rate10;
};

struct tmatrix {
	struct tmatrix_label	 rows[TMATRIX_TOP_MAX + 1];
	struct tmatrix_label	 cols[TMATRIX_TOP_MAX + 1];
	size_t			 nrows, ncols;
	/* nrows x ncols, row-major; used[] says which a pair fell in */
	struct tmatrix_cell	*cells;
	unsigned char		*used;
};

/* NULL when out of memory; top is clamped to 1..TMATRIX_TOP_MAX. */
struct tmatrix	*tmatrix_build(const struct tmatrix_pair *, size_t n,
		    unsigned int top);
void		 tmatrix_free(struct tmatrix *);
/* The cell of row i, column j, or NULL when no pair fell in it. */
const struct tmatrix_cell *tmatrix_at(const struct tmatrix *, size_t i,
		    size_t j);

#endif
