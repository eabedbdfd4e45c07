/*
 * wsbench: a small WebSocket load generator for bench/run ws (one thread, epoll, loopback only).
 *
 *   wsbench echo      HOST PORT PATH CONNS INFLIGHT SIZE SECONDS
 *       every connection keeps INFLIGHT text messages of SIZE bytes in flight and sends one more for each
 *       one that comes back; prints the messages received per second.
 *   wsbench broadcast HOST PORT PATH MEMBERS MESSAGES RATE
 *       MEMBERS connections join PATH (a room); the first sends MESSAGES text messages, RATE per second, each
 *       carrying its send time; every member records the delivery latency of each one. Prints p50/p99/max
 *       latency and how many deliveries were expected, received and lost.
 *   wsbench idle      HOST PORT PATH CONNS SECONDS
 *       opens CONNS connections, completes the handshakes, answers pings and holds them SECONDS; prints how
 *       many were open at the start and at the end of the hold.
 *
 * Output is one line of key=value pairs on stdout; exit status 0 when the run completed, 1 otherwise.
 * Built by bench/run with `cc -O2 -o wsbench wsbench.c`.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RBUF (256 * 1024)

enum mode { ECHO, BROADCAST, IDLE };

struct conn {
    int fd;
    int open;     /* handshake done */
    int closed;
    size_t rlen;
    unsigned char *rbuf;
    unsigned char *wbuf; /* unsent bytes */
    size_t wlen, wcap;
    int want_out; /* registered for EPOLLOUT: wbuf waits for the socket */
};

static enum mode mode;
static struct conn *conns;
static int nconns;
static int epfd;
static const char *host, *path;
static int port;
static int size;
static unsigned long long received, errors_seen;
static double *latencies;
static size_t nlat, latcap;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
    fprintf(stderr, "wsbench: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* Writes what is queued; what the kernel does not take waits for EPOLLOUT. */
static void flush_out(struct conn *c)
{
    while (c->wlen > 0) {
        ssize_t n = send(c->fd, c->wbuf, c->wlen, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN) {
                break;
            }
            c->closed = 1;
            errors_seen++;
            return;
        }
        memmove(c->wbuf, c->wbuf + n, c->wlen - (size_t)n);
        c->wlen -= (size_t)n;
    }
    int want_out = c->wlen > 0;
    if (want_out != c->want_out) {
        c->want_out = want_out;
        struct epoll_event ev = {.events = EPOLLIN | (want_out ? EPOLLOUT : 0), .data.u32 = (uint32_t)(c - conns)};
        epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
    }
}

/*
 * Frames are queued while a read is parsed and written together after it (one send() per read, as a client
 * library with a write buffer does), so the generator spends its time on messages, not on system calls.
 */
static int batching;

static void queue_bytes(struct conn *c, const unsigned char *data, size_t len)
{
    if (c->wlen + len > c->wcap) {
        c->wcap = (c->wlen + len) * 2;
        c->wbuf = realloc(c->wbuf, c->wcap);
        if (c->wbuf == NULL) {
            die("realloc");
        }
    }
    memcpy(c->wbuf + c->wlen, data, len);
    c->wlen += len;
    if (!batching && !c->want_out) {
        flush_out(c);
    }
}

/* A masked client frame. */
static void send_frame(struct conn *c, int opcode, const unsigned char *payload, size_t len)
{
    unsigned char frame[14 + 65536];
    size_t h = 0;
    static const unsigned char mask[4] = {0x37, 0xfa, 0x21, 0x3d};
    if (len > 65535) {
        return;
    }
    frame[h++] = (unsigned char)(0x80 | opcode);
    if (len < 126) {
        frame[h++] = (unsigned char)(0x80 | len);
    } else {
        frame[h++] = 0x80 | 126;
        frame[h++] = (unsigned char)(len >> 8);
        frame[h++] = (unsigned char)len;
    }
    memcpy(frame + h, mask, 4);
    h += 4;
    for (size_t i = 0; i < len; i++) {
        frame[h + i] = payload[i] ^ mask[i & 3];
    }
    queue_bytes(c, frame, h + len);
}

static void send_message(struct conn *c)
{
    unsigned char payload[65536];
    if (mode == BROADCAST) {
        int n = snprintf((char *)payload, sizeof payload, "%.9f", now());
        memset(payload + n, 'x', size > n ? (size_t)(size - n) : 0);
        send_frame(c, 1, payload, size > n ? (size_t)size : (size_t)n);
        return;
    }
    memset(payload, 'a', (size_t)size);
    send_frame(c, 1, payload, (size_t)size);
}

