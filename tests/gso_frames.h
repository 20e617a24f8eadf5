/*
 * Test frames for offload: a TCP super-frame as a TAP device with TSO
 * hands it over.  Shared by check_gso.c and check_sw.c; needs check.h,
 * buf.h, gso.h and pkt.h.
 */
#ifndef VNET_TEST_GSO_FRAMES_H
#define VNET_TEST_GSO_FRAMES_H

/* A TCP super-frame as a TAP with TSO hands it over: NEEDS_CSUM, pseudo sum. */
static size_t
superframe(uint8_t *f, int ipver, size_t payload, uint8_t flags,
    struct gso_hdr *h, uint16_t mss)
{
	size_t		 l3 = 14, l4 = ipver == 4 ? 34 : 54, len, i;
	uint32_t	 sum;
	struct pkt	 p;

	memset(f, 0, l4 + 32);
	memcpy(f, "\x02\0\0\0\0\x02\x02\0\0\0\0\x01", 12);
	put_u16(f + 12, ipver == 4 ? PKT_ETH_IPV4 : PKT_ETH_IPV6);
	len = l4 + 32 + payload;		/* TCP header with timestamps */
	if (ipver == 4) {
		f[l3] = 0x45;
		f[l3 + 1] = PKT_ECN_ECT0;
		put_u16(f + l3 + 2, (uint16_t)(len - l3));
		put_u16(f + l3 + 4, 0x1234);
		f[l3 + 6] = 0x40;		/* DF */
		f[l3 + 8] = 64;
		f[l3 + 9] = PKT_PROTO_TCP;
		memcpy(f + l3 + 12, "\x0a\x4d\0\x01\x0a\x4d\0\x02", 8);
	} else {
		f[l3] = 0x60;
		put_u16(f + l3 + 4, (uint16_t)(len - l3 - 40));
		f[l3 + 6] = PKT_PROTO_TCP;
		f[l3 + 7] = 64;
		f[l3 + 8] = 0xfd;
		f[l3 + 23] = 1;
		f[l3 + 24] = 0xfd;
		f[l3 + 39] = 2;
	}
	put_u16(f + l4, 40000);
	put_u16(f + l4 + 2, 5201);
	put_u32(f + l4 + 4, 0xfffff000);	/* wraps within the frame */
	put_u32(f + l4 + 8, 77);
	f[l4 + 12] = 8 << 4;
	f[l4 + 13] = flags;
	put_u16(f + l4 + 14, 1000);
	memcpy(f + l4 + 20, "\x01\x01\x08\x0a\0\0\0\x05\0\0\0\x06", 12);
	for (i = 0; i < payload; i++)
		f[l4 + 32 + i] = (uint8_t)(i * 13 + 1);
	ck_assert_int_eq(pkt_parse(&p, f, len), PKT_OK);
	if (ipver == 4)
		put_u16(f + l3 + 10, pkt_ipv4_csum(f, &p));
	/* The pseudo-header sum, not complemented, as the kernel leaves it. */
	sum = (uint32_t)(uint16_t)~pkt_tcp_csum(f, &p);
	{
		/* pkt_tcp_csum covered the data too: recompute only the pseudo part. */
		size_t tl = len - l4, al = ipver == 4 ? 4 : 16, k;
		const uint8_t *a = f + l3 + (ipver == 4 ? 12 : 8);

		sum = 0;
		for (k = 0; k < 2 * al; k += 2)
			sum += (uint32_t)(a[k] << 8 | a[k + 1]);
		sum += (uint32_t)(tl >> 16) + (uint32_t)(tl & 0xffff) + 6;
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
	}
	put_u16(f + l4 + 16, (uint16_t)sum);
	memset(h, 0, sizeof(*h));
	h->flags = GSO_F_NEEDS_CSUM;
	h->gso_type = ipver == 4 ? GSO_TCPV4 : GSO_TCPV6;
	h->hdr_len = (uint16_t)(l4 + 32);
	h->gso_size = mss;
	h->csum_start = (uint16_t)l4;
	h->csum_offset = 16;
	return len;
}

#endif
