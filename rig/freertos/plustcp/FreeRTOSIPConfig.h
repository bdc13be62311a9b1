/* FreeRTOS-Plus-TCP configuration of the rig's FreeRTOS target (POSIX port,
 * one IPv4 end point on a veth, the rts_netif interface). Everything not
 * set here is Plus-TCP's documented default (FreeRTOSIPConfigDefaults.h). */
#ifndef FREERTOS_IP_CONFIG_H
#define FREERTOS_IP_CONFIG_H

#define ipconfigBYTE_ORDER                     pdFREERTOS_LITTLE_ENDIAN
#define ipconfigUSE_IPv4                       ipconfigENABLE
#define ipconfigUSE_IPv6                       ipconfigDISABLE
#define ipconfigUSE_DHCP                       ipconfigDISABLE
#define ipconfigUSE_DNS                        ipconfigDISABLE
#define ipconfigUSE_TCP                        ipconfigENABLE
#define ipconfigUSE_NETWORK_EVENT_HOOK         ipconfigDISABLE
#define ipconfigNETWORK_MTU                    1500
/* The stack's own buffers (BufferAllocation_2): "stack buffers exhausted"
 * is what happens when the network task finds none. */
#define ipconfigNUM_NETWORK_BUFFER_DESCRIPTORS 64
#define ipconfigEVENT_QUEUE_LENGTH             (ipconfigNUM_NETWORK_BUFFER_DESCRIPTORS + 5)
/* The IP task tracks its event queue's least free space (uxGetMinimumIPQueueSpace()):
 * with the buffers' low-water mark, the device's stack counters (rts_net_plustcp.c). */
#define ipconfigCHECK_IP_QUEUE_SPACE           ipconfigENABLE
/* The IP task where FreeRTOS-Plus-TCP puts it by default (configMAX_PRIORITIES - 2):
 * above the application. Its input is what the network task hands over. */
#define ipconfigIP_TASK_PRIORITY               (configMAX_PRIORITIES - 2)
#define ipconfigIP_TASK_STACK_SIZE_WORDS       (configMINIMAL_STACK_SIZE * 4)
#define ipconfigZERO_COPY_TX_DRIVER            ipconfigDISABLE
#define ipconfigZERO_COPY_RX_DRIVER            ipconfigDISABLE
#define ipconfigHAS_DEBUG_PRINTF               ipconfigDISABLE
#define ipconfigHAS_PRINTF                     ipconfigDISABLE
/* A UDP socket holds at most this many datagrams for its worker; more are
 * dropped by the IP task (they count as not delivered). */
#define ipconfigUDP_MAX_RX_PACKETS             16U
/* SYN floods: the listener keeps at most its backlog of half-open children,
 * each closed once it has been idle for the hang protection's time. */
#define ipconfigTCP_HANG_PROTECTION            ipconfigENABLE
#define ipconfigTCP_HANG_PROTECTION_TIME       2U
/* The stack checks a socket's age only when the socket's own timer expires,
 * and a half-open child (SYN-ACK sent, nothing queued to retransmit: Plus-TCP
 * does not resend a SYN-ACK) sets that timer to this maximum, 20 s by default
 * (FreeRTOS_TCP_IP.h). A storm that made the device lose the client's ACK and
 * RST left the listener's backlog full of such children, every new connection
 * refused with a RST, for 20 s after the storm rather than the 2 s above
 * (docs/rig.md, "The connect monitor after a storm"). One second: a child idle
 * for 2 s is closed within 3 s; an idle socket costs one timer check a second. */
#define tcpMAXIMUM_TCP_WAKEUP_TIME_MS          1000U

/* Receive-path events of the stack, for an interface that cannot count
 * them itself (mps2-an385/rts_net_stock.c, the upstream MPS2_AN385
 * interface); rts_netif counts in its own code and defines them empty. */
void rts_net_trace_ip_event(int event);      /* the IP task took an event */
void rts_net_trace_rx_lost(void);            /* an interface lost a received frame */
#define iptraceNETWORK_EVENT_RECEIVED(eEvent) rts_net_trace_ip_event((int)(eEvent))
#define iptraceETHERNET_RX_EVENT_LOST()       rts_net_trace_rx_lost()

#endif
