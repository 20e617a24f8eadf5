/*
 * The command language: every statement form, every error message and its
 * column, and the promise that what stmt_print() writes parses back to an
 * equal statement.
 */
#include <sys/socket.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ether.h"
#include "stmt.h"

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))
#define IFACE_USAGE	"NAME tap [DEV [persist yes|no|auto] [bridge BR]], NAME pcap DEV [promisc yes|no] [filter EXPR] [buffer BYTES] [up yes|no] [segment NAME] or NAME qemu PATH"

/* Parses a line that must be a statement; shows the error when it is not. */
static void
parse_ok(const char *line, struct stmt *st)
{
	struct stmt_error	 err;
	int			 rc;

	rc = stmt_parse(line, st, &err);
	ck_assert_msg(rc == 1, "'%s': rc %d, column %d: %s", line, rc,
	    err.column, err.msg);
}

/* Input and the canonical form stmt_print() gives for it. */
static const struct {
	const char	*line;
	const char	*canon;
} valid[] = {
	{ "node n1",				"node n1" },
	{ "node 0abc.d_e-f",			"node 0abc.d_e-f" },
	{ "node abcdefghijabcdefghijabcdefghi",
	    "node abcdefghijabcdefghijabcdefghi" },
	{ "network home-lan",			"network home-lan" },
	{ "listen *:655",			"listen *:655" },
	{ "listen 0.0.0.0:655",			"listen 0.0.0.0:655" },
	{ "listen [::1]:655",			"listen [::1]:655" },
	{ "listen [::]:1",			"listen [::]:1" },
	{ "listen [2001:DB8:0::0001]:655",	"listen [2001:db8::1]:655" },
	{ "listen [::ffff:10.0.0.1]:655", "listen [::ffff:10.0.0.1]:655" },
	{ "listen localhost:65535",		"listen localhost:65535" },
	{ "control /var/run/vnetd.sock",	"control /var/run/vnetd.sock" },
	{ "control \"/tmp/plain\"",		"control /tmp/plain" },
	{ "control \"/tmp/a b\"",		"control \"/tmp/a b\"" },
	{ "control \"/tmp/a\tb\"",		"control \"/tmp/a\tb\"" },
	{ "control \"/tmp/#x\"",		"control \"/tmp/#x\"" },
	{ "control \"/tmp/q\\\"x\"",		"control \"/tmp/q\\\"x\"" },
	{ "control \"/tmp/a b\\\\c\"",		"control \"/tmp/a b\\\\c\"" },
	{ "control /tmp/x\\y",			"control /tmp/x\\y" },
	{ "control /tmp/\"a b\"/c",		"control \"/tmp/a b/c\"" },
	{ "control /tmp/caf\xc3\xa9",		"control /tmp/caf\xc3\xa9" },
	{ "keepalive 10",			"keepalive 10" },
	{ "keepalive 1",			"keepalive 1" },
	{ "keepalive 3600",			"keepalive 3600" },
	{ "keepalive 010",			"keepalive 10" },
	{ "learn yes",				"learn yes" },
	{ "learn no",				"learn no" },
	{ "offload yes",			"offload yes" },
	{ "offload no",				"offload no" },
	{ "relay yes",				"relay yes" },
	{ "relay no",				"relay no" },
	{ "routing auto",			"routing auto" },
	{ "routing static",			"routing static" },
	{ "routing auto refresh 05",		"routing auto refresh 5" },
	{ "advertise 192.0.2.1:7000",		"advertise 192.0.2.1:7000" },
	{ "advertise [2001:db8::1]:7000",	"advertise [2001:db8::1]:7000" },
	{ "show nodes",				"show nodes" },
	{ "show topology",			"show topology" },
	{ "show traffic",			"show traffic" },
	{ "show traffic nodes",			"show traffic nodes" },
	{ "show traffic topology",		"show traffic topology 0.100" },
	{ "show traffic topology 0.25",		"show traffic topology 0.250" },
	{ "show traffic topology 1",		"show traffic topology 1.000" },
	{ "show traffic topology .5",		"show traffic topology 0.500" },
	{ "show traffic matrix",		"show traffic matrix 32" },
	{ "show traffic matrix 1",		"show traffic matrix 1" },
	{ "show traffic matrix 064",		"show traffic matrix 64" },
	{ "interface g1 tap tapg1",		"interface g1 tap tapg1" },
	{ "interface g1 tap",			"interface g1 tap" },
	{ "interface g1 tap a.b_c-d0123456",
	    "interface g1 tap a.b_c-d0123456" },
	{ "add-interface g1 tap",		"interface g1 tap" },
	{ "add-interface g1 tap vm0",		"interface g1 tap vm0" },
	{ "del-interface g1",			"del-interface g1" },
	{ "link h1 10.0.0.1:655",		"link h1 10.0.0.1:655" },
	{ "add-link h1 10.0.0.1:655",		"link h1 10.0.0.1:655" },
	{ "link h2 [fe80::1]:655",		"link h2 [fe80::1]:655" },
	{ "link h3 host.example:655",		"link h3 host.example:655" },
	{ "link h3 Host-1.Example.COM:1", "link h3 Host-1.Example.COM:1" },
	{ "link h3 x:65535",			"link h3 x:65535" },
	{ "link h3 1x:2",			"link h3 1x:2" },
	{ "del-link h1",			"del-link h1" },
	{ "route any 00:11:22:33:44:55 link proxy",
	    "route any 00:11:22:33:44:55 link proxy" },
	{ "route not-00:11:22:33:44:55 any interface g1",
	    "route not-00:11:22:33:44:55 any interface g1" },
	{ "route AA-BB-CC-DD-EE-FF not-Aa:bB:cc:dd:ee:ff link x",
	    "route aa:bb:cc:dd:ee:ff not-aa:bb:cc:dd:ee:ff link x" },
	{ "add-route any any link x",		"route any any link x" },
	{ "del-route any ff:ff:ff:ff:ff:ff interface g1",
	    "del-route any ff:ff:ff:ff:ff:ff interface g1" },
	{ "del-route not-01:00:5e:00:00:01 any link p",
	    "del-route not-01:00:5e:00:00:01 any link p" },
	{ "show links",				"show links" },
	{ "show routes",			"show routes" },
	{ "show interfaces",			"show interfaces" },
	{ "show macs",				"show macs" },
	{ "show stats",				"show stats" },
	{ "show config",			"show config" },
	{ "interface lan pcap eth0",		"interface lan pcap eth0" },
	{ "interface lan pcap eth0 promisc yes", "interface lan pcap eth0" },
	{ "interface lan pcap eth0 promisc no",
	    "interface lan pcap eth0 promisc no" },
	{ "interface lan pcap br0 filter arp",
	    "interface lan pcap br0 filter arp" },
	{ "interface lan pcap br0 filter \"ether dst 02:00:00:00:00:01 or "
	    "broadcast\"",
	    "interface lan pcap br0 filter \"ether dst 02:00:00:00:00:01 or "
	    "broadcast\"" },
	{ "add-interface lan pcap br0 filter \"not ip\" promisc no",
	    "interface lan pcap br0 promisc no filter \"not ip\"" },
	{ "interface vm qemu /run/vnetd/vm.sock",
	    "interface vm qemu /run/vnetd/vm.sock" },
	{ "add-interface vm qemu \"/run/vm 1.sock\"",
	    "interface vm qemu \"/run/vm 1.sock\"" },
	{ "interface vm tap vnet0 persist yes bridge virbr0",
	    "interface vm tap vnet0 persist yes bridge virbr0" },
	{ "interface vm tap vm bridge br0 persist no",
	    "interface vm tap vm persist no bridge br0" },
	{ "interface vm tap vm persist no", "interface vm tap vm persist no" },
	{ "interface vm tap vm persist yes", "interface vm tap vm persist yes" },
	{ "interface vm tap vm persist auto", "interface vm tap vm" },
	{ "interface vm tap", "interface vm tap" },
	{ "interface lan pcap eth0 buffer 16m up no",
	    "interface lan pcap eth0 buffer 16m up no" },
	{ "interface lan pcap eth0 up yes buffer 1048576",
	    "interface lan pcap eth0 buffer 1m" },
	{ "interface lan pcap eth0 buffer 200000 promisc no",
	    "interface lan pcap eth0 promisc no buffer 200000" },
	{ "interface lan pcap eth0 filter \"ether[0] & 1 = 1\"",
	    "interface lan pcap eth0 filter \"ether[0] & 1 = 1\"" },
	{ "interface lan pcap eth0 filter \"a \\\"b\\\" \\\\c\"",
	    "interface lan pcap eth0 filter \"a \\\"b\\\" \\\\c\"" },
	{ "interface lan pcap eth0 segment home",
	    "interface lan pcap eth0 segment home" },
	{ "interface lan pcap eth0 segment home up no promisc no",
	    "interface lan pcap eth0 promisc no up no segment home" },
	{ "reload",				"reload" },
	{ "reload -n",				"reload -n" },
	{ "show links all",			"show links all" },
	{ "show refused",			"show refused" },
	{ "save",				"save" },
	{ "save /etc/vnetd/vnetd.conf",		"save /etc/vnetd/vnetd.conf" },
	{ "save \"/tmp/a b.conf\"",		"save \"/tmp/a b.conf\"" },
	{ "add-listen *:7870",			"listen *:7870" },
	{ "del-listen *:7870",			"del-listen *:7870" },
	{ "del-listen [::1]:1",			"del-listen [::1]:1" },
	/* Blanks, comments, quotes and line ends around the same thing. */
	{ "\t link  h1\t10.0.0.1:655  ",	"link h1 10.0.0.1:655" },
	{ "link h1 10.0.0.1:655 # the proxy",	"link h1 10.0.0.1:655" },
	{ "link h1 10.0.0.1:655#no blank",	"link h1 10.0.0.1:655" },
	{ "link h1 10.0.0.1:655\n",		"link h1 10.0.0.1:655" },
	{ "link h1 10.0.0.1:655\r\n",		"link h1 10.0.0.1:655" },
	{ "\"link\" \"h1\" \"10.0.0.1:655\"",	"link h1 10.0.0.1:655" },
	{ "show\tlinks",			"show links" },
	/* Link options. */
	{ "link h1 10.0.0.1:655 rate 10mbit",	"link h1 10.0.0.1:655 rate 10mbit" },
	{ "link h1 10.0.0.1:655 rate 10000000bit",
	    "link h1 10.0.0.1:655 rate 10mbit" },
	{ "link h1 10.0.0.1:655 rate 1.5Gbit",	"link h1 10.0.0.1:655 rate 1500mbit" },
	{ "link h1 10.0.0.1:655 rate 0.5mbit",	"link h1 10.0.0.1:655 rate 500kbit" },
	{ "link h1 10.0.0.1:655 rate 8kbit",	"link h1 10.0.0.1:655 rate 8kbit" },
	{ "link h1 10.0.0.1:655 rate 1tbit",	"link h1 10.0.0.1:655 rate 1tbit" },
	{ "link h1 10.0.0.1:655 rate 12345bit",	"link h1 10.0.0.1:655 rate 12345bit" },
	{ "link h1 10.0.0.1:655 rate none",	"link h1 10.0.0.1:655 rate none" },
	{ "link h1 10.0.0.1:655 aqm off",	"link h1 10.0.0.1:655 aqm off" },
	{ "link h1 10.0.0.1:655 aqm codel",	"link h1 10.0.0.1:655 aqm codel" },
	{ "link h1 10.0.0.1:655 aqm fq_codel target 1ms",
	    "link h1 10.0.0.1:655 aqm fq_codel target 1ms" },
	{ "link h1 10.0.0.1:655 aqm codel interval 0.2s target 5000us",
	    "link h1 10.0.0.1:655 aqm codel target 5ms interval 200ms" },
	{ "add-link h1 10.0.0.1:655 aqm codel target 2.5ms rate 100mbit",
	    "link h1 10.0.0.1:655 rate 100mbit aqm codel target 2500us" },
	{ "set-link h1 rate 10mbit",		"set-link h1 rate 10mbit" },
	{ "set-link h1 queue 256k",		"set-link h1 queue 256k" },
	{ "set-link h1 rate 1mbit queue 1m",	"set-link h1 queue 1m rate 1mbit" },
	{ "set-link h1 aqm codel target 100us interval 60s",
	    "set-link h1 aqm codel target 100us interval 60000ms" },
	{ "set-link h1 rate none aqm off",	"set-link h1 rate none aqm off" },
	{ "set-link h1 congestion cubic",	"set-link h1 congestion cubic" },
	{ "set-link h1 congestion default rate 1mbit",
	    "set-link h1 rate 1mbit congestion default" },
	{ "link h1 10.0.0.1:655 congestion bbr_2-x aqm off",
	    "link h1 10.0.0.1:655 aqm off congestion bbr_2-x" },
	{ "link h1 10.0.0.1:655 transport auto tls",
	    "link h1 10.0.0.1:655 tls transport auto" },
	{ "set-link h1 transport udp rate 1mbit",
	    "set-link h1 rate 1mbit transport udp" },
	{ "set-link h1 transport tcp", "set-link h1 transport tcp" },
	{ "set-link h1 liveness 100ms multiplier 5 rate 1mbit",
	    "set-link h1 rate 1mbit liveness 100ms multiplier 5" },
	{ "set-link h1 liveness 1s", "set-link h1 liveness 1000ms" },
	{ "set-link h1 liveness default", "set-link h1 liveness default" },
	{ "link h1 10.0.0.1:655 liveness off tls",
	    "link h1 10.0.0.1:655 tls liveness off" },
	{ "liveness 50ms",			"liveness 50ms" },
	{ "liveness 0.5s multiplier 4",		"liveness 500ms multiplier 4" },
	{ "liveness off",			"liveness off" },
	{ "show link h1",			"show link h1" },
	/* TLS, allow lists, link options. */
	{ "listen *:7870 tls",			"listen *:7870 tls" },
	{ "listen 10.0.0.1:1 allow 10.0.0.0/8",
	    "listen 10.0.0.1:1 allow 10.0.0.0/8" },
	{ "listen 10.0.0.1:1 allow 10.1.2.3",
	    "listen 10.0.0.1:1 allow 10.1.2.3/32" },
	{ "listen [::]:1 allow 10.0.0.0/8,192.168.1.0/24,::1,fe80::/10",
	    "listen [::]:1 allow 10.0.0.0/8,192.168.1.0/24,::1/128,fe80::/10" },
	{ "listen *:1 allow 0.0.0.0/0 tls",	"listen *:1 tls allow 0.0.0.0/0" },
	{ "listen *:1 allow ::/0",		"listen *:1 allow ::/0" },
	{ "link p 10.0.0.1:1 tls",		"link p 10.0.0.1:1 tls" },
	{ "link p 10.0.0.1:1 peer proxy",	"link p 10.0.0.1:1 peer proxy" },
	{ "link p 10.0.0.1:1 peer p",		"link p 10.0.0.1:1" },
	{ "link p 10.0.0.1:1 queue 1048576",	"link p 10.0.0.1:1 queue 1m" },
	{ "link p 10.0.0.1:1 queue 131072",	"link p 10.0.0.1:1 queue 128k" },
	{ "link p 10.0.0.1:1 queue 200000",	"link p 10.0.0.1:1 queue 200000" },
	{ "link p 10.0.0.1:1 queue 1G",		"link p 10.0.0.1:1 queue 1g" },
	{ "link p 10.0.0.1:1 queue 2048K",	"link p 10.0.0.1:1 queue 2m" },
	{ "link p 10.0.0.1:1 queue 8m peer x tls",
	    "link p 10.0.0.1:1 tls peer x queue 8m" },
	{ "add-link p h.example:1 tls peer proxy.1 queue 128k",
	    "link p h.example:1 tls peer proxy.1 queue 128k" },
	{ "tls-cert /etc/vnetd/host1.crt",	"tls-cert /etc/vnetd/host1.crt" },
	{ "tls-key /etc/vnetd/host1.key",	"tls-key /etc/vnetd/host1.key" },
	{ "tls-ca \"/etc/vnet d/ca.crt\"",	"tls-ca \"/etc/vnet d/ca.crt\"" },
	{ "tls-crl /etc/vnetd/crl.pem",		"tls-crl /etc/vnetd/crl.pem" },
	{ "control-group vnet",			"control-group vnet" },
	{ "control-group _vnet.ops-1",		"control-group _vnet.ops-1" },
	{ "user nobody",			"user nobody" },
	{ "user abcdefghijabcdefghijabcdefghij12",
	    "user abcdefghijabcdefghijabcdefghij12" },
};

