/* lwIP options for a device with libshield in its receive path
 * (libshield/port/lwip/, docs/porting/lwip.md).
 *
 * One file for both variants of the adapter:
 *   NO_SYS 0  lwIP on FreeRTOS (contrib/ports/freertos/sys_arch.c):
 *             tcpip_thread, the netconn API, libshield's FreeRTOS port;
 *   NO_SYS 1  bare metal: one main loop runs lwIP and the adapter.
 * Every value is guarded with #ifndef, so a build (or a test) may set one
 * on the command line; the project's builds set only NO_SYS and, for the
 * host test, PBUF_POOL_SIZE. Sizes are RAM: each line says what one more
 * costs. Values not named here are lwIP's defaults (src/include/lwip/opt.h).
 */
#ifndef RTS_LWIPOPTS_H
#define RTS_LWIPOPTS_H

/* ------------------------------------------------------------ system */

/* 0: tcpip_thread on an RTOS (FreeRTOS here); 1: no OS, one main loop. */
#ifndef NO_SYS
#define NO_SYS 0
#endif

/* 1 (required): memp and pbuf pools are protected by SYS_ARCH_PROTECT,
 * which must mask the RX interrupt. FreeRTOS's sys_arch uses a critical
 * section (keep LWIP_FREERTOS_SYS_ARCH_PROTECT_USES_MUTEX 0); with NO_SYS
 * the platform supplies sys_arch_protect()/sys_arch_unprotect(), and the
 * adapter takes the same protection around its task-side hooks. */
#ifndef SYS_LIGHTWEIGHT_PROT
#define SYS_LIGHTWEIGHT_PROT 1
#endif

/* ------------------------------------------------------------ memory */

/* The widest alignment a pool element needs (its pointers): 4 on
 * Cortex-M, 8 on a 64-bit host (the POSIX board, the host test). */
#ifndef MEM_ALIGNMENT
#if defined(__SIZEOF_POINTER__) && __SIZEOF_POINTER__ == 8
#define MEM_ALIGNMENT 8
#else
#define MEM_ALIGNMENT 4
#endif
#endif

/* lwIP's heap, for transmitted PBUF_RAM pbufs (ICMP and ARP replies, UDP
 * sends). The receive path never uses it. */
#ifndef MEM_SIZE
#define MEM_SIZE (8 * 1024)
#endif

/* The RX pbuf pool. With the adapter only frames libshield admitted take a
 * pbuf, one at a time in the network task, so the pool is sized for what
 * the application holds (UDP and TCP receive queues), not for floods. One
 * more: PBUF_POOL_BUFSIZE + the pbuf header (about 1.5 KiB). Stock drivers
 * that allocate a pbuf per frame in the RX interrupt lose every frame
 * while a flood holds the pool (the host test's unprotected run). */
#ifndef PBUF_POOL_SIZE
#define PBUF_POOL_SIZE 16
#endif

/* One Ethernet frame per pool pbuf: PBUF_POOL_BUFSIZE follows TCP_MSS. */
#ifndef TCP_MSS
#define TCP_MSS 1460
#endif

/* 2: the IP header starts on a word boundary in a pool pbuf (14-byte
 * Ethernet header + 2). The adapter reserves the pad when it copies an
 * admitted frame into its pbuf, as lwIP's ethernetif template does. */
#ifndef ETH_PAD_SIZE
#define ETH_PAD_SIZE 2
#endif

#ifndef MEMP_NUM_PBUF
#define MEMP_NUM_PBUF 8 /* PBUF_ROM/REF pbufs (no-copy sends) */
#endif
#ifndef MEMP_NUM_UDP_PCB
#define MEMP_NUM_UDP_PCB 4
#endif
#ifndef MEMP_NUM_TCP_PCB
#define MEMP_NUM_TCP_PCB 4
#endif
#ifndef MEMP_NUM_TCP_PCB_LISTEN
#define MEMP_NUM_TCP_PCB_LISTEN 2
#endif
#ifndef MEMP_NUM_TCP_SEG
#define MEMP_NUM_TCP_SEG 16
#endif
#ifndef MEMP_NUM_ARP_QUEUE
#define MEMP_NUM_ARP_QUEUE 4
#endif

/* ----------------------------------------------------------- protocols */

#define LWIP_IPV4 1
#define LWIP_IPV6 0 /* libshield's classifier puts IPv6 in the default flow */
#define LWIP_ARP 1
#define LWIP_ETHERNET 1
#define LWIP_ICMP 1
#define LWIP_UDP 1
#define LWIP_TCP 1
#define LWIP_RAW 0
#define LWIP_DHCP 0
#define LWIP_AUTOIP 0
#define LWIP_IGMP 0
#define LWIP_DNS 0
/* IP fragments go to libshield's background flow (best effort); lwIP
 * reassembles those it is handed. */
