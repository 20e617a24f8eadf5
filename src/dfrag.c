#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "dfrag.h"

void
dfrag_init(struct dfrag *d)
{
	memset(d, 0, sizeof(*d));
}

void
dfrag_free(struct dfrag *d)
{
	size_t	 i;

	for (i = 0; i < DFRAG_SLOTS; i++)
		free(d->s[i].buf);
	memset(d, 0, sizeof(*d));
}

uint32_t
dfrag_id(struct dfrag *d)
{
	return d->next_id++;
}

void
dfrag_hdr_encode(uint8_t out[DFRAG_HDR_LEN], uint32_t id, uint32_t off,
    uint32_t total)
{
	put_u32(out, id);
	put_u32(out + 4, off);
	put_u32(out + 8, total);
}

/* The slot for message id: its own, a free one, or the oldest (dropped). */
static struct dfrag_slot *
dfrag_slot(struct dfrag *d, uint64_t now, uint32_t id, uint32_t total)
{
	struct dfrag_slot	*s, *free_s = NULL, *old = NULL;
	size_t			 i;

	for (i = 0; i < DFRAG_SLOTS; i++) {
		s = &d->s[i];
		if (s->total != 0 && now - s->born > DFRAG_TIMEOUT_MS) {
			s->total = 0;
			d->st.dropped++;
		}
		if (s->total != 0 && s->id == id)
			return s->total == total ? s : NULL;
		if (s->total == 0 && free_s == NULL)
			free_s = s;
		if (s->total != 0 && (old == NULL || s->born < old->born))
			old = s;
	}
	if ((s = free_s) == NULL) {
		s = old;
		d->st.dropped++;
	}
	if (s->buf == NULL && (s->buf = malloc(DFRAG_MAX)) == NULL)
		return NULL;
	s->id = id;
	s->total = total;
	s->got = 0;
	s->born = now;
	return s;
}

int
dfrag_input(struct dfrag *d, uint64_t now, const uint8_t *p, size_t n,
    const uint8_t **msg, size_t *len)
{
	struct rbuf		 b;
	struct dfrag_slot	*s;
	uint32_t		 id, off, total;
	size_t			 piece;

	rbuf_init(&b, p, n);
	if (rbuf_get_u32(&b, &id) == -1 || rbuf_get_u32(&b, &off) == -1 ||
	    rbuf_get_u32(&b, &total) == -1 || (piece = rbuf_left(&b)) == 0 ||
	    total == 0 || total > DFRAG_MAX || off >= total ||
	    piece > total - off ||
	    (s = dfrag_slot(d, now, id, total)) == NULL) {
		d->st.malformed++;
		return -1;
	}
	memcpy(s->buf + off, p + b.off, piece);
	/* Pieces come through the replay window: none twice. */
	s->got += (uint32_t)piece;
	if (s->got < s->total)
		return 0;
	s->total = 0;
	d->st.whole++;
	*msg = s->buf;
	*len = s->got;
	return 1;
}