START_TEST(test_valid)
{
	struct stmt	 a, b;
	char		 buf[STMT_LINE_MAX + 1];
	int		 n;

	parse_ok(valid[_i].line, &a);
	n = stmt_print(&a, buf, sizeof(buf));
	ck_assert_int_eq(n, (int)strlen(valid[_i].canon));
	ck_assert_str_eq(buf, valid[_i].canon);
	parse_ok(buf, &b);
	ck_assert_msg(stmt_equal(&a, &b), "'%s' does not come back", buf);
}
END_TEST

/* Kind and operation of every keyword. */
static const struct {
	const char	*line;
	enum stmt_kind	 kind;
	enum stmt_op	 op;
} kinds[] = {
	{ "node a",				STMT_NODE,	STMT_OP_SET },
	{ "network a",				STMT_NETWORK,	STMT_OP_SET },
	{ "listen *:1",				STMT_LISTEN,	STMT_OP_SET },
	{ "control /a",				STMT_CONTROL,	STMT_OP_SET },
	{ "keepalive 5",			STMT_KEEPALIVE,	STMT_OP_SET },
	{ "liveness 100ms",			STMT_LIVENESS,	STMT_OP_SET },
	{ "learn no",				STMT_LEARN,	STMT_OP_SET },
	{ "offload no",				STMT_OFFLOAD,	STMT_OP_SET },
	{ "threads yes",			STMT_THREADS,	STMT_OP_SET },
	{ "relay no",				STMT_RELAY,	STMT_OP_SET },
	{ "routing auto",			STMT_ROUTING,	STMT_OP_SET },
	{ "advertise a:1",			STMT_ADVERTISE,	STMT_OP_SET },
	{ "interface a tap",			STMT_INTERFACE,	STMT_OP_SET },
	{ "add-interface a tap",		STMT_INTERFACE,	STMT_OP_SET },
	{ "del-interface a",			STMT_INTERFACE,	STMT_OP_DEL },
	{ "link a b:1",				STMT_LINK,	STMT_OP_SET },
	{ "add-link a b:1",			STMT_LINK,	STMT_OP_SET },
	{ "del-link a",				STMT_LINK,	STMT_OP_DEL },
	{ "route any any link a",		STMT_ROUTE,	STMT_OP_SET },
	{ "add-route any any link a",		STMT_ROUTE,	STMT_OP_SET },
	{ "del-route any any link a",		STMT_ROUTE,	STMT_OP_DEL },
	{ "show stats",				STMT_SHOW,	STMT_OP_SET },
	{ "interface a pcap b",			STMT_INTERFACE,	STMT_OP_SET },
	{ "add-listen *:1",			STMT_LISTEN,	STMT_OP_SET },
	{ "del-listen *:1",			STMT_LISTEN,	STMT_OP_DEL },
	{ "reload",				STMT_RELOAD,	STMT_OP_SET },
	{ "save",				STMT_SAVE,	STMT_OP_SET },
	{ "save /a",				STMT_SAVE,	STMT_OP_SET },
	{ "show link a",			STMT_SHOW,	STMT_OP_SET },
	{ "set-link a rate 1mbit",		STMT_SET_LINK,	STMT_OP_SET },
	{ "tls-cert /a",			STMT_TLS_CERT,	STMT_OP_SET },
	{ "tls-key /a",				STMT_TLS_KEY,	STMT_OP_SET },
	{ "tls-ca /a",				STMT_TLS_CA,	STMT_OP_SET },
	{ "tls-crl /a",				STMT_TLS_CRL,	STMT_OP_SET },
	{ "control-group g",		STMT_CONTROL_GROUP,	STMT_OP_SET },
	{ "user u",				STMT_USER,	STMT_OP_SET },
};

START_TEST(test_kinds)
{
	struct stmt	 st;

	parse_ok(kinds[_i].line, &st);
	ck_assert_int_eq(st.kind, kinds[_i].kind);
	ck_assert_int_eq(st.op, kinds[_i].op);
}
END_TEST

START_TEST(test_fields)
{
	struct stmt	 st;
	const uint8_t	 mac[ETHER_ADDR_LEN] = {
		0x00, 0x11, 0x22, 0x33, 0x44, 0x55
	};
	const uint8_t	 zero[ETHER_ADDR_LEN] = { 0 };

	parse_ok("node n1", &st);
	ck_assert_str_eq(st.name, "n1");
	parse_ok("network lan", &st);
	ck_assert_str_eq(st.name, "lan");

	parse_ok("link h1 10.0.0.1:655", &st);
	ck_assert_str_eq(st.name, "h1");
	ck_assert_str_eq(st.addr.host, "10.0.0.1");
	ck_assert_uint_eq(st.addr.port, 655);
	parse_ok("del-link h1", &st);
	ck_assert_str_eq(st.name, "h1");
	ck_assert_str_eq(st.addr.host, "");

	parse_ok("listen *:655", &st);
	ck_assert_str_eq(st.addr.host, "*");
	ck_assert_uint_eq(st.addr.port, 655);
	parse_ok("listen [::1]:7", &st);
	ck_assert_str_eq(st.addr.host, "::1");
	ck_assert_uint_eq(st.addr.port, 7);

	parse_ok("control \"/run/a b\"", &st);
	ck_assert_str_eq(st.path, "/run/a b");

	parse_ok("keepalive 3600", &st);
	ck_assert_uint_eq(st.num, 3600);
	parse_ok("learn yes", &st);
	ck_assert_int_eq(st.flag, 1);
	parse_ok("learn no", &st);
	ck_assert_int_eq(st.flag, 0);

	parse_ok("interface g1 tap", &st);
	ck_assert_str_eq(st.name, "g1");
	ck_assert_int_eq(st.iftype, STMT_IF_TAP);
	ck_assert_str_eq(st.dev, "");
	parse_ok("interface g1 tap tapg1", &st);
	ck_assert_str_eq(st.dev, "tapg1");
	parse_ok("del-interface g1", &st);
	ck_assert_str_eq(st.name, "g1");

	parse_ok("route any 00:11:22:33:44:55 link proxy", &st);
	ck_assert_int_eq(st.src.kind, MATCH_ANY);
	ck_assert_mem_eq(st.src.mac, zero, ETHER_ADDR_LEN);
	ck_assert_int_eq(st.dst.kind, MATCH_MAC);
	ck_assert_mem_eq(st.dst.mac, mac, ETHER_ADDR_LEN);
	ck_assert_int_eq(st.target, TARGET_LINK);
	ck_assert_str_eq(st.name, "proxy");
	parse_ok("del-route not-00:11:22:33:44:55 any interface g1", &st);
	ck_assert_int_eq(st.src.kind, MATCH_NOT);
	ck_assert_mem_eq(st.src.mac, mac, ETHER_ADDR_LEN);
	ck_assert_int_eq(st.dst.kind, MATCH_ANY);
	ck_assert_int_eq(st.target, TARGET_INTERFACE);
	ck_assert_str_eq(st.name, "g1");

	parse_ok("listen *:1 tls", &st);
	ck_assert_int_eq(st.tls, 1);
	ck_assert_uint_eq(st.nallow, 0);
	parse_ok("listen *:1", &st);
	ck_assert_int_eq(st.tls, 0);
	parse_ok("listen *:1 allow 10.1.0.0/16,::1", &st);
	ck_assert_uint_eq(st.nallow, 2);
	ck_assert_int_eq(st.allow[0].family, AF_INET);
	ck_assert_uint_eq(st.allow[0].plen, 16);
	ck_assert_uint_eq(st.allow[0].addr[0], 10);
	ck_assert_uint_eq(st.allow[0].addr[1], 1);
	ck_assert_int_eq(st.allow[1].family, AF_INET6);
	ck_assert_uint_eq(st.allow[1].plen, 128);
	ck_assert_uint_eq(st.allow[1].addr[15], 1);

	parse_ok("link h1 10.0.0.1:655 tls peer p1 queue 2m", &st);
	ck_assert_int_eq(st.tls, 1);
	ck_assert_str_eq(st.peer, "p1");
	ck_assert_uint_eq(st.queue, 2 * 1024 * 1024);
	parse_ok("link h1 10.0.0.1:655", &st);
	ck_assert_int_eq(st.tls, 0);
	ck_assert_str_eq(st.peer, "");
	ck_assert_uint_eq(st.queue, 0);

	parse_ok("tls-ca /etc/ca.crt", &st);
	ck_assert_str_eq(st.path, "/etc/ca.crt");
	parse_ok("user vnet", &st);
	ck_assert_str_eq(st.account, "vnet");
	parse_ok("control-group adm", &st);
	ck_assert_str_eq(st.account, "adm");

	parse_ok("show links", &st);
	ck_assert_int_eq(st.show, STMT_SHOW_LINKS);
	parse_ok("show config", &st);
	ck_assert_int_eq(st.show, STMT_SHOW_CONFIG);
}
END_TEST

/* The whole struct is zeroed first, so two parses compare byte for byte. */
START_TEST(test_zeroed)
{
	struct stmt	 a, b;

	memset(&a, 0xa5, sizeof(a));
	memset(&b, 0x5a, sizeof(b));
	parse_ok("route any 00:11:22:33:44:55 link proxy", &a);
	parse_ok("route any 00:11:22:33:44:55 link proxy", &b);
	ck_assert_int_eq(memcmp(&a, &b, sizeof(a)), 0);

	/* And a failed parse leaves nothing behind. */
	memset(&b, 0, sizeof(b));
	memset(&a, 0xa5, sizeof(a));
	ck_assert_int_eq(stmt_parse("link h1 1.2.3.4:0", &a, NULL), -1);
	ck_assert_int_eq(memcmp(&a, &b, sizeof(a)), 0);
}
END_TEST