static void on_message(struct conn *c, int opcode, const unsigned char *payload, size_t len)
{
    if (opcode == 9) { /* ping: answer */
        send_frame(c, 10, payload, len);
        return;
    }
    if (opcode == 8) {
        c->closed = 1;
        return;
    }
    if (opcode != 1 && opcode != 2) {
        return;
    }
    received++;
    if (mode == ECHO) {
        send_message(c);
    } else if (mode == BROADCAST) {
        char stamp[32];
        size_t n = len < 31 ? len : 31;
        memcpy(stamp, payload, n);
        stamp[n] = 0;
        if (nlat == latcap) {
            latcap = latcap ? latcap * 2 : 4096;
            latencies = realloc(latencies, latcap * sizeof *latencies);
            if (latencies == NULL) {
                die("realloc");
            }
        }
        latencies[nlat++] = now() - atof(stamp);
    }
}

/* Parses whole unmasked server frames (fragments are counted as they end). */
static void parse(struct conn *c)
{
    size_t off = 0;
    if (!c->open) {
        unsigned char *end = memmem(c->rbuf, c->rlen, "\r\n\r\n", 4);
        if (end == NULL) {
            return;
        }
        if (c->rlen < 12 || memcmp(c->rbuf + 9, "101", 3) != 0) {
            fprintf(stderr, "wsbench: handshake refused: %.*s\n", (int)(c->rlen < 60 ? c->rlen : 60), c->rbuf);
            exit(1);
        }
        c->open = 1;
        off = (size_t)(end - c->rbuf) + 4;
    }
    while (c->rlen - off >= 2) {
        unsigned char *p = c->rbuf + off;
        int opcode = p[0] & 0x0f;
        uint64_t len = p[1] & 0x7f;
        size_t h = 2;
        if (len == 126) {
            if (c->rlen - off < 4) {
                break;
            }
            len = ((uint64_t)p[2] << 8) | p[3];
            h = 4;
        } else if (len == 127) {
            if (c->rlen - off < 10) {
                break;
            }
            len = 0;
            for (int i = 0; i < 8; i++) {
                len = (len << 8) | p[2 + i];
            }
            h = 10;
        }
        if (h + len > RBUF) {
            fprintf(stderr, "wsbench: frame too large\n");
            exit(1);
        }
        if (c->rlen - off < h + len) {
            break;
        }
        on_message(c, (p[0] & 0x80) ? (opcode == 0 ? 1 : opcode) : -1, p + h, (size_t)len);
        off += h + (size_t)len;
    }
    memmove(c->rbuf, c->rbuf + off, c->rlen - off);
    c->rlen -= off;
}

static void connect_one(struct conn *c, const struct sockaddr_in *addr)
{
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (c->fd < 0) {
        die("socket");
    }
    if (connect(c->fd, (const struct sockaddr *)addr, sizeof *addr) < 0) {
        die("connect");
    }
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char req[1024];
    int n = snprintf(req, sizeof req,
        "GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        path, host, port);
    if (send(c->fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
        die("send");
    }
    c->rbuf = malloc(RBUF);
    if (c->rbuf == NULL) {
        die("malloc");
    }
    /* the handshake is read blocking, one connection at a time: simple, and not part of any measurement */
    while (!c->open) {
        ssize_t r = recv(c->fd, c->rbuf + c->rlen, RBUF - c->rlen, 0);
        if (r <= 0) {
            die("handshake");
        }
        c->rlen += (size_t)r;
        parse(c);
    }
    if (fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK) < 0) {
        die("nonblock");
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)(c - conns)};
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0) {
        die("epoll_ctl");
    }
}

static void read_ready(struct conn *c)
{
    for (;;) {
        ssize_t r = recv(c->fd, c->rbuf + c->rlen, RBUF - c->rlen, 0);
        if (r > 0) {
            c->rlen += (size_t)r;
            batching = 1;
            parse(c);
            batching = 0;
            if (c->wlen > 0 && !c->want_out) {
                flush_out(c);
            }
            if ((size_t)r < 16384) {
                return;
            }
            continue;
        }
        if (r < 0 && errno == EAGAIN) {
            return;
        }
        if (!c->closed) {
            c->closed = 1;
            errors_seen++;
        }
        epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
        return;
    }
}

