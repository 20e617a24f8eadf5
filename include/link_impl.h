/*
 * The inside of a link, for link.c alone (and tests/check_link.c, which
 * drives two link layers in one process and looks at their state).
 * Everyone else holds a struct link through link.h's functions.
 */
#ifndef VNET_LINK_IMPL_H
#define VNET_LINK_IMPL_H

/* After link.h (which it completes; including it here would be a cycle). */
#ifndef VNET_LINK_H
#error "link_impl.h needs link.h first"
#endif

struct link {
	TAILQ_ENTRY(link)	 entry;
	struct links		*lks;
	char			 name[STMT_NAME_MAX + 1];
	int			 configured;	/* has an address to dial */
	struct stmt_hostport	 addr;
	enum link_state		 state;
	struct conn		*conn;		/* the one carrying frames */
	struct conn		*dialing;	/* our attempt in progress */
	struct event		*ev_retry;
	unsigned int		 backoff_ms;
	size_t			 queue_max;
	struct port		 port;		/* its side of the switch */
	struct link_counters	 c;
	struct sched		 sched;		/* the frames waiting to go */
	struct event		*ev_pace;	/* the shaper's wake-up */
	struct udp_path		*dpath;		/* datagrams (udp.h), or NULL */
	int			 tls;		/* configured with tls */
	uint16_t		 from_port;	/* dial from it; 0: any */
	char			 peer[STMT_NAME_MAX + 1];	/* "" = name */
	/* Why it is as it is, for `show links` and `show link`: */
	uint64_t		 state_since;	/* ms, the last change of state */
	uint64_t		 retry_at;	/* ms, the next attempt; 0: none */
	char			 last_error[LINK_WHY_MAX];
	uint64_t		 last_error_at;	/* ms; 0: none yet */
	uint64_t		 clone_logged;	/* ms, the last clone warning */
	uint64_t		 rate_at;	/* ms, the last rate sample */
	uint64_t		 rate_bytes_in, rate_bytes_out;	/* at rate_at */
	uint64_t		 rate_in, rate_out;	/* bit/s, the last sample's */
	/* Liveness, for the connection that is up; the losses stay. */
	struct liveness		 live;
	struct event		*ev_live;
	uint64_t		 live_msgs, live_frames_in, live_frames_out;
	uint64_t		 live_lost_at;	/* ms; 0: never */
	/* Probes by the connection too until then (ms): the peer asked. */
	uint64_t		 live_tcp_until;
	int			 live_missing;	/* the peer's probes, as last looked */
	int			 live_answer;	/* a probe at the next look */
	uint64_t		 live_frame_at;	/* ms, a frame either way */
	int			 live_idle;	/* none for LIVENESS_IDLE_MS */
	char			 live_why[LIVENESS_WHY_MAX];
	uint64_t		 live_losses;
};

#endif