static const char *const blank[] = {
	"",
	" ",
	"\t \t",
	"\n",
	"\r\n",
	"  \r\n",
	"#",
	"# a comment",
	"   # indented comment",
	"\t#link h1 1.2.3.4:0",
	"# \"unterminated quotes in a comment are fine",
	"# \x01 control characters too",
};

START_TEST(test_blank)
{
	struct stmt		 st;
	struct stmt_error	 err;

	memset(&st, 0xa5, sizeof(st));
	ck_assert_int_eq(stmt_parse(blank[_i], &st, &err), 0);
	ck_assert_int_eq(st.kind, 0);
	ck_assert_int_eq(err.column, 0);
	ck_assert_str_eq(err.msg, "");
}
END_TEST

static const struct {
	const char	*line;
	int		 col;
	const char	*msg;
} errors[] = {
	/* Keywords. */
	{ "lnk h1",			1, "unknown statement 'lnk'" },
	{ "  bogus",			3, "unknown statement 'bogus'" },
	{ "Link h1 1.2.3.4:1",		1, "unknown statement 'Link'" },
	{ "add-node x",			1, "unknown statement 'add-node'" },
	{ "\"\"",			1, "unknown statement ''" },
	{ "lnk \"unterminated",		1, "unknown statement 'lnk'" },
	/* Lexical. */
	{ "\"link h1",			1, "unterminated quote" },
	{ "control \"/tmp/x",		9, "control: unterminated quote" },
	{ "control /tmp/\"x",		9, "control: unterminated quote" },
	{ "control \"/a\\",		9, "control: unterminated quote" },
	{ "control \"/a\\nb\"",		9,
	    "control: invalid escape '\\n' in quoted string" },
	{ "control \"/a\\ b\"",		9,
	    "control: invalid escape in quoted string" },
	{ "node a\x01" "b",		6, "node: invalid character 0x01" },
	{ "node \"a\x1b\"",		6, "node: invalid character 0x1b" },
	{ "node a\x7f",			6, "node: invalid character 0x7f" },
	{ "node a\r",			6, "node: invalid character 0x0d" },
	{ "node a\rb\n",		6, "node: invalid character 0x0d" },
	{ "node a\n\n",			6, "node: invalid character 0x0a" },
	{ "no\x01" "de a",		1, "invalid character 0x01" },
	/* node, network. */
	{ "node",			5, "node: expected NAME" },
	{ "node   ",			8, "node: expected NAME" },
	{ "node # n1",			6, "node: expected NAME" },
	{ "node\n",			5, "node: expected NAME" },
	{ "node a b",			8, "node: unexpected 'b'" },
	{ "node a \"\"",		8, "node: unexpected ''" },
	{ "node \"a b\"",		6, "node: invalid name 'a b'" },
	{ "node -a",			6, "node: invalid name '-a'" },
	{ "node .a",			6, "node: invalid name '.a'" },
	{ "node a/b",			6, "node: invalid name 'a/b'" },
	{ "node \"\"",			6, "node: invalid name ''" },
	{ "node abcdefghijabcdefghijabcdefghijab", 6,
	    "node: invalid name 'abcdefghijabcdefghijabcdefghijab'" },
	{ "network",			8, "network: expected NAME" },
	{ "network a:b",		9, "network: invalid name 'a:b'" },
	/* listen. */
	{ "listen",			7, "listen: expected ADDR:PORT" },
	{ "listen 1.2.3.4", 8, "listen: missing port in '1.2.3.4'" },
	{ "listen 1.2.3.4:", 8, "listen: missing port in '1.2.3.4:'" },
	{ "listen :655",		8, "listen: missing host in ':655'" },
	{ "listen ::1:655",		8,
	    "listen: invalid address '::1:655' (use [ADDR]:PORT for IPv6)" },
	{ "listen ::1",			8,
	    "listen: invalid address '::1' (use [ADDR]:PORT for IPv6)" },
	{ "listen [::1:655", 8, "listen: missing ']' in '[::1:655'" },
	{ "listen [::1]655",		8,
	    "listen: expected ':' after ']' in '[::1]655'" },
	{ "listen [::1]",		8,
	    "listen: expected ':' after ']' in '[::1]'" },
	{ "listen [::1]:",		8, "listen: missing port in '[::1]:'" },
	{ "listen [::g]:655", 8, "listen: invalid IPv6 address '::g'" },
	{ "listen []:655",		8, "listen: invalid IPv6 address ''" },
	{ "listen [1.2.3.4]:655",	8,
	    "listen: invalid IPv6 address '1.2.3.4'" },
	{ "listen [*]:655",		8, "listen: invalid IPv6 address '*'" },
	{ "listen [fe80::1%eth0]:655",	8,
	    "listen: scope ids are not supported in 'fe80::1%eth0'" },
	{ "listen 1.2.3.256:655",	8,
	    "listen: invalid IPv4 address '1.2.3.256'" },
	{ "listen 1.2.3:655", 8, "listen: invalid IPv4 address '1.2.3'" },
	{ "listen 01.2.3.4:655",	8,
	    "listen: invalid IPv4 address '01.2.3.4'" },
	{ "listen 1234:655", 8, "listen: invalid IPv4 address '1234'" },
	{ "listen host.123:655",	8,
	    "listen: invalid IPv4 address 'host.123'" },
	{ "listen **:655",		8, "listen: invalid host name '**'" },
	{ "listen 1.2.3.4:0", 8, "listen: invalid port '0' (1..65535)" },
	{ "listen *:655 x",		14, "listen: unexpected 'x'" },
	/* link, add-link, del-link. */
	{ "link",			5, "link: expected NAME HOST:PORT" },
	{ "link h1",			8, "link: expected NAME HOST:PORT" },
	{ "link h1   ",			11, "link: expected NAME HOST:PORT" },
	{ "link h1 # 1.2.3.4:655",	9, "link: expected NAME HOST:PORT" },
	{ "add-link h1", 12, "add-link: expected NAME HOST:PORT" },
	{ "link a!b 1.2.3.4:5",		6, "link: invalid name 'a!b'" },
	{ "link \"a b\" 1.2.3.4:5",	6, "link: invalid name 'a b'" },
	{ "link h1 1.2.3.4:655 extra",	21, "link: unexpected 'extra'" },
	{ "link h1 1.2.3.4:655 a b c d e f", 21, "link: unexpected 'a'" },
	{ "link h1 *:655",		9,
	    "link: invalid host '*' (only listen accepts '*')" },
	{ "link h1 -bad.example:655",	9,
	    "link: invalid host name '-bad.example'" },
	{ "link h1 bad-.example:655",	9,
	    "link: invalid host name 'bad-.example'" },
	{ "link h1 a..b:655",		9, "link: invalid host name 'a..b'" },
	{ "link h1 .a:655",		9, "link: invalid host name '.a'" },
	{ "link h1 a.:655",		9, "link: invalid host name 'a.'" },
	{ "link h1 a_b:655",		9, "link: invalid host name 'a_b'" },
	{ "link h1 a/b:655",		9, "link: invalid host name 'a/b'" },
	{ "link h1 1.2.3.4:0", 9, "link: invalid port '0' (1..65535)" },
	{ "link h1 1.2.3.4:65536",	9,
	    "link: invalid port '65536' (1..65535)" },
	{ "link h1 1.2.3.4:abc", 9, "link: invalid port 'abc' (1..65535)" },
	{ "del-link",			9, "del-link: expected NAME" },
	{ "del-link h1 1.2.3.4:5", 13, "del-link: unexpected '1.2.3.4:5'" },
	{ "del-link -x",		10, "del-link: invalid name '-x'" },
	/* control. */
	{ "control",			8, "control: expected PATH" },
	{ "control \"\"",		9, "control: empty path" },
	{ "control tmp/x", 9, "control: path 'tmp/x' is not absolute" },
	{ "control ./x", 9, "control: path './x' is not absolute" },
	{ "control /a /b",		12, "control: unexpected '/b'" },
	/* keepalive. */
	{ "keepalive", 10, "keepalive: expected SECONDS (1..3600)" },
	{ "keepalive 0",		11,
	    "keepalive: invalid seconds '0' (1..3600)" },
	{ "keepalive 3601",		11,
	    "keepalive: invalid seconds '3601' (1..3600)" },
	{ "keepalive abc",		11,
	    "keepalive: invalid seconds 'abc' (1..3600)" },
	{ "keepalive -1",		11,
	    "keepalive: invalid seconds '-1' (1..3600)" },
	{ "keepalive +5",		11,
	    "keepalive: invalid seconds '+5' (1..3600)" },
	{ "keepalive 1.5",		11,
	    "keepalive: invalid seconds '1.5' (1..3600)" },
	{ "keepalive \"\"",		11,
	    "keepalive: invalid seconds '' (1..3600)" },
	{ "keepalive 99999999999999999999", 11,
	    "keepalive: invalid seconds '99999999999999999999' (1..3600)" },
	{ "keepalive 10 20",		14, "keepalive: unexpected '20'" },
	/* learn. */
	{ "learn",			6, "learn: expected yes or no" },
	{ "learn maybe",		7,
	    "learn: invalid value 'maybe' (expected yes or no)" },
	{ "learn YES",			7,
	    "learn: invalid value 'YES' (expected yes or no)" },
	{ "offload",			8, "offload: expected yes or no" },
	{ "relay",			6, "relay: expected yes or no" },
	{ "relay off",			7,
	    "relay: invalid value 'off' (expected yes or no)" },
	{ "threads maybe",		9,
	    "threads: invalid value 'maybe' (expected yes or no)" },
	{ "offload on",			9,
	    "offload: invalid value 'on' (expected yes or no)" },
	{ "learn 1",			7,
	    "learn: invalid value '1' (expected yes or no)" },
	{ "learn yes no",		11, "learn: unexpected 'no'" },
	/* routing, advertise, show traffic. */
	{ "routing",			8,
	    "routing: expected auto [refresh SECONDS] or static" },
	{ "routing on",			9,
	    "routing: invalid value 'on' (expected auto or static)" },
	{ "routing auto refresh 0",	22,
	    "routing: invalid seconds '0' (1..3600)" },
	{ "routing auto refresh 3601",	22,
	    "routing: invalid seconds '3601' (1..3600)" },
	{ "routing auto every 5",	14,
	    "routing: expected 'refresh', not 'every'" },
	{ "routing static refresh 5",	16,
	    "routing: unexpected 'refresh'" },
	{ "advertise",			10, "advertise: expected HOST:PORT" },
	{ "show traffic sideways",	14,
	    "show: expected nodes, topology or matrix, not 'sideways'" },
	{ "show traffic matrix 0",	21,
	    "show: invalid size '0' (1..64 rows and columns)" },
	{ "show traffic matrix 65",	21,
	    "show: invalid size '65' (1..64 rows and columns)" },
	{ "show traffic matrix 8 x",	23, "show: unexpected 'x'" },
	{ "show traffic topology 1.5",	23,
	    "show: invalid threshold '1.5' (0..1, e.g. 0.1)" },
	{ "show traffic topology 0.1 x", 27, "show: unexpected 'x'" },
	/* interface, add-interface, del-interface. */
	{ "interface", 10, "interface: expected " IFACE_USAGE },
	{ "interface g1", 13, "interface: expected " IFACE_USAGE },
	{ "add-interface g1",		17,
	    "add-interface: expected " IFACE_USAGE },
	{ "interface -g tap",		11, "interface: invalid name '-g'" },
	{ "interface g1 foo",		14,
	    "interface: unknown type 'foo' (expected tap, pcap or qemu)" },
	{ "interface g1 TAP",		14,
	    "interface: unknown type 'TAP' (expected tap, pcap or qemu)" },
	{ "interface g1 tap 0123456789abcdef", 18,
	    "interface: invalid device name '0123456789abcdef'" },
	{ "interface g1 tap a/b",	18,
	    "interface: invalid device name 'a/b'" },
	{ "interface g1 tap .", 18, "interface: invalid device name '.'" },
	{ "interface g1 tap ..",	18,
	    "interface: invalid device name '..'" },
	{ "interface g1 tap \"\"", 18, "interface: invalid device name ''" },
	{ "interface g1 tap t x",	20,
	    "interface: unexpected 'x' (expected persist, bridge)" },
	{ "interface vm qemu",		18, "interface: expected " IFACE_USAGE },
	{ "interface vm qemu vm.sock",	19,
	    "interface: path 'vm.sock' is not absolute" },
	{ "interface vm qemu /a/b x",	24, "interface: unexpected 'x'" },
	{ "interface vm qemu /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 19,
	    "interface: path too long for a socket (max 107 characters)" },
	{ "interface g1 tap t persist", 27,
	    "interface: persist: expected yes, no or auto" },
	{ "interface g1 tap t bridge a/b", 27,
	    "interface: invalid bridge name 'a/b'" },
	{ "interface g1 tap t bridge b bridge c", 29,
	    "interface: bridge given twice" },
	{ "interface g1 tap t buffer 1m", 20,
	    "interface: unexpected 'buffer' (expected persist, bridge)" },
	{ "del-interface",		14, "del-interface: expected NAME" },
	/* interface pcap. */
	{ "interface lan pcap",		19, "interface: expected " IFACE_USAGE },
	{ "interface lan pcap a/b",	20,
	    "interface: invalid device name 'a/b'" },
	{ "interface lan pcap eth0 promisc", 32,
	    "interface: promisc: expected yes or no" },
	{ "interface lan pcap eth0 promisc maybe", 33,
	    "interface: invalid value 'maybe' (expected yes or no)" },
	{ "interface lan pcap eth0 filter", 31,
	    "interface: filter: expected a filter expression" },
	{ "interface lan pcap eth0 filter \"\"", 32,
	    "interface: empty filter" },
	{ "interface lan pcap eth0 snaplen 5", 25,
	    "interface: unexpected 'snaplen' (expected promisc, filter, buffer, up, segment)" },
	{ "interface lan pcap eth0 promisc no promisc yes", 36,
	    "interface: promisc given twice" },
	{ "interface lan pcap eth0 filter arp filter ip", 36,
	    "interface: filter given twice" },
	{ "interface lan pcap eth0 buffer", 31,
	    "interface: buffer: expected BYTES" },
	{ "interface lan pcap eth0 buffer 1k", 32,
	    "interface: invalid buffer size '1k' (128k..1g)" },
	{ "interface lan pcap eth0 buffer 2g", 32,
	    "interface: invalid buffer size '2g' (128k..1g)" },
	{ "interface lan pcap eth0 up down", 28,
	    "interface: invalid value 'down' (expected yes or no)" },
	{ "interface lan pcap eth0 segment a/b", 33,
	    "interface: invalid segment name 'a/b'" },
	{ "interface lan pcap eth0 segment", 32,
	    "interface: segment: expected a segment name" },
	{ "interface lan pcap eth0 up no up no", 31,
	    "interface: up given twice" },
	{ "interface lan pcap eth0 filter arp promisc no x", 47,
	    "interface: unexpected 'x' (expected promisc, filter, buffer, up, segment)" },
	/* reload, save, add-listen, del-listen. */
	{ "reload now",			8, "reload: unexpected 'now'" },
	{ "save relative.conf",		6,
	    "save: path 'relative.conf' is not absolute" },
	{ "save /a /b",			9, "save: unexpected '/b'" },
	{ "del-listen",			11, "del-listen: expected ADDR:PORT" },
	{ "del-listen 1.2.3.4",		12,
	    "del-listen: missing port in '1.2.3.4'" },
	{ "del-interface g1 tap",	18, "del-interface: unexpected 'tap'" },
	/* route, add-route, del-route. */
	{ "route",			6,
	    "route: expected SRC DST link|interface NAME" },
	{ "route any",			10,
	    "route: expected SRC DST link|interface NAME" },
	{ "route any any",		14,
	    "route: expected SRC DST link|interface NAME" },
	{ "route any any link",		19,
	    "route: expected SRC DST link|interface NAME" },
	{ "del-route any any",		18,
	    "del-route: expected SRC DST link|interface NAME" },
	{ "add-route any",		14,
	    "add-route: expected SRC DST link|interface NAME" },
	{ "route zz any link x",	7, "route: invalid MAC address 'zz'" },
	{ "route any not-zz link x",	11,
	    "route: invalid MAC address 'not-zz'" },
	{ "route any 00:11:22:33:44:5g link x", 11,
	    "route: invalid MAC address '00:11:22:33:44:5g'" },
	{ "route any 00:11:22:33:44:55:66 link x", 11,
	    "route: invalid MAC address '00:11:22:33:44:55:66'" },
	{ "route any 00:11:22-33:44:55 link x", 11,
	    "route: invalid MAC address '00:11:22-33:44:55'" },
	{ "route any not-any link x",	11,
	    "route: invalid MAC address 'not-any'" },
	{ "route ANY any link x",	7, "route: invalid MAC address 'ANY'" },
	{ "route not- any link x", 7, "route: invalid MAC address 'not-'" },
	{ "route any any port x",	15,
	    "route: unknown target 'port' (expected link or interface)" },
	{ "route any any link a/b",	20, "route: invalid name 'a/b'" },
	{ "route any any link x y",	22, "route: unexpected 'y'" },
	{ "del-route zz any link x",	11,
	    "del-route: invalid MAC address 'zz'" },
	/* show. */
	{ "show",			5,
	    "show: expected links, link, refused, routes, interfaces, macs, "
	    "stats, config, flows, vcc, nodes, topology, traffic, adapt or tls" },
	{ "show foo",			6, "show: unknown item 'foo' (expected "
	    "links, link, refused, routes, interfaces, macs, stats, config, "
	    "flows, vcc, nodes, topology, traffic, adapt or tls)" },
	{ "show Links",			6,
	    "show: unknown item 'Links' (expected "
	    "links, link, refused, routes, interfaces, macs, stats, config, "
	    "flows, vcc, nodes, topology, traffic, adapt or tls)" },
	{ "show links now",		12, "show: unexpected 'now'" },
	/* Long and unprintable tokens are cut and made safe to log. */
	{ "lnkxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxx", 1,
	    "unknown statement 'lnkxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'" },
	{ "node \"a\tb\"",		6, "node: invalid name 'a?b'" },
	{ "node caf\xc3\xa9",		6, "node: invalid name 'caf?" "?'" },
	{ "node n1 \"#not a comment\"x # c", 9,
	    "node: unexpected '#not a commentx'" },
	/* Link options. */
	{ "link a b:1 rate",		16, "link: expected NAME HOST:PORT" },
	{ "link a b:1 rate 10",		17, "link: invalid rate '10' (such as "
	    "500kbit, 10mbit, 2.5gbit; 8kbit to 1tbit; or none)" },
	{ "link a b:1 rate 7kbit",	17, "link: invalid rate '7kbit' (such "
	    "as 500kbit, 10mbit, 2.5gbit; 8kbit to 1tbit; or none)" },
	{ "link a b:1 rate 1.1tbit",	17, "link: invalid rate '1.1tbit' (such "
	    "as 500kbit, 10mbit, 2.5gbit; 8kbit to 1tbit; or none)" },
	{ "link a b:1 rate 10000.5bit",	17, "link: invalid rate '10000.5bit' "
	    "(such as 500kbit, 10mbit, 2.5gbit; 8kbit to 1tbit; or none)" },
	{ "link a b:1 rate -1mbit",	17, "link: invalid rate '-1mbit' (such "
	    "as 500kbit, 10mbit, 2.5gbit; 8kbit to 1tbit; or none)" },
	{ "link a b:1 rate .mbit",	17, "link: invalid rate '.mbit' (such "
	    "as 500kbit, 10mbit, 2.5gbit; 8kbit to 1tbit; or none)" },
	{ "link a b:1 rate 1mbit rate 2mbit", 23, "link: rate given twice" },
	{ "link a b:1 aqm",		15, "link: expected NAME HOST:PORT" },
	{ "link a b:1 aqm red",		16, "link: unknown aqm 'red' (expected "
	    "off, codel or fq_codel)" },
	{ "link a b:1 aqm off aqm off",	20, "link: aqm given twice" },
	{ "link a b:1 aqm off target 5ms", 20,
	    "link: unexpected 'target'" },
	{ "link a b:1 aqm codel target 99us", 29, "link: invalid target "
	    "'99us' (a time such as 5ms, 100us to 60s)" },
	{ "link a b:1 aqm codel interval 61s", 31, "link: invalid interval "
	    "'61s' (a time such as 5ms, 100us to 60s)" },
	{ "link a b:1 aqm codel target 5", 29, "link: invalid target "
	    "'5' (a time such as 5ms, 100us to 60s)" },
	{ "link a b:1 fast",		12,
	    "link: unexpected 'fast'" },
	{ "set-link a",			11, "set-link: expected NAME "
	    "[rate RATE|none] [aqm off|codel|fq_codel [target TIME] "
	    "[interval TIME]] [congestion CC|default] [transport tcp|udp|auto] "
	    "[queue BYTES]" },
	{ "set-link a congestion",	22, "set-link: expected NAME "
	    "[rate RATE|none] [aqm off|codel|fq_codel [target TIME] "
	    "[interval TIME]] [congestion CC|default] [transport tcp|udp|auto] "
	    "[queue BYTES]" },
	{ "set-link a congestion Cubic", 23, "set-link: invalid congestion "
	    "control 'Cubic' (a kernel's name for one, such as cubic or "
	    "bbr, or default)" },
	{ "set-link a congestion abcdefghijklmnop", 23, "set-link: invalid "
	    "congestion control 'abcdefghijklmnop' (a kernel's name for one, "
	    "such as cubic or bbr, or default)" },
	{ "set-link a congestion a/b", 23, "set-link: invalid congestion "
	    "control 'a/b' (a kernel's name for one, such as cubic or bbr, "
	    "or default)" },
	{ "link a b:1 congestion reno congestion reno", 28,
	    "link: congestion given twice" },
	{ "link a b:1 transport quic", 22, "link: unknown transport 'quic' "
	    "(expected tcp, udp or auto)" },
	{ "set-link a transport udp transport auto", 26,
	    "set-link: transport given twice" },
	{ "set-link a liveness 5ms",	21, "set-link: invalid liveness "
	    "interval '5ms' (a time such as 200ms, 10ms to 60s in whole ms, "
	    "or off or default)" },
	{ "set-link a liveness 1500us",	21, "set-link: invalid liveness "
	    "interval '1500us' (a time such as 200ms, 10ms to 60s in whole "
	    "ms, or off or default)" },
	{ "set-link a liveness off liveness off", 25,
	    "set-link: liveness given twice" },
	{ "set-link a liveness 1s multiplier 1", 35,
	    "set-link: invalid multiplier '1' (2..255)" },
	{ "liveness default",		10, "liveness: invalid liveness "
	    "interval 'default' (a time such as 200ms, 10ms to 60s in whole "
	    "ms, or off)" },
	{ "liveness 1s multiplier",	23, "liveness: expected TIME|off "
	    "[multiplier N]" },
	{ "liveness 1s x",		13, "liveness: unexpected 'x'" },
	{ "set-link a transport",	21, "set-link: expected NAME "
	    "[rate RATE|none] [aqm off|codel|fq_codel [target TIME] "
	    "[interval TIME]] [congestion CC|default] [transport tcp|udp|auto] "
	    "[queue BYTES]" },
	{ "set-link a b:1 rate 1mbit",	12,
	    "set-link: unexpected 'b:1'" },
	{ "show link",			10, "show: expected link NAME" },
	{ "show links some",		12, "show: unexpected 'some'" },
	{ "show links all x",		16, "show: unexpected 'x'" },
	{ "reload -x",			8, "reload: unexpected '-x'" },
	{ "reload -n -n",		11, "reload: unexpected '-n'" },
	{ "show link a b",		13, "show: unexpected 'b'" },
	/* listen options. */
	{ "listen *:1 tls tls",		16, "listen: tls given twice" },
	{ "listen *:1 allow",		17,
	    "listen: expected CIDR[,CIDR...] after allow" },
	{ "listen *:1 allow 10.0.0.0/8 allow 10.0.0.0/8", 29,
	    "listen: allow given twice" },
	{ "listen *:1 allow 10.0.0.0/33", 18,
	    "listen: invalid prefix length '33' (0..32)" },
	{ "listen *:1 allow ::/129",	18,
	    "listen: invalid prefix length '129' (0..128)" },
	{ "listen *:1 allow 10.0.0.0/",	18,
	    "listen: invalid prefix length '' (0..32)" },
	{ "listen *:1 allow 10.0.0.0/x", 18,
	    "listen: invalid prefix length 'x' (0..32)" },
	{ "listen *:1 allow 10.1.2.3/8", 18,
	    "listen: '10.1.2.3/8' has host bits set (the network is "
	    "10.0.0.0/8)" },
	{ "listen *:1 allow fe80::1/10", 18,
	    "listen: 'fe80::1/10' has host bits set (the network is "
	    "fe80::/10)" },
	{ "listen *:1 allow 10.0.0.256", 18,
	    "listen: invalid IPv4 address '10.0.0.256'" },
	{ "listen *:1 allow host.example", 18,
	    "listen: invalid IPv4 address 'host.example'" },
	{ "listen *:1 allow ::g",	18, "listen: invalid IPv6 address '::g'" },
	{ "listen *:1 allow 10.0.0.0/8,", 18,
	    "listen: empty entry in allow list" },
	{ "listen *:1 allow ,10.0.0.0/8", 18,
	    "listen: empty entry in allow list" },
	{ "listen *:1 allow 1.1.1.1,,2.2.2.2", 18,
	    "listen: empty entry in allow list" },
	{ "listen *:1 allow /8",	18, "listen: missing address in '/8'" },
	{ "listen *:1 allow 1.0.0.1,1.0.0.2,1.0.0.3,1.0.0.4,1.0.0.5,"
	    "1.0.0.6,1.0.0.7,1.0.0.8,1.0.0.9,1.0.0.10,1.0.0.11,1.0.0.12,"
	    "1.0.0.13,1.0.0.14,1.0.0.15,1.0.0.16,1.0.0.17", 18,
	    "listen: too many entries in allow list (max 16)" },
	{ "listen *:1 tls x",		16, "listen: unexpected 'x'" },
	{ "listen *:1 TLS",		12, "listen: unexpected 'TLS'" },
	/* link options. */
	{ "link h1 1.2.3.4:1 tls tls",	23, "link: tls given twice" },
	{ "link h1 1.2.3.4:1 peer",	23, "link: expected NODE after peer" },
	{ "link h1 1.2.3.4:1 peer -x",	24, "link: invalid name '-x'" },
	{ "link h1 1.2.3.4:1 peer a peer b", 26, "link: peer given twice" },
	{ "link h1 1.2.3.4:1 queue",	24,
	    "link: expected BYTES after queue" },
	{ "link h1 1.2.3.4:1 queue 1k",	25,
	    "link: invalid queue size '1k' (128k..1g)" },
	{ "link h1 1.2.3.4:1 queue 131071", 25,
	    "link: invalid queue size '131071' (128k..1g)" },
	{ "link h1 1.2.3.4:1 queue 2g",	25,
	    "link: invalid queue size '2g' (128k..1g)" },
	{ "link h1 1.2.3.4:1 queue 1073741825", 25,
	    "link: invalid queue size '1073741825' (128k..1g)" },
	{ "link h1 1.2.3.4:1 queue 99999999999999999999", 25,
	    "link: invalid queue size '99999999999999999999' (128k..1g)" },
	{ "link h1 1.2.3.4:1 queue 1t",	25,
	    "link: invalid queue size '1t' (128k..1g)" },
	{ "link h1 1.2.3.4:1 queue m",	25,
	    "link: invalid queue size 'm' (128k..1g)" },
	{ "link h1 1.2.3.4:1 queue -1m", 25,
	    "link: invalid queue size '-1m' (128k..1g)" },
	{ "link h1 1.2.3.4:1 queue 1m queue 2m", 28,
	    "link: queue given twice" },
	{ "link h1 1.2.3.4:1 tls peer a queue 1m x", 39,
	    "link: unexpected 'x'" },
	{ "link h1 1.2.3.4:1 allow 10.0.0.0/8", 19,
	    "link: unexpected 'allow'" },
	{ "del-link h1 tls",		13, "del-link: unexpected 'tls'" },
	/* tls-*, control-group, user. */
	{ "tls-cert",			9, "tls-cert: expected FILE" },
	{ "tls-key",			8, "tls-key: expected FILE" },
	{ "tls-ca",			7, "tls-ca: expected FILE" },
	{ "tls-crl",			8, "tls-crl: expected FILE" },
	{ "tls-cert a.crt",		10,
	    "tls-cert: path 'a.crt' is not absolute" },
	{ "tls-key \"\"",		9, "tls-key: empty path" },
	{ "tls-ca /a /b",		11, "tls-ca: unexpected '/b'" },
	{ "control-group",		14, "control-group: expected GROUP" },
	{ "control-group -g",		15,
	    "control-group: invalid group name '-g'" },
	{ "control-group a:b",		15,
	    "control-group: invalid group name 'a:b'" },
	{ "control-group a b",		17, "control-group: unexpected 'b'" },
	{ "user",			5, "user: expected NAME" },
	{ "user a/b",			6, "user: invalid user name 'a/b'" },
	{ "user abcdefghijabcdefghijabcdefghij123", 6,
	    "user: invalid user name 'abcdefghijabcdefghijabcdefghij123'" },
	{ "user \"\"",			6, "user: invalid user name ''" },
	{ "TLS-CA /a",			1, "unknown statement 'TLS-CA'" },
};