#define IP_REASSEMBLY 1
#define IP_FRAG 1

/* ------------------------------------------------------- tcpip_thread */

#if !NO_SYS
/* Core locking: the adapter's receive task hands admitted frames to
 * tcpip_input(), which with LWIP_TCPIP_CORE_LOCKING_INPUT 1 processes them
 * right there under the core lock, at the receive task's inherited
 * priority, instead of allocating a MEMP_TCPIP_MSG_INPKT message and
 * queueing the pbuf in tcpip_thread's mailbox. The core lock is a FreeRTOS
 * mutex (sys_mutex_t), so whoever holds it inherits that priority. */
#ifndef LWIP_TCPIP_CORE_LOCKING
#define LWIP_TCPIP_CORE_LOCKING 1
#endif
#ifndef LWIP_TCPIP_CORE_LOCKING_INPUT
#define LWIP_TCPIP_CORE_LOCKING_INPUT 1
#endif
/* tcpip_thread: below the critical task, above bulk work. With the
 * tcpip_thread placement libshield raises it for a high-priority frame. */
#ifndef TCPIP_THREAD_PRIO
#define TCPIP_THREAD_PRIO 3
#endif
/* Bytes (LWIP_FREERTOS_THREAD_STACKSIZE_IS_STACKWORDS 0). With the
 * tcpip_thread placement it runs libshield's task-side hooks (a 152-byte
 * decision on the stack) under lwIP's deepest input path (an ICMP or TCP
 * reply sent from within ethernet_input()): 1 KiB overflows on Cortex-M3. */
#ifndef TCPIP_THREAD_STACKSIZE
#define TCPIP_THREAD_STACKSIZE 2048
#endif
/* tcpip_thread's mailbox: API calls, timeouts, and at most one RX wake-up
 * of the adapter; it never holds received frames. */
#ifndef TCPIP_MBOX_SIZE
#define TCPIP_MBOX_SIZE 16
#endif
/* Messages for frames queued to tcpip_thread by tcpip_input(): the stock
 * path's 8. With LWIP_TCPIP_CORE_LOCKING_INPUT lwIP builds no such pool;
 * the value matters only to a stock build of the same options. */
#ifndef MEMP_NUM_TCPIP_MSG_INPKT
#define MEMP_NUM_TCPIP_MSG_INPKT 8
#endif
#ifndef DEFAULT_THREAD_STACKSIZE
#define DEFAULT_THREAD_STACKSIZE 1024
#endif
#ifndef DEFAULT_UDP_RECVMBOX_SIZE
#define DEFAULT_UDP_RECVMBOX_SIZE 8
#endif
#ifndef DEFAULT_TCP_RECVMBOX_SIZE
#define DEFAULT_TCP_RECVMBOX_SIZE 8
#endif
#ifndef DEFAULT_ACCEPTMBOX_SIZE
#define DEFAULT_ACCEPTMBOX_SIZE 4
#endif
/* lwIP's check that every core call holds the core lock, in a task (its
 * FreeRTOS sys_arch implements it): 1 in the project's FreeRTOS builds, a
 * development aid (a critical section per check) elsewhere. */
#ifndef LWIP_FREERTOS_CHECK_CORE_LOCKING
#define LWIP_FREERTOS_CHECK_CORE_LOCKING 0
#endif
#if LWIP_FREERTOS_CHECK_CORE_LOCKING
void sys_check_core_locking(void);
void sys_mark_tcpip_thread(void);
void sys_lock_tcpip_core(void);
void sys_unlock_tcpip_core(void);
#define LWIP_ASSERT_CORE_LOCKED() sys_check_core_locking()
#define LWIP_MARK_TCPIP_THREAD() sys_mark_tcpip_thread()
#define LOCK_TCPIP_CORE() sys_lock_tcpip_core()
#define UNLOCK_TCPIP_CORE() sys_unlock_tcpip_core()
#endif
/* The sequential API for applications (a Modbus/TCP server on a netconn). */
#define LWIP_NETCONN 1
#define LWIP_SOCKET 0
#else
#define LWIP_NETCONN 0
#define LWIP_SOCKET 0
#endif

/* ------------------------------------------------------------- counters */

/* lwip_stats: what lwIP itself dropped (link.memerr and
 * memp[MEMP_PBUF_POOL]->err: no pbuf; link.drop, ip.drop, udp.drop, ...),
 * recorded beside libshield's drop reasons. */
#define LWIP_STATS 1
#define LWIP_STATS_DISPLAY 0
#define LINK_STATS 1
#define ETHARP_STATS 1
#define IP_STATS 1
#define ICMP_STATS 1
#define UDP_STATS 1
#define TCP_STATS 1
#define MEM_STATS 1
#define MEMP_STATS 1
#define SYS_STATS (!NO_SYS)

#endif /* RTS_LWIPOPTS_H */
