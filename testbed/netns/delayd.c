/* delayd — one-way latency between subnets for the emulated cluster, where
 * netem is not available.
 *
 * Runs in the router namespace on a TUN device. The router sends every
 * packet that crosses between subnets into the TUN (policy routing on the
 * interface it came in by); delayd reads it, holds it for the one-way delay
 * of its (source subnet, destination subnet) pair and writes it back, and
 * the router forwards it to its destination subnet. Bandwidth is the tbf
 * qdiscs' business; delayd never drops, reorders within a pair, or changes
 * a packet.
 *
 *   delayd TUN PREFIX DELAYS
 *     TUN     the TUN device to create (e.g. hcdly0)
 *     PREFIX  the first two octets of the cluster's addresses, "10.77":
 *             subnet s is PREFIX.s.0/24
 *     DELAYS  S×S one-way delays in microseconds, row-major (source
 *             subnet, destination subnet), comma-separated
 *
 * Stops on SIGTERM or SIGINT. Packets of unknown subnets pass undelayed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define MAX_SUBNETS 64
#define MAX_PACKET 65536
#define MAX_QUEUED (1 << 16) /* packets in flight: 64 K × 1.5 KB at 3 ms is 30 GB/s */

typedef struct {
  uint64_t due_ns;
  uint32_t len;
  unsigned char *data;
} Held;

static volatile sig_atomic_t stop = 0;
static void on_signal(int sig) { (void)sig; stop = 1; }

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A FIFO per (source, destination) pair: one delay per pair keeps each in
 * due order; the next packet out is the earliest head. */
typedef struct {
  Held *ring;
  size_t head, count;
} Queue;

static Queue queues[MAX_SUBNETS * MAX_SUBNETS + 1];
static uint64_t delay_ns[MAX_SUBNETS * MAX_SUBNETS];
static int subnets = 0;
static unsigned prefix_a, prefix_b;

static int subnet_of(const unsigned char *addr) {
  if (addr[0] != prefix_a || addr[1] != prefix_b || addr[2] >= subnets) return -1;
  return addr[2];
}

static int open_tun(const char *name) {
  int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    perror("delayd: /dev/net/tun");
    return -1;
  }
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  strncpy(ifr.ifr_name, name, IFNAMSIZ - 1);
  if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
    perror("delayd: TUNSETIFF");
    close(fd);
    return -1;
  }
  return fd;
}

static int parse_delays(const char *text) {
  size_t n = 0;
  const char *p = text;
  static uint64_t values[MAX_SUBNETS * MAX_SUBNETS];
  while (*p) {
    char *end;
    errno = 0;
    double us = strtod(p, &end);
    if (end == p || errno || us < 0 || us > 10e6 || n >= MAX_SUBNETS * MAX_SUBNETS) return -1;
    values[n++] = (uint64_t)(us * 1000.0 + 0.5);
    p = end;
    if (*p == ',') ++p;
    else if (*p) return -1;
  }
  size_t s = 0;
  while (s * s < n) ++s;
  if (s * s != n || s == 0) return -1;
  subnets = (int)s;
  memcpy(delay_ns, values, n * sizeof values[0]);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: delayd TUN PREFIX DELAYS_US (S*S, row-major, comma-separated)\n");
    return 2;
  }
  if (sscanf(argv[2], "%u.%u", &prefix_a, &prefix_b) != 2 || prefix_a > 255 || prefix_b > 255) {
    fprintf(stderr, "delayd: PREFIX must be two octets like 10.77, not '%s'\n", argv[2]);
    return 2;
  }
  if (parse_delays(argv[3]) != 0) {
    fprintf(stderr, "delayd: DELAYS must be S*S non-negative microsecond values (S <= %d)\n", MAX_SUBNETS);
    return 2;
  }
  int fd = open_tun(argv[1]);
  if (fd < 0) return 1;
  for (size_t q = 0; q < sizeof queues / sizeof queues[0]; ++q) {
    queues[q].ring = calloc(1024, sizeof(Held));
    if (!queues[q].ring) return 1;
  }
  size_t capacity[MAX_SUBNETS * MAX_SUBNETS + 1];
  for (size_t q = 0; q < sizeof queues / sizeof queues[0]; ++q) capacity[q] = 1024;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  prctl(PR_SET_TIMERSLACK, 1000UL); /* wake within 1 µs of a packet's due time */
  size_t queued = 0;
  unsigned char buf[MAX_PACKET];
  const size_t nq = (size_t)subnets * (size_t)subnets + 1; /* the last: undelayed */
  while (!stop) {
    /* The earliest due packet. */
    uint64_t next = UINT64_MAX;
    size_t which = 0;
    for (size_t q = 0; q < nq; ++q)
      if (queues[q].count && queues[q].ring[queues[q].head].due_ns < next) {
        next = queues[q].ring[queues[q].head].due_ns;
        which = q;
      }
    uint64_t t = now_ns();
    if (next <= t) {
      Queue *Q = &queues[which];
      Held *h = &Q->ring[Q->head];
      if (write(fd, h->data, h->len) < 0 && errno != EINVAL) perror("delayd: write");
      free(h->data);
      Q->head = (Q->head + 1) % capacity[which];
      --Q->count;
      --queued;
      continue;
    }
    /* Wait for a packet or the next due time (ppoll: the kernel's
     * high-resolution timers, 1 µs slack, set below). */
    struct timespec wait, *until = NULL;
    if (next != UINT64_MAX) {
      const uint64_t left = next - t;
      wait.tv_sec = (time_t)(left / 1000000000ull);
      wait.tv_nsec = (long)(left % 1000000000ull);
      until = &wait;
    }
    struct pollfd pfd = {fd, queued >= MAX_QUEUED ? 0 : POLLIN, 0};
    int r = ppoll(&pfd, 1, until, NULL);
    if (r < 0) {
      if (errno == EINTR) continue;
      perror("delayd: poll");
      break;
    }
    if (r == 0 || !(pfd.revents & POLLIN) || queued >= MAX_QUEUED) continue;
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) continue;
    size_t q = nq - 1;
    uint64_t d = 0;
    if (n >= 20 && (buf[0] >> 4) == 4) {
      int s = subnet_of(buf + 12), u = subnet_of(buf + 16);
      if (s >= 0 && u >= 0) {
        q = (size_t)s * (size_t)subnets + (size_t)u;
        d = delay_ns[q];
      }
    }
    Queue *Q = &queues[q];
    if (Q->count == capacity[q]) { /* grow the ring, keeping order */
      Held *bigger = calloc(capacity[q] * 2, sizeof(Held));
      if (!bigger) continue; /* out of memory: drop, as a full queue would */
      for (size_t i = 0; i < Q->count; ++i) bigger[i] = Q->ring[(Q->head + i) % capacity[q]];
      free(Q->ring);
      Q->ring = bigger;
      Q->head = 0;
      capacity[q] *= 2;
    }
    Held *h = &Q->ring[(Q->head + Q->count) % capacity[q]];
    h->data = malloc((size_t)n);
    if (!h->data) continue;
    memcpy(h->data, buf, (size_t)n);
    h->len = (uint32_t)n;
    h->due_ns = now_ns() + d;
    ++Q->count;
    ++queued;
  }
  close(fd);
  return 0;
}