START_TEST(test_error)
{
	struct stmt		 st;
	struct stmt_error	 err;
	int			 rc;

	rc = stmt_parse(errors[_i].line, &st, &err);
	ck_assert_msg(rc == -1, "'%s': rc %d", errors[_i].line, rc);
	ck_assert_str_eq(err.msg, errors[_i].msg);
	ck_assert_msg(err.column == errors[_i].col, "'%s': column %d, not %d",
	    errors[_i].line, err.column, errors[_i].col);
	ck_assert_int_eq(st.kind, 0);
}
END_TEST

/* Ports on a link: PORT and the port it gives, 0 for an error. */
static const struct {
	const char	*port;
	unsigned int	 want;
} ports[] = {
	{ "1",		1 },
	{ "655",	655 },
	{ "00655",	655 },
	{ "65535",	65535 },
	{ "0",		0 },
	{ "00",		0 },
	{ "65536",	0 },
	{ "99999",	0 },
	{ "4294967297",	0 },
	{ "abc",	0 },
	{ "+655",	0 },
	{ "-1",		0 },
	{ "0x10",	0 },
	{ "1e3",	0 },
	{ "655a",	0 },
	{ "\" 655\"",	0 },
};

START_TEST(test_port)
{
	struct stmt		 st;
	struct stmt_error	 err;
	char			 line[128], msg[STMT_ERR_MAX];
	const char		*p = ports[_i].port;
	int			 rc;

	snprintf(line, sizeof(line), "link h1 10.0.0.1:%s", p);
	rc = stmt_parse(line, &st, &err);
	if (ports[_i].want != 0) {
		ck_assert_int_eq(rc, 1);
		ck_assert_uint_eq(st.addr.port, ports[_i].want);
		return;
	}
	ck_assert_int_eq(rc, -1);
	ck_assert_int_eq(err.column, 9);
	if (p[0] == '"')
		snprintf(msg, sizeof(msg),
		    "link: invalid port ' 655' (1..65535)");
	else
		snprintf(msg, sizeof(msg),
		    "link: invalid port '%s' (1..65535)", p);
	ck_assert_str_eq(err.msg, msg);
}
END_TEST