/* Runs the loop until `until` (monotonic seconds); calls tick() about every millisecond when given. */
static void run_until(double until, void (*tick)(void))
{
    struct epoll_event events[512];
    while (now() < until) {
        int n = epoll_wait(epfd, events, 512, tick ? 1 : 10);
        if (n < 0 && errno != EINTR) {
            die("epoll_wait");
        }
        for (int i = 0; i < n; i++) {
            struct conn *c = &conns[events[i].data.u32];
            if (events[i].events & EPOLLOUT) {
                flush_out(c);
            }
            if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                read_ready(c);
            }
        }
        if (tick) {
            tick();
        }
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int open_count(void)
{
    int open = 0;
    for (int i = 0; i < nconns; i++) {
        open += conns[i].open && !conns[i].closed;
    }
    return open;
}

static int messages, rate, sent;
static double next_send;

static void broadcast_tick(void)
{
    while (sent < messages && now() >= next_send) {
        send_message(&conns[0]);
        sent++;
        next_send += 1.0 / rate;
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: wsbench echo HOST PORT PATH CONNS INFLIGHT SIZE SECONDS\n"
                    "       wsbench broadcast HOST PORT PATH MEMBERS MESSAGES RATE\n"
                    "       wsbench idle HOST PORT PATH CONNS SECONDS\n");
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        usage();
    }
    mode = strcmp(argv[1], "echo") == 0 ? ECHO : strcmp(argv[1], "broadcast") == 0 ? BROADCAST
         : strcmp(argv[1], "idle") == 0 ? IDLE : (usage(), ECHO);
    host = argv[2];
    port = atoi(argv[3]);
    path = argv[4];
    nconns = atoi(argv[5]);
    if ((mode == ECHO && argc != 9) || (mode == BROADCAST && argc != 8) || (mode == IDLE && argc != 7) || nconns < 1) {
        usage();
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)nconns + 64) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
        fprintf(stderr, "wsbench: HOST must be an IPv4 address\n");
        return 2;
    }
    epfd = epoll_create1(0);
    conns = calloc((size_t)nconns, sizeof *conns);
    if (epfd < 0 || conns == NULL) {
        die("setup");
    }
    for (int i = 0; i < nconns; i++) {
        connect_one(&conns[i], &addr);
    }
    if (mode == ECHO) {
        int inflight = atoi(argv[6]);
        size = atoi(argv[7]);
        double seconds = atof(argv[8]);
        if (size < 1 || size > 65535 || inflight < 1) {
            usage();
        }
        for (int i = 0; i < nconns; i++) {
            for (int k = 0; k < inflight; k++) {
                send_message(&conns[i]);
            }
        }
        double start = now();
        run_until(start + seconds, NULL);
        double took = now() - start;
        printf("mode=echo connections=%d inflight=%d size=%d seconds=%.3f messages=%llu rate=%.0f errors=%llu open=%d\n",
            nconns, inflight, size, took, received, (double)received / took, errors_seen, open_count());
        return errors_seen == 0 ? 0 : 1;
    }
    if (mode == BROADCAST) {
        messages = atoi(argv[6]);
        rate = atoi(argv[7]);
        size = 32;
        if (messages < 1 || rate < 1) {
            usage();
        }
        /* let the server register every member before the first message */
        run_until(now() + 1.0, NULL);
        next_send = now();
        double end = next_send + (double)messages / rate + 5.0;
        run_until(end, broadcast_tick);
        unsigned long long expected = (unsigned long long)messages * (unsigned long long)nconns;
        qsort(latencies, nlat, sizeof *latencies, cmp_double);
        double p50 = nlat ? latencies[nlat / 2] : -1, p99 = nlat ? latencies[(size_t)((double)nlat * 0.99)] : -1;
        double max = nlat ? latencies[nlat - 1] : -1;
        printf("mode=broadcast members=%d messages=%d expected=%llu received=%llu lost=%lld p50_ms=%.2f p99_ms=%.2f max_ms=%.2f errors=%llu\n",
            nconns, messages, expected, received, (long long)expected - (long long)received, p50 * 1000, p99 * 1000,
            max * 1000, errors_seen);
        return received == expected && errors_seen == 0 ? 0 : 1;
    }
    int at_start = open_count();
    fprintf(stderr, "established %d\n", at_start);
    fflush(stderr);
    run_until(now() + atof(argv[6]), NULL);
    printf("mode=idle connections=%d open_at_start=%d open_at_end=%d errors=%llu\n", nconns, at_start, open_count(), errors_seen);
    return open_count() == nconns ? 0 : 1;
}
