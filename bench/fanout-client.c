/*
 * The subscribers of bench:freshness's fan-out, in C: many WebSocket connections read with
 * epoll in one thread, so that "delivered to all" measures the server and the kernel rather
 * than a JavaScript client spending ~10 us per socket event.
 *
 *   fanout-client '<subscribe json>' < connections
 *
 * stdin: one line per connection, "<port> <path> <payment header or ->", then a line "go".
 * A paid connection (a header given) sends <subscribe json> once it is paid and counts as
 * open once subscribed; an unpaid one (the bare uWS baseline) once upgraded. Prints "ready"
 * when all are open, then stamps every arrival of "Freshness probe <n>" with CLOCK_MONOTONIC
 * (the clock of Node's process.hrtime) and answers pings. On a line "done" on stdin, prints
 * one JSON line: {"<title>": [first ms, last ms, connections reached], ...}.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BUF 65536
#define MAX_PROBES 4096
#define MARK "Freshness probe "

struct conn {
  int fd;
  int paid;       /* 1: a paid stream, subscribes after "paid" */
  int state;      /* 0 upgrading, 1 waiting for paid, 2 waiting for subscribed, 3 open */
  size_t len;
  unsigned char buf[BUF];
};

static struct { long n; double first, last; int count; int seen_by; } probes[MAX_PROBES];
static int nprobes;
static const char *subscribe;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void die(const char *what) {
  perror(what);
  exit(1);
}

static void write_all(int fd, const void *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      die("write");
    }
    p = (const char *)p + w;
    n -= (size_t)w;
  }
}

/* A client frame: masked (with a zero key, which leaves the payload as it is). */
static void send_frame(int fd, int opcode, const void *payload, size_t n) {
  unsigned char head[8];
  size_t h = 0;
  head[h++] = (unsigned char)(0x80 | opcode);
  if (n < 126) head[h++] = (unsigned char)(0x80 | n);
  else {
    head[h++] = 0x80 | 126;
    head[h++] = (unsigned char)(n >> 8);
    head[h++] = (unsigned char)(n & 255);
  }
  memset(head + h, 0, 4);
  h += 4;
  write_all(fd, head, h);
  write_all(fd, payload, n);
}

static void arrived(long n, double at, int conn_id) {
  for (int i = 0; i < nprobes; i++) {
    if (probes[i].n != n) continue;
    if (probes[i].seen_by == conn_id) return; /* one arrival per connection */
    probes[i].seen_by = conn_id;
    if (at < probes[i].first) probes[i].first = at;
    if (at > probes[i].last) probes[i].last = at;
    probes[i].count++;
    return;
  }
  if (nprobes == MAX_PROBES) return;
  probes[nprobes].n = n;
  probes[nprobes].first = probes[nprobes].last = at;
  probes[nprobes].count = 1;
  probes[nprobes].seen_by = conn_id;
  nprobes++;
}