/* Addresses: the token, whether listen and link take it, the host kept. */
static const struct {
	const char	*addr;
	int		 listen, link;
	const char	*host;
} addrs[] = {
	{ "1.2.3.4:655",		1, 1, "1.2.3.4" },
	{ "255.255.255.255:1",		1, 1, "255.255.255.255" },
	{ "[::1]:655",			1, 1, "::1" },
	{ "[::]:655",			1, 1, "::" },
	{ "[FE80:0000::1]:655",		1, 1, "fe80::1" },
	{ "[2001:db8:1:2:3:4:5:6]:1",	1, 1, "2001:db8:1:2:3:4:5:6" },
	{ "host.example:655",		1, 1, "host.example" },
	{ "a:1",			1, 1, "a" },
	{ "x-1.y-2.z:1",		1, 1, "x-1.y-2.z" },
	{ "0a.example:1",		1, 1, "0a.example" },
	{ "*:655",			1, 0, "*" },
	{ "[fe80::1%eth0]:655",		0, 0, NULL },
	{ "fe80::1:655",		0, 0, NULL },
	{ "1.2.3.4",			0, 0, NULL },
	{ "[::1]",			0, 0, NULL },
	{ "*",				0, 0, NULL },
	{ "-a:1",			0, 0, NULL },
	{ "a-:1",			0, 0, NULL },
	{ "a b:1",			0, 0, NULL },
	{ "300.1.1.1:1",		0, 0, NULL },
};

START_TEST(test_addr)
{
	struct stmt		 st;
	struct stmt_error	 err;
	char			 line[128];
	int			 rc;

	snprintf(line, sizeof(line), "listen \"%s\"", addrs[_i].addr);
	rc = stmt_parse(line, &st, &err);
	ck_assert_msg(rc == (addrs[_i].listen ? 1 : -1), "'%s': %d %s", line,
	    rc, err.msg);
	if (rc == 1)
		ck_assert_str_eq(st.addr.host, addrs[_i].host);
	else
		ck_assert_int_eq(err.column, 8);

	snprintf(line, sizeof(line), "link h \"%s\"", addrs[_i].addr);
	rc = stmt_parse(line, &st, &err);
	ck_assert_msg(rc == (addrs[_i].link ? 1 : -1), "'%s': %d %s", line,
	    rc, err.msg);
	if (rc == 1)
		ck_assert_str_eq(st.addr.host, addrs[_i].host);
	else
		ck_assert_int_eq(err.column, 8);
}
END_TEST

/* Host names: 253 characters at most, labels of 63. */
START_TEST(test_hostname_length)
{
	struct stmt		 st;
	struct stmt_error	 err;
	char			 host[300], line[400];
	size_t			 i;

	/* 63 + 1 + 63 + 1 + 63 + 1 + 61 = 253 */
	memset(host, 'a', sizeof(host));
	for (i = 63; i < 253; i += 64)
		host[i] = '.';
	host[253] = '\0';
	snprintf(line, sizeof(line), "link h1 %s:1", host);
	parse_ok(line, &st);
	ck_assert_str_eq(st.addr.host, host);

	host[253] = 'a';
	host[254] = '\0';
	snprintf(line, sizeof(line), "link h1 %s:1", host);
	ck_assert_int_eq(stmt_parse(line, &st, &err), -1);
	ck_assert_str_eq(err.msg, "link: invalid host name "
	    "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'");
	ck_assert_int_eq(err.column, 9);

	/* Far longer than a host field: still an error, not an overflow. */
	memset(line, 'a', sizeof(line));
	memcpy(line, "link h1 ", 8);
	memcpy(line + sizeof(line) - 3, ":1", 3);
	ck_assert_int_eq(stmt_parse(line, &st, &err), -1);
	ck_assert_int_eq(err.column, 9);

	memset(line, '1', sizeof(line));
	memcpy(line, "link h1 ", 8);
	memcpy(line + sizeof(line) - 3, ":1", 3);
	ck_assert_int_eq(stmt_parse(line, &st, &err), -1);
	ck_assert_msg(strncmp(err.msg, "link: invalid IPv4 address", 26) == 0,
	    "%s", err.msg);

	/* A label of 63 is fine, 64 is not. */
	memset(host, 'b', 64);
	host[64] = '\0';
	snprintf(line, sizeof(line), "link h1 %s:1", host);
	ck_assert_int_eq(stmt_parse(line, &st, &err), -1);
	host[63] = '\0';
	snprintf(line, sizeof(line), "link h1 %s.c:1", host);
	ck_assert_int_eq(stmt_parse(line, &st, &err), 1);

	/* Far longer than a bracketed address can be. */
	memset(line, ':', sizeof(line));
	memcpy(line, "link h1 [", 9);
	memcpy(line + sizeof(line) - 5, "]:12", 5);
	ck_assert_int_eq(stmt_parse(line, &st, &err), -1);
	ck_assert_int_eq(err.column, 9);
}
END_TEST

START_TEST(test_path_length)
{
	struct stmt		 st;
	struct stmt_error	 err;
	char			 line[STMT_PATH_MAX + 64];

	memset(line, 'p', sizeof(line));
	memcpy(line, "control /", 9);
	line[8 + STMT_PATH_MAX] = '\0';
	parse_ok(line, &st);
	ck_assert_uint_eq(strlen(st.path), STMT_PATH_MAX);

	line[8 + STMT_PATH_MAX] = 'p';
	line[8 + STMT_PATH_MAX + 1] = '\0';
	ck_assert_int_eq(stmt_parse(line, &st, &err), -1);
	ck_assert_str_eq(err.msg,
	    "control: path too long (max 1023 characters)");
	ck_assert_int_eq(err.column, 9);
}
END_TEST

START_TEST(test_line_length)
{
	struct stmt		 st;
	struct stmt_error	 err;
	char			*line;

	line = malloc(STMT_LINE_MAX + 16);
	ck_assert_ptr_nonnull(line);

	/* Exactly STMT_LINE_MAX characters, with or without its line end. */
	memset(line, ' ', STMT_LINE_MAX);
	memcpy(line, "node", 4);
	memcpy(line + STMT_LINE_MAX - 2, "n1", 2);
	line[STMT_LINE_MAX] = '\0';
	parse_ok(line, &st);
	ck_assert_str_eq(st.name, "n1");
	memcpy(line + STMT_LINE_MAX, "\r\n", 3);
	parse_ok(line, &st);
	memcpy(line + STMT_LINE_MAX, "\n", 2);
	parse_ok(line, &st);

	/* One more is too long, even as a comment. */
	memset(line, '#', STMT_LINE_MAX + 1);
	line[STMT_LINE_MAX + 1] = '\0';
	ck_assert_int_eq(stmt_parse(line, &st, &err), -1);
	ck_assert_str_eq(err.msg, "line too long (more than 4096 characters)");
	ck_assert_int_eq(err.column, STMT_LINE_MAX + 1);
	memcpy(line + STMT_LINE_MAX + 1, "\r\n", 3);
	ck_assert_int_eq(stmt_parse(line, &st, &err), -1);
	ck_assert_int_eq(err.column, STMT_LINE_MAX + 1);

	/* The column of a missing argument after a long run of blanks. */
	memset(line, ' ', STMT_LINE_MAX);
	memcpy(line, "link h1", 7);
	line[STMT_LINE_MAX] = '\0';
	ck_assert_int_eq(stmt_parse(line, &st, &err), -1);
	ck_assert_str_eq(err.msg, "link: expected NAME HOST:PORT");
	ck_assert_int_eq(err.column, STMT_LINE_MAX + 1);

	/* Many tokens: the first extra one is reported. */
	memset(line, ' ', STMT_LINE_MAX);
	memcpy(line, "show links", 10);
	for (int i = 11; i + 1 < STMT_LINE_MAX; i += 2)
		line[i] = 'x';
	line[STMT_LINE_MAX] = '\0';
	ck_assert_int_eq(stmt_parse(line, &st, &err), -1);
	ck_assert_str_eq(err.msg, "show: unexpected 'x'");
	ck_assert_int_eq(err.column, 12);

	/* An error in a token far past the ones the statement takes. */
	memcpy(line + STMT_LINE_MAX - 3, " \"x", 3);
	ck_assert_int_eq(stmt_parse(line, &st, &err), -1);
	ck_assert_str_eq(err.msg, "show: unterminated quote");
	ck_assert_int_eq(err.column, STMT_LINE_MAX - 1);
	free(line);
}
END_TEST

/* NULL for the statement or the error: a syntax check. */
START_TEST(test_null_args)
{
	struct stmt_error	 err;
	struct stmt		 st;

	ck_assert_int_eq(stmt_parse("link h1 1.2.3.4:5", NULL, NULL), 1);
	ck_assert_int_eq(stmt_parse("link h1 1.2.3.4:0", NULL, NULL), -1);
	ck_assert_int_eq(stmt_parse("# c", NULL, NULL), 0);
	ck_assert_int_eq(stmt_parse("lnk", NULL, &err), -1);
	ck_assert_str_eq(err.msg, "unknown statement 'lnk'");
	ck_assert_int_eq(stmt_parse("learn no", &st, NULL), 1);
	ck_assert_int_eq(st.kind, STMT_LEARN);
}
END_TEST

static void
set_mac(struct stmt_match *m, enum stmt_match_kind kind, uint8_t last)
{
	static const uint8_t	 base[ETHER_ADDR_LEN] = { 2, 0, 0, 0, 0, 0 };

	memset(m, 0, sizeof(*m));
	m->kind = kind;
	if (kind != MATCH_ANY) {
		memcpy(m->mac, base, ETHER_ADDR_LEN);
		m->mac[5] = last;
	}
}

START_TEST(test_print)
{
	struct stmt	 st;
	char		 buf[64], big[2 * STMT_PATH_MAX + 64];
	int		 n;

	parse_ok("link h1 10.0.0.1:655", &st);
	/* Like snprintf: the full length, whatever fits. */
	ck_assert_int_eq(stmt_print(&st, NULL, 0), 20);
	ck_assert_int_eq(stmt_print(&st, buf, 5), 20);
	ck_assert_str_eq(buf, "link");
	ck_assert_int_eq(stmt_print(&st, buf, sizeof(buf)), 20);
	ck_assert_str_eq(buf, "link h1 10.0.0.1:655");

	/* Statements built in code, not parsed. */
	memset(&st, 0, sizeof(st));
	st.kind = STMT_ROUTE;
	st.op = STMT_OP_DEL;
	set_mac(&st.src, MATCH_NOT, 1);
	set_mac(&st.dst, MATCH_MAC, 2);
	st.target = TARGET_INTERFACE;
	strcpy(st.name, "g1");
	stmt_print(&st, buf, sizeof(buf));
	ck_assert_str_eq(buf, "del-route not-02:00:00:00:00:01 "
	    "02:00:00:00:00:02 interface g1");

	memset(&st, 0, sizeof(st));
	st.kind = STMT_LISTEN;
	strcpy(st.addr.host, "*");
	st.addr.port = 655;
	stmt_print(&st, buf, sizeof(buf));
	ck_assert_str_eq(buf, "listen *:655");
	strcpy(st.addr.host, "::1");
	stmt_print(&st, buf, sizeof(buf));
	ck_assert_str_eq(buf, "listen [::1]:655");

	memset(&st, 0, sizeof(st));
	st.kind = STMT_LEARN;
	st.flag = 7;
	stmt_print(&st, buf, sizeof(buf));
	ck_assert_str_eq(buf, "learn yes");

	/* Quotes only where a plain token would not come back. */
	memset(&st, 0, sizeof(st));
	st.kind = STMT_CONTROL;
	strcpy(st.path, "/a\\b");
	stmt_print(&st, buf, sizeof(buf));
	ck_assert_str_eq(buf, "control /a\\b");
	strcpy(st.path, "/a \"b\\c\"");
	stmt_print(&st, buf, sizeof(buf));
	ck_assert_str_eq(buf, "control \"/a \\\"b\\\\c\\\"\"");

	/* A path of quotes only: every character escaped, nothing lost. */
	memset(st.path, '"', STMT_PATH_MAX);
	st.path[0] = '/';
	st.path[STMT_PATH_MAX] = '\0';
	n = stmt_print(&st, big, sizeof(big));
	ck_assert_int_eq(n, 8 + 2 + 1 + 2 * (STMT_PATH_MAX - 1));
	ck_assert_int_eq((int)strlen(big), n);
}
END_TEST