/* Handles the complete frames in c->buf; keeps a partial one. Returns 1 when the state moved. */
static int frames(struct conn *c, int id, double at) {
  size_t at_byte = 0;
  int moved = 0;
  for (;;) {
    size_t left = c->len - at_byte;
    if (left < 2) break;
    unsigned char *f = c->buf + at_byte;
    int opcode = f[0] & 0x0f;
    size_t n = f[1] & 0x7f, h = 2;
    if (n == 126) {
      if (left < 4) break;
      n = ((size_t)f[2] << 8) | f[3];
      h = 4;
    } else if (n == 127) {
      if (left < 10) break;
      n = 0;
      for (int i = 0; i < 8; i++) n = (n << 8) | f[2 + i];
      h = 10;
    }
    if (left < h + n) break;
    const char *p = (const char *)f + h;
    if (opcode == 0x9) send_frame(c->fd, 0xA, p, n);
    else if (opcode == 0x1) {
      if (c->state == 1 && memmem(p, n, "\"type\":\"paid\"", 13)) {
        send_frame(c->fd, 0x1, subscribe, strlen(subscribe));
        c->state = 2;
        moved = 1;
      } else if (c->state == 2 && memmem(p, n, "\"type\":\"subscribed\"", 19)) {
        c->state = 3;
        moved = 1;
      } else if (c->state == 3) {
        const char *m = memmem(p, n, MARK, sizeof MARK - 1);
        if (m) arrived(strtol(m + sizeof MARK - 1, NULL, 10), at, id);
      }
    } else if (opcode == 0x8) {
      fprintf(stderr, "connection %d closed by the server\n", id);
      exit(1);
    }
    at_byte += h + n;
  }
  memmove(c->buf, c->buf + at_byte, c->len - at_byte);
  c->len -= at_byte;
  return moved;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: fanout-client '<subscribe json>' < connections\n");
    return 2;
  }
  subscribe = argv[1];
  int cap = 64, count = 0;
  struct conn **conns = malloc(sizeof *conns * cap);
  int ep = epoll_create1(0);
  if (ep < 0) die("epoll_create1");
  char line[8192];
  while (fgets(line, sizeof line, stdin) && strncmp(line, "go", 2) != 0) {
    char path[1024], header[6144];
    int port;
    if (sscanf(line, "%d %1023s %6143s", &port, path, header) != 3) continue;
    struct conn *c = calloc(1, sizeof *c);
    c->paid = strcmp(header, "-") != 0;
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(c->fd, (struct sockaddr *)&a, sizeof a) < 0) die("connect");
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char req[8192];
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                     "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n%s%s%s\r\n",
                     path, c->paid ? "PAYMENT-SIGNATURE: " : "", c->paid ? header : "", c->paid ? "\r\n" : "");
    write_all(c->fd, req, (size_t)n);
    if (count == cap) conns = realloc(conns, sizeof *conns * (cap *= 2));
    conns[count++] = c;
  }
  /* Upgrade and subscribe every connection (blocking reads: one at a time is fast enough). */
  for (int i = 0; i < count; i++) {
    struct conn *c = conns[i];
    while (c->state < 3) {
      ssize_t r = read(c->fd, c->buf + c->len, BUF - c->len);
      if (r <= 0) die("read while opening");
      c->len += (size_t)r;
      if (c->state == 0) {
        unsigned char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
        if (!end) continue;
        if (memcmp(c->buf, "HTTP/1.1 101", 12) != 0) {
          fprintf(stderr, "upgrade refused: %.*s\n", 40, c->buf);
          return 1;
        }
        size_t used = (size_t)(end + 4 - c->buf);
        memmove(c->buf, c->buf + used, c->len - used);
        c->len -= used;
        c->state = c->paid ? 1 : 3;
      }
      frames(c, i, now_ms());
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (unsigned)i};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) < 0) die("epoll_ctl");
  }
  struct epoll_event in = {.events = EPOLLIN, .data.u32 = 0xffffffffu};
  epoll_ctl(ep, EPOLL_CTL_ADD, 0, &in);
  printf("ready\n");
  fflush(stdout);

  struct epoll_event events[256];
  for (;;) {
    int n = epoll_wait(ep, events, 256, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    double at = now_ms();
    for (int e = 0; e < n; e++) {
      unsigned id = events[e].data.u32;
      if (id == 0xffffffffu) {
        if (!fgets(line, sizeof line, stdin) || strncmp(line, "done", 4) == 0) {
          printf("{");
          for (int i = 0; i < nprobes; i++)
            printf("%s\"" MARK "%ld\":[%.4f,%.4f,%d]", i ? "," : "", probes[i].n, probes[i].first, probes[i].last, probes[i].count);
          printf("}\n");
          return 0;
        }
        continue;
      }
      struct conn *c = conns[id];
      ssize_t r = read(c->fd, c->buf + c->len, BUF - c->len);
      if (r <= 0) {
        fprintf(stderr, "connection %u ended\n", id);
        return 1;
      }
      c->len += (size_t)r;
      frames(c, (int)id, at);
    }
  }
}