/* What has no text: print says so, like snprintf, with an empty string. */
START_TEST(test_print_invalid)
{
	struct stmt	 st;
	char		 buf[64];

	memset(&st, 0, sizeof(st));
	strcpy(buf, "junk");
	ck_assert_int_eq(stmt_print(&st, buf, sizeof(buf)), -1);
	ck_assert_str_eq(buf, "");

	st.kind = STMT_NODE;
	st.op = STMT_OP_DEL;		/* there is no del-node */
	strcpy(st.name, "n");
	ck_assert_int_eq(stmt_print(&st, buf, sizeof(buf)), -1);

	memset(&st, 0, sizeof(st));
	st.kind = STMT_SHOW;
	ck_assert_int_eq(stmt_print(&st, buf, sizeof(buf)), -1);

	memset(&st, 0, sizeof(st));
	st.kind = STMT_ROUTE;
	strcpy(st.name, "x");
	ck_assert_int_eq(stmt_print(&st, buf, sizeof(buf)), -1);
	st.target = TARGET_LINK;
	ck_assert_int_gt(stmt_print(&st, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "route any any link x");

	memset(&st, 0, sizeof(st));
	st.kind = STMT_INTERFACE;
	strcpy(st.name, "g");
	ck_assert_int_eq(stmt_print(&st, buf, sizeof(buf)), -1);
	st.op = STMT_OP_DEL;		/* the type does not matter here */
	ck_assert_int_gt(stmt_print(&st, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "del-interface g");
	ck_assert_int_eq(stmt_print(&st, NULL, 0), 15);
}
END_TEST

START_TEST(test_format)
{
	struct stmt_match	 m;
	struct stmt_hostport	 hp;
	char			 buf[STMT_HOST_MAX + 9];

	set_mac(&m, MATCH_ANY, 0);
	ck_assert_str_eq(stmt_match_format(&m, buf), "any");
	set_mac(&m, MATCH_MAC, 0xab);
	ck_assert_str_eq(stmt_match_format(&m, buf), "02:00:00:00:00:ab");
	set_mac(&m, MATCH_NOT, 0xff);
	ck_assert_ptr_eq(stmt_match_format(&m, buf), buf);
	ck_assert_str_eq(buf, "not-02:00:00:00:00:ff");

	memset(&hp, 0, sizeof(hp));
	strcpy(hp.host, "10.1.2.3");
	hp.port = 65535;
	ck_assert_str_eq(stmt_hostport_format(&hp, buf, sizeof(buf)),
	    "10.1.2.3:65535");
	strcpy(hp.host, "fe80::1");
	hp.port = 1;
	ck_assert_str_eq(stmt_hostport_format(&hp, buf, sizeof(buf)),
	    "[fe80::1]:1");
	strcpy(hp.host, "*");
	ck_assert_str_eq(stmt_hostport_format(&hp, buf, sizeof(buf)), "*:1");
	strcpy(hp.host, "h.example");
	ck_assert_str_eq(stmt_hostport_format(&hp, buf, 6), "h.exa");

	/* The longest host fits the documented size. */
	memset(hp.host, 'a', STMT_HOST_MAX);
	hp.host[STMT_HOST_MAX] = '\0';
	hp.host[0] = ':';
	hp.port = 65535;
	stmt_hostport_format(&hp, buf, sizeof(buf));
	ck_assert_uint_eq(strlen(buf), STMT_HOST_MAX + 8);
	ck_assert_str_eq(buf + STMT_HOST_MAX + 1, "]:65535");
}
END_TEST

/* Pairs of lines and whether they are equal statements. */
static const struct {
	const char	*a, *b;
	int		 equal;
} equals[] = {
	{ "node a",			"node a",			1 },
	{ "node a",			"node b",			0 },
	{ "node a",			"network a",			0 },
	{ "network a",			"network a",			1 },
	{ "listen *:1",			"listen *:1",			1 },
	{ "listen *:1",			"listen *:2",			0 },
	{ "listen [::1]:1",		"listen [0::1]:1",		1 },
	{ "listen [::1]:1",		"listen 127.0.0.1:1",		0 },
	{ "control /a",			"control \"/a\"",		1 },
	{ "control /a",			"control /a/",			0 },
	{ "keepalive 5",		"keepalive 005",		1 },
	{ "keepalive 5",		"keepalive 6",			0 },
	{ "set-link a congestion reno",	"set-link a congestion reno",	1 },
	{ "set-link a congestion reno",	"set-link a congestion cubic",	0 },
	{ "set-link a congestion reno",	"set-link a rate 1mbit",	0 },
	{ "link a b:1 congestion default", "link a b:1",		0 },
	{ "set-link a transport udp",	"set-link a transport udp",	1 },
	{ "set-link a transport udp",	"set-link a transport auto",	0 },
	{ "learn yes",			"learn yes",			1 },
	{ "learn yes",			"learn no",			0 },
	{ "interface g1 tap",		"add-interface g1 tap",		1 },
	{ "interface g1 tap",		"interface g1 tap g1",		1 },
	{ "interface g1 tap a",		"interface g1 tap b",		0 },
	{ "interface g1 tap a",		"interface g1 tap",		0 },
	{ "interface g1 tap",		"interface g2 tap",		0 },
	{ "interface g1 tap",		"del-interface g1",		0 },
	{ "del-interface g1",		"del-interface g1",		1 },
	{ "del-interface g1",		"del-link g1",			0 },
	{ "link h 1.2.3.4:1",		"add-link h 1.2.3.4:1",		1 },
	{ "link h 1.2.3.4:1",		"link h 1.2.3.4:2",		0 },
	{ "link h 1.2.3.4:1",		"link h 1.2.3.5:1",		0 },
	{ "link h 1.2.3.4:1",		"link g 1.2.3.4:1",		0 },
	{ "link h Example.COM:1",	"link h example.com:1",		1 },
	{ "link h 1.2.3.4:1",		"del-link h",			0 },
	{ "del-link h",			"del-link h",			1 },
	{ "route any any link x",	"add-route any any link x",	1 },
	{ "route any any link x",	"route any any interface x",	0 },
	{ "route any any link x",	"route any any link y",		0 },
	{ "route any any link x",	"del-route any any link x",	0 },
	{ "route 00:00:00:00:00:01 any link x",
	  "route 00-00-00-00-00-01 any link x",				1 },
	{ "route 00:00:00:00:00:01 any link x",
	  "route not-00:00:00:00:00:01 any link x",			0 },
	{ "route any 00:00:00:00:00:01 link x",
	  "route any 00:00:00:00:00:02 link x",				0 },
	{ "route any 00:00:00:00:00:01 link x",
	  "route 00:00:00:00:00:01 any link x",				0 },
	{ "show links",			"show links",			1 },
	{ "show links",			"show routes",			0 },
	{ "show links",			"show links all",		0 },
	{ "reload",			"reload -n",			0 },
	{ "interface l pcap e",		"interface l pcap e promisc yes", 1 },
	{ "interface l pcap e",		"interface l pcap e promisc no", 0 },
	{ "interface l pcap e",		"interface l tap e",		0 },
	{ "interface l pcap e",		"interface l pcap f",		0 },
	{ "interface l pcap e filter arp",
	  "interface l pcap e filter \"arp\"",				1 },
	{ "interface l pcap e filter arp",
	  "interface l pcap e filter ip",				0 },
	{ "interface l pcap e filter arp", "interface l pcap e",	0 },
	{ "interface l pcap e filter arp promisc no",
	  "interface l pcap e promisc no filter arp",			1 },
	{ "reload",			"reload",			1 },
	{ "save",			"save",				1 },
	{ "save",			"save /a",			0 },
	{ "save /a",			"save /a",			1 },
	{ "listen *:1",			"del-listen *:1",		0 },
	{ "del-listen *:1",		"del-listen *:1",		1 },
	{ "listen *:1 tls",		"listen *:1 tls",		1 },
	{ "listen *:1 tls",		"listen *:1",			0 },
	{ "listen *:1 allow ::1",	"listen *:1 allow ::1/128",	1 },
	{ "listen *:1 allow ::1",	"listen *:1",			0 },
	{ "listen *:1 allow ::1",	"listen *:1 allow ::2",		0 },
	{ "listen *:1 allow 1.0.0.0/8",	"listen *:1 allow 1.0.0.0/9",	0 },
	{ "listen *:1 allow 1.1.1.1,2.2.2.2",
	  "listen *:1 allow 1.1.1.1",					0 },
	{ "link h 1.2.3.4:1 tls",	"link h 1.2.3.4:1",		0 },
	{ "link h 1.2.3.4:1 peer x",	"link h 1.2.3.4:1",		0 },
	{ "link h 1.2.3.4:1 peer h",	"link h 1.2.3.4:1",		1 },
	{ "link h 1.2.3.4:1 queue 1m",	"link h 1.2.3.4:1 queue 1024k",	1 },
	{ "link h 1.2.3.4:1 queue 1m",	"link h 1.2.3.4:1 queue 2m",	0 },
	{ "link h 1.2.3.4:1 queue 1m",	"link h 1.2.3.4:1",		0 },
	{ "tls-cert /a",		"tls-cert /a",			1 },
	{ "tls-cert /a",		"tls-key /a",			0 },
	{ "tls-ca /a",			"tls-ca /b",			0 },
	{ "tls-crl /a",			"tls-crl \"/a\"",		1 },
	{ "user a",			"user a",			1 },
	{ "user a",			"user b",			0 },
	{ "user a",			"control-group a",		0 },
	{ "control-group a",		"control-group a",		1 },
};

START_TEST(test_equal)
{
	struct stmt	 a, b;

	parse_ok(equals[_i].a, &a);
	parse_ok(equals[_i].b, &b);
	ck_assert_msg(stmt_equal(&a, &b) == equals[_i].equal,
	    "'%s' vs '%s'", equals[_i].a, equals[_i].b);
	ck_assert_msg(stmt_equal(&b, &a) == equals[_i].equal,
	    "'%s' vs '%s'", equals[_i].b, equals[_i].a);
	ck_assert(stmt_equal(&a, &a));
}
END_TEST

/* Fields a kind does not use do not count. */
START_TEST(test_equal_unused)
{
	struct stmt	 a, b;

	parse_ok("route any any link x", &a);
	b = a;
	memset(b.src.mac, 0xff, ETHER_ADDR_LEN);
	strcpy(b.path, "/elsewhere");
	b.num = 9;
	ck_assert(stmt_equal(&a, &b));

	parse_ok("del-link h", &a);
	b = a;
	strcpy(b.addr.host, "1.2.3.4");
	b.addr.port = 1;
	ck_assert(stmt_equal(&a, &b));

	parse_ok("learn yes", &a);
	b = a;
	b.flag = 2;
	strcpy(b.name, "zz");
	ck_assert(stmt_equal(&a, &b));

	parse_ok("node a", &a);
	b = a;
	b.show = STMT_SHOW_MACS;
	b.target = TARGET_LINK;
	ck_assert(stmt_equal(&a, &b));

	/* Unknown kinds are never equal, not even to themselves. */
	memset(&a, 0, sizeof(a));
	ck_assert(!stmt_equal(&a, &a));
}
END_TEST

static const struct {
	const char	*s;
	int		 name, dev;
} names[] = {
	{ "a",					1, 1 },
	{ "0",					1, 1 },
	{ "a.b_c-d",				1, 1 },
	{ "Z9",					1, 1 },
	{ "0123456789abcde",			1, 1 },	/* 15 */
	{ "0123456789abcdef",			1, 0 },	/* 16 */
	{ "abcdefghijabcdefghijabcdefghija",	1, 0 },	/* 31 */
	{ "abcdefghijabcdefghijabcdefghijab",	0, 0 },	/* 32 */
	{ "",					0, 0 },
	{ ".a",					0, 1 },
	{ "-a",					0, 1 },
	{ "_a",					0, 1 },
	{ ".",					0, 0 },
	{ "..",					0, 0 },
	{ "...",				0, 1 },
	{ "a b",				0, 0 },
	{ "a/b",				0, 0 },
	{ "a:b",				0, 0 },
	{ "a%b",				0, 0 },
	{ "caf\xc3\xa9",			0, 0 },
};

START_TEST(test_valid_names)
{
	ck_assert_msg(stmt_valid_name(names[_i].s) == names[_i].name,
	    "name '%s'", names[_i].s);
	ck_assert_msg(stmt_valid_dev(names[_i].s) == names[_i].dev,
	    "dev '%s'", names[_i].s);
}
END_TEST

/* A small generator of valid statements; its state is the caller's. */
static unsigned int
rnd(unsigned int *state, unsigned int n)
{
	*state = *state * 1103515245u + 12345u;
	return (*state >> 16) % n;
}

static void
rnd_name(unsigned int *state, char *buf, size_t max)
{
	static const char	 first[] = "abcXYZ019";
	static const char	 rest[] = "abcXYZ019._-";
	size_t			 i, len = 1 + rnd(state, (unsigned int)max);

	buf[0] = first[rnd(state, sizeof(first) - 1)];
	for (i = 1; i < len; i++)
		buf[i] = rest[rnd(state, sizeof(rest) - 1)];
	buf[len] = '\0';
}

static void
rnd_match(unsigned int *state, struct stmt_match *m)
{
	int	 i;

	m->kind = (enum stmt_match_kind)rnd(state, 3);
	if (m->kind != MATCH_ANY)
		for (i = 0; i < ETHER_ADDR_LEN; i++)
			m->mac[i] = (uint8_t)rnd(state, 256);
}

static void
rnd_hostport(unsigned int *state, struct stmt_hostport *hp, int wildcard)
{
	static const char *const hosts[] = {
		"10.0.0.1", "::1", "2001:db8::5", "::ffff:1.2.3.4",
		"host.example", "a-b.c", "x",
	};

	if (wildcard && rnd(state, 4) == 0)
		strcpy(hp->host, "*");
	else
		strcpy(hp->host, hosts[rnd(state, nitems(hosts))]);
	hp->port = (uint16_t)(1 + rnd(state, 65535));
}

/* liveness TIME|off (or default, for a link) [multiplier N]. */
static void
rnd_liveness(unsigned int *state, struct stmt *st, int dflt)
{
	switch (rnd(state, 3)) {
	case 0:
		st->live_interval = STMT_LIVENESS_OFF;
		break;
	case 1:
		if (dflt) {
			st->live_interval = 0;
			break;
		}
		/* FALLTHROUGH */
	default:
		st->live_interval = STMT_LIVENESS_MIN + rnd(state,
		    STMT_LIVENESS_MAX - STMT_LIVENESS_MIN + 1);
	}
	st->live_mult = rnd(state, 2) ? 0 : STMT_LIVENESS_MULT_MIN +
	    rnd(state, STMT_LIVENESS_MULT_MAX - STMT_LIVENESS_MULT_MIN + 1);
}

/* Link options; at least one when need is set. */
static void
rnd_link_opts(unsigned int *state, struct stmt *st, int need)
{
	static const uint64_t	 mult[] = { 1000, 1000000, 1000000000 };

	do
		st->lopts = rnd(state, 4);
	while (need && st->lopts == 0);
	if (st->lopts & STMT_LOPT_RATE) {
		st->rate = rnd(state, 5) == 0 ? 0 : (uint64_t)(8 +
		    rnd(state, 992)) * mult[rnd(state, 3)] + rnd(state, 2);
	}
	if (st->lopts & STMT_LOPT_AQM) {
		st->aqm = (enum stmt_aqm)(STMT_AQM_OFF + rnd(state, 3));
		if (st->aqm != STMT_AQM_OFF) {
			if (rnd(state, 2))
				st->aqm_target = STMT_TIME_MIN +
				    rnd(state, 1000000);
			if (rnd(state, 2))
				st->aqm_interval = STMT_TIME_MIN +
				    rnd(state, 1000000);
		}
	}
	if (rnd(state, 3) == 0) {
		st->lopts |= STMT_LOPT_LIVENESS;
		rnd_liveness(state, st, 1);
	}
}

/* Host bits cleared, as the parser demands. */
static void
rnd_cidr(unsigned int *state, struct stmt_cidr *c)
{
	unsigned int	 i, max;

	memset(c, 0, sizeof(*c));
	c->family = rnd(state, 2) ? AF_INET : AF_INET6;
	max = c->family == AF_INET ? 32 : 128;
	c->plen = (uint8_t)rnd(state, max + 1);
	for (i = 0; i < max / 8; i++)
		c->addr[i] = (uint8_t)rnd(state, 256);
	for (i = c->plen; i < max; i++)
		c->addr[i / 8] &= (uint8_t)~(0x80 >> (i % 8));
}

static void
rnd_stmt(unsigned int *state, struct stmt *st)
{
	static const char	 pathchars[] = "/ab \t#\"\\x.";
	size_t			 i, len;

	memset(st, 0, sizeof(*st));
	/* vcc statements have their own tests (check_vcc). */
	do
		st->kind = (enum stmt_kind)(STMT_NODE + rnd(state,
		    STMT_KIND_LAST));
	while (st->kind == STMT_VCC);
	switch (st->kind) {
	case STMT_NODE:
	case STMT_NETWORK:
		rnd_name(state, st->name, STMT_NAME_MAX);
		break;
	case STMT_LISTEN:
		st->op = (enum stmt_op)rnd(state, 2);
		rnd_hostport(state, &st->addr, 1);
		st->tls = (int)rnd(state, 2);
		st->nallow = rnd(state, STMT_ALLOW_MAX + 1);
		for (i = 0; i < st->nallow; i++)
			rnd_cidr(state, &st->allow[i]);
		break;
	case STMT_HTTP:
		rnd_hostport(state, &st->addr, 1);
		st->nallow = rnd(state, STMT_ALLOW_MAX + 1);
		for (i = 0; i < st->nallow; i++)
			rnd_cidr(state, &st->allow[i]);
		break;
	case STMT_RELOAD:
		break;
	case STMT_SAVE:
		if (rnd(state, 2) == 0)
			break;
		/* FALLTHROUGH */
	case STMT_CONTROL:
	case STMT_TLS_CERT:
	case STMT_TLS_KEY:
	case STMT_TLS_CA:
	case STMT_TLS_CRL:
		len = 1 + rnd(state, 40);
		st->path[0] = '/';
		for (i = 1; i < len; i++)
			st->path[i] = pathchars[rnd(state,
			    sizeof(pathchars) - 1)];
		break;
	case STMT_KEEPALIVE:
		st->num = 1 + rnd(state, 3600);
		break;
	case STMT_LIVENESS:
		rnd_liveness(state, st, 0);
		break;
	case STMT_LEARN:
	case STMT_OFFLOAD:
	case STMT_THREADS:
	case STMT_RELAY:
		st->flag = (int)rnd(state, 2);
		break;
	case STMT_ROUTING:
		st->flag = (int)rnd(state, 2);
		st->num = st->flag ? rnd(state, STMT_REFRESH_MAX + 1) : 0;
		break;
	case STMT_ADVERTISE:
		rnd_hostport(state, &st->addr, 0);
		break;
	case STMT_ADAPT:
		/* 0: shortcuts yes|no with its options; else off or on. */
		st->adapt.verb = rnd(state, 3);
		if (st->adapt.verb != 0)
			break;
		st->flag = (int)rnd(state, 2);
		if (rnd(state, 2))
			st->rate = (uint64_t)(8 + rnd(state, 992)) * 1000000;
		if (rnd(state, 2))
			st->adapt.hold = 1 + rnd(state, STMT_ADAPT_SECONDS_MAX);
		if (rnd(state, 2))
			st->adapt.idle = 1 + rnd(state, STMT_ADAPT_SECONDS_MAX);
		if (rnd(state, 2))
			st->adapt.max = 1 + rnd(state, STMT_ADAPT_MAX_MAX);
		break;
	case STMT_INTERFACE:
		st->op = (enum stmt_op)rnd(state, 2);
		rnd_name(state, st->name, STMT_NAME_MAX);
		if (st->op == STMT_OP_SET && rnd(state, 2)) {
			st->iftype = STMT_IF_TAP;
			/* persist yes or no needs a device to follow. */
			st->persist = STMT_PERSIST_AUTO;
			if (rnd(state, 2)) {
				rnd_name(state, st->dev, STMT_DEV_MAX);
				st->persist = (int)rnd(state, 3);
			}
		} else if (st->op == STMT_OP_SET) {
			st->iftype = STMT_IF_PCAP;
			rnd_name(state, st->dev, STMT_DEV_MAX);
			st->promisc = (int)rnd(state, 2);
			len = rnd(state, 40);
			for (i = 0; i < len; i++)
				st->filter[i] = pathchars[rnd(state,
				    sizeof(pathchars) - 1)];
		}
		break;
	case STMT_LINK:
		st->op = (enum stmt_op)rnd(state, 2);
		rnd_name(state, st->name, STMT_NAME_MAX);
		if (st->op == STMT_OP_SET) {
			rnd_hostport(state, &st->addr, 0);
			rnd_link_opts(state, st, 0);
			st->tls = (int)rnd(state, 2);
			if (rnd(state, 2))
				rnd_name(state, st->peer, STMT_NAME_MAX);
			if (strcmp(st->peer, st->name) == 0)
				st->peer[0] = '\0';
			if (rnd(state, 2))
				st->queue = STMT_QUEUE_MIN + rnd(state,
				    STMT_QUEUE_MAX - STMT_QUEUE_MIN + 1);
		}
		break;
	case STMT_SET_LINK:
		rnd_name(state, st->name, STMT_NAME_MAX);
		rnd_link_opts(state, st, 1);
		break;
	case STMT_CONTROL_GROUP:
	case STMT_USER:
		len = 1 + rnd(state, STMT_ACCOUNT_MAX);
		st->account[0] = "abc_019"[rnd(state, 7)];
		for (i = 1; i < len; i++)
			st->account[i] = "ab._-9"[rnd(state, 6)];
		break;
	case STMT_ROUTE:
		st->op = (enum stmt_op)rnd(state, 2);
		rnd_match(state, &st->src);
		rnd_match(state, &st->dst);
		st->target = (enum stmt_target)(TARGET_LINK + rnd(state, 2));
		rnd_name(state, st->name, STMT_NAME_MAX);
		break;
	case STMT_SHOW:
		st->show = (enum stmt_show)(STMT_SHOW_LINKS + rnd(state, 7));
		if (st->show == STMT_SHOW_LINK)
			rnd_name(state, st->name, STMT_NAME_MAX);
		break;
	case STMT_VCC:		/* not drawn: see above */
		break;
	}
}

/* stmt_parse(stmt_print(x)) == x, and printing is a fixed point. */
START_TEST(test_roundtrip)
{
	struct stmt		 a, b;
	struct stmt_error	 err;
	char			 text[STMT_LINE_MAX], again[STMT_LINE_MAX];
	unsigned int		 state = 20240601;
	int			 i, n;

	for (i = 0; i < 5000; i++) {
		rnd_stmt(&state, &a);
		n = stmt_print(&a, text, sizeof(text));
		ck_assert_int_gt(n, 0);
		ck_assert_int_lt(n, (int)sizeof(text));
		ck_assert_msg(stmt_parse(text, &b, &err) == 1,
		    "'%s': column %d: %s", text, err.column, err.msg);
		ck_assert_msg(stmt_equal(&a, &b), "'%s' does not come back",
		    text);
		stmt_print(&b, again, sizeof(again));
		ck_assert_str_eq(again, text);
	}
}
END_TEST

/* Equal statements hash equal: an index finds one by the other. */
START_TEST(test_hash_equal)
{
	struct stmt	 a, b;

	parse_ok(equals[_i].a, &a);
	parse_ok(equals[_i].b, &b);
	if (equals[_i].equal)
		ck_assert_msg(stmt_hash(&a) == stmt_hash(&b),
		    "'%s' and '%s' hash apart", equals[_i].a, equals[_i].b);
}
END_TEST

/* Every valid statement comes back out of a list as it went in. */
START_TEST(test_vec)
{
	struct stmt_vec		 v = { NULL, 0, 0 };
	struct stmt		*in, tmp;
	const struct stmt	*out;
	char			 a[STMT_LINE_MAX + 1], b[STMT_LINE_MAX + 1];
	size_t			 i;

	in = calloc(nitems(valid), sizeof(*in));
	ck_assert_ptr_nonnull(in);
	for (i = 0; i < nitems(valid); i++) {
		parse_ok(valid[i].line, &in[i]);
		ck_assert_int_eq(stmt_vec_add(&v, &in[i], (int)i + 1), 0);
	}
	ck_assert_uint_eq(v.n, nitems(valid));
	memset(&tmp, 0, sizeof(tmp));
	for (i = 0; i < nitems(valid); i++) {
		out = stmt_vec_get(&v, i, &tmp);
		ck_assert_int_eq(v.v[i].line, (int)i + 1);
		ck_assert_int_eq(v.v[i].kind, in[i].kind);
		ck_assert_msg(stmt_equal(out, &in[i]), "'%s' changed",
		    valid[i].line);
		stmt_print(out, a, sizeof(a));
		stmt_print(&in[i], b, sizeof(b));
		ck_assert_str_eq(a, b);
	}
	/* What makes a long list small. */
	ck_assert_uint_le(sizeof(struct stmt_item), 80);
	stmt_vec_pop(&v);
	ck_assert_uint_eq(v.n, nitems(valid) - 1);
	stmt_vec_clear(&v);
	ck_assert_uint_eq(v.n, 0);
	free(in);
}
END_TEST

/*
 * Random statements that repeat: routes from a small set of MACs and
 * names, links and interfaces from a small set of names, listeners from a
 * few addresses, spelled in upper and lower case.
 */
static void
random_line(unsigned int *seed, char *buf, size_t len)
{
	static const char *const hosts[] = { "a.example", "A.example",
	    "10.0.0.1", "*" };
	static const char *const ends[] = { "any", "02:00:00:00:00:01",
	    "not-02:00:00:00:00:01", "ff:ff:ff:ff:ff:ff" };
	unsigned int	 r = (unsigned int)rand_r(seed);

	switch (r % 8) {
	case 0:
		snprintf(buf, len, "link l%u 10.0.0.%u:7870", r / 8 % 20,
		    r / 160 % 3 + 1);
		break;
	case 1:
		snprintf(buf, len, "interface i%u tap", r / 8 % 20);
		break;
	case 2:
		snprintf(buf, len, "listen %s:%u", hosts[r / 8 % 4],
		    r / 32 % 3 + 1);
		break;
	case 3:
		snprintf(buf, len, "vcc %s i%u%s", r / 8 % 2 ? "share" : "",
		    r / 16 % 5, r / 8 % 2 ? " window 1000" : " ecn virtual");
		break;
	default:
		snprintf(buf, len, "route %s 02:00:00:%02x:%02x:%02x %s l%u",
		    ends[r / 8 % 4], r / 32 % 4, r / 128 % 64, r / 8192 % 8,
		    r / 65536 % 2 ? "link" : "interface", r / 131072 % 3);
		break;
	}
	if (strncmp(buf, "vcc  ", 5) == 0)
		memmove(buf + 4, buf + 5, strlen(buf + 5) + 1);
}

/* What each key means, spelled out. */
static int
ref_same_key(enum stmt_key key, const struct stmt *a, const struct stmt *b)
{
	if (a->kind != b->kind)
		return 0;
	switch (key) {
	case STMT_KEY_SAME:
		return stmt_equal(a, b);
	case STMT_KEY_NAME:
		return strcmp(a->name, b->name) == 0 &&
		    (a->kind != STMT_VCC || a->vcc == b->vcc);
	case STMT_KEY_ADDR:
		return strcmp(a->addr.host, b->addr.host) == 0 &&
		    a->addr.port == b->addr.port;
	}
	return 0;
}

/*
 * An index against a search of every earlier item: each statement, looked
 * up before it is added, finds the first earlier one with its key, or none.
 */
START_TEST(test_index_random)
{
	static const enum stmt_key keys[] = { STMT_KEY_SAME, STMT_KEY_NAME,
	    STMT_KEY_ADDR };
	enum stmt_key		 key = keys[_i];
	struct stmt_vec		 v = { NULL, 0, 0 };
	struct stmt_index	 ix;
	struct stmt		*all, a, b;
	const struct stmt	*x;
	unsigned int		 seed = 14 + (unsigned int)_i;
	char			 line[STMT_LINE_MAX];
	size_t			 i, j, n = 3000, found = 0;
	long			 want, got;

	all = calloc(n, sizeof(*all));
	ck_assert_ptr_nonnull(all);
	stmt_index_init(&ix, &v, key);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	for (i = 0; i < n; i++) {
		random_line(&seed, line, sizeof(line));
		parse_ok(line, &all[i]);
		ck_assert_int_eq(stmt_vec_add(&v, &all[i], 0), 0);
		want = -1;
		for (j = 0; j < i && want == -1; j++) {
			x = stmt_vec_get(&v, j, &a);
			if (ref_same_key(key, x, &all[i]))
				want = (long)j;
		}
		got = stmt_index_find(&ix, &all[i]);
		ck_assert_msg(got == want, "'%s': index says %ld, search %ld",
		    line, got, want);
		found += want != -1;
		ck_assert_int_eq(stmt_index_add(&ix, i), 0);
		/* ... and now it is found, first or after its first. */
		got = stmt_index_find(&ix, stmt_vec_get(&v, i, &b));
		ck_assert_int_eq(got, want == -1 ? (long)i : want);
	}
	/* The input did repeat itself, and not only. */
	ck_assert_uint_gt(found, n / 4);
	ck_assert_uint_lt(found, n);
	stmt_index_free(&ix);
	stmt_vec_clear(&v);
	free(all);
}
END_TEST

struct text_at {
	char	 text[64];
	size_t	 i;
};

static int
text_at_cmp(const void *a, const void *b)
{
	const struct text_at *x = a, *y = b;
	int		 c = strcmp(x->text, y->text);

	return c != 0 ? c : (x->i > y->i) - (x->i < y->i);
}

/*
 * Many routes, many repeated: the index's first occurrences against those a
 * sort of the printed statements gives (a route prints one way only).
 */
START_TEST(test_index_big)
{
	struct stmt_vec		 v = { NULL, 0, 0 };
	struct stmt_index	 ix;
	struct stmt		 st, tmp;
	struct text_at		*t;
	size_t			*first, i, n = 200000;
	unsigned int		 seed = 1014, r;
	char			 line[128];

	t = calloc(n, sizeof(*t));
	first = calloc(n, sizeof(*first));
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_nonnull(first);
	for (i = 0; i < n; i++) {
		r = (unsigned int)rand_r(&seed) % 150000;
		snprintf(line, sizeof(line), "route any 02:00:%02x:%02x:%02x:00 "
		    "link l%u", r % 256, r / 256 % 256, r / 65536, r % 7);
		parse_ok(line, &st);
		ck_assert_int_eq(stmt_vec_add(&v, &st, (int)i + 1), 0);
		stmt_print(&st, t[i].text, sizeof(t[i].text));
		t[i].i = i;
	}
	qsort(t, n, sizeof(*t), text_at_cmp);
	for (i = 0; i < n; i++)
		first[t[i].i] = i > 0 && strcmp(t[i].text, t[i - 1].text) == 0 ?
		    first[t[i - 1].i] : t[i].i;
	stmt_index_init(&ix, &v, STMT_KEY_SAME);
	ck_assert_int_eq(stmt_index_add_all(&ix, STMT_ROUTE), 0);
	memset(&tmp, 0, sizeof(tmp));
	for (i = 0; i < n; i++)
		ck_assert_int_eq(stmt_index_find(&ix,
		    stmt_vec_get(&v, i, &tmp)), (long)first[i]);
	/* A route no one added. */
	parse_ok("route any 02:00:00:00:00:01 link nowhere", &st);
	ck_assert_int_eq(stmt_index_find(&ix, &st), -1);
	stmt_index_free(&ix);
	stmt_vec_clear(&v);
	free(t);
	free(first);
}
END_TEST

static Suite *
stmt_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("stmt");

	tc = tcase_create("valid");
	tcase_add_loop_test(tc, test_valid, 0, nitems(valid));
	tcase_add_loop_test(tc, test_kinds, 0, nitems(kinds));
	tcase_add_test(tc, test_fields);
	tcase_add_test(tc, test_zeroed);
	tcase_add_loop_test(tc, test_blank, 0, nitems(blank));
	tcase_add_test(tc, test_null_args);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_loop_test(tc, test_error, 0, nitems(errors));
	tcase_add_test(tc, test_line_length);
	tcase_add_test(tc, test_path_length);
	suite_add_tcase(s, tc);

	tc = tcase_create("addresses");
	tcase_add_loop_test(tc, test_port, 0, nitems(ports));
	tcase_add_loop_test(tc, test_addr, 0, nitems(addrs));
	tcase_add_test(tc, test_hostname_length);
	suite_add_tcase(s, tc);

	tc = tcase_create("print");
	tcase_add_test(tc, test_print);
	tcase_add_test(tc, test_print_invalid);
	tcase_add_test(tc, test_format);
	tcase_add_test(tc, test_roundtrip);
	suite_add_tcase(s, tc);

	tc = tcase_create("equal");
	tcase_add_loop_test(tc, test_equal, 0, nitems(equals));
	tcase_add_test(tc, test_equal_unused);
	tcase_add_loop_test(tc, test_valid_names, 0, nitems(names));
	suite_add_tcase(s, tc);

	tc = tcase_create("lists");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_hash_equal, 0, nitems(equals));
	tcase_add_test(tc, test_vec);
	tcase_add_loop_test(tc, test_index_random, 0, 3);
	tcase_add_test(tc, test_index_big);
	suite_add_tcase(s, tc);

	return s;
}

int
main(void)
{
	SRunner	*sr;
	int	 failed;

	sr = srunner_create(stmt_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
