/* pipe_floor.c: the raw cost of one pipe round trip to a bot, the floor under the referee.
 *
 * Spawns the bot with pipes on its stdin and stdout, sends hello and reads its hello, then
 * sends one realistic pre-encoded `turn` line (copied from a sport match log: a few legal
 * plays, a hand, ends, counts) and reads the bot's reply line, over and over.  It prints the
 * mean microseconds per round trip of N timed round trips (after N/10 untimed ones), measured
 * with clock_gettime(CLOCK_MONOTONIC).  Nothing is parsed, checked or logged: one write(), then
 * read() until a newline, with blocking descriptors.
 *
 * Usage: pipe_floor BOT_PROGRAM [N]        (N defaults to 20000)
 * Output: one line, "<µs per round trip> <N>".
 * Build:  cc -O2 -std=c99 -o pipe_floor pipe_floor.c   (python -m bench.referee does it)
 * C99 + POSIX, no other library.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char HELLO[] =
    "{\"type\":\"hello\",\"protocol\":1,\"referee\":\"referee 0.1.0\",\"limits\":{\"startup_ms\":10000,"
    "\"move_ms\":5000,\"bank_ms\":null,\"increment_ms\":0,\"max_line\":65536,\"max_faults\":3}}\n";

/* A turn from a real sport log (seat 1, second move of a deal). */
static const char TURN[] =
    "{\"type\":\"turn\",\"legal\":[{\"tile\":[0,4],\"end\":\"left\"},{\"tile\":[1,3],\"end\":\"right\"},"
    "{\"tile\":[1,6],\"end\":\"right\"}],\"hand\":[[0,4],[1,3],[1,6],[2,2],[2,4],[3,6],[4,4]],"
    "\"ends\":{\"left\":0,\"right\":1},\"counts\":[6,7,7,7],\"bazaar\":0,\"time_ms\":5000,\"bank_ms\":null}\n";

static const char BYE[] = "{\"type\":\"match_end\"}\n";

static char buf[1 << 16];
static size_t have = 0; /* bytes in buf */

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            die("write");
        }
        p += w;
        n -= (size_t)w;
    }
}

/* Read until the buffer holds a newline; drop that line (and keep anything after it). */
static void read_line(int fd)
{
    for (;;) {
        char *nl = memchr(buf, '\n', have);
        if (nl) {
            size_t used = (size_t)(nl - buf) + 1;
            memmove(buf, nl + 1, have - used);
            have -= used;
            return;
        }
        if (have == sizeof buf) {
            fprintf(stderr, "pipe_floor: line too long\n");
            exit(1);
        }
        ssize_t r = read(fd, buf + have, sizeof buf - have);
        if (r < 0) {
            if (errno == EINTR) continue;
            die("read");
        }
        if (r == 0) {
            fprintf(stderr, "pipe_floor: the bot closed its stdout\n");
            exit(1);
        }
        have += (size_t)r;
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int to_bot[2], from_bot[2];
    long n = 20000, i;
    pid_t pid;
    double t0, t1;
    int status;

    if (argc < 2) {
        fprintf(stderr, "usage: pipe_floor BOT_PROGRAM [N]\n");
        return 2;
    }
    if (argc > 2) n = atol(argv[2]);
    if (n < 1) n = 1;
    signal(SIGPIPE, SIG_IGN);
    if (pipe(to_bot) < 0 || pipe(from_bot) < 0) die("pipe");
    pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
        dup2(to_bot[0], 0);
        dup2(from_bot[1], 1);
        close(to_bot[0]);
        close(to_bot[1]);
        close(from_bot[0]);
        close(from_bot[1]);
        execl(argv[1], argv[1], (char *)NULL);
        perror("exec");
        _exit(127);
    }
    close(to_bot[0]);
    close(from_bot[1]);

    write_all(to_bot[1], HELLO, sizeof HELLO - 1);
    read_line(from_bot[0]);
    for (i = 0; i < n / 10 + 1; i++) { /* warm-up: caches, page faults, the scheduler */
        write_all(to_bot[1], TURN, sizeof TURN - 1);
        read_line(from_bot[0]);
    }
    t0 = now();
    for (i = 0; i < n; i++) {
        write_all(to_bot[1], TURN, sizeof TURN - 1);
        read_line(from_bot[0]);
    }
    t1 = now();

    write_all(to_bot[1], BYE, sizeof BYE - 1);
    close(to_bot[1]);
    waitpid(pid, &status, 0);
    printf("%.3f %ld\n", (t1 - t0) / (double)n * 1e6, n);
    return 0;
}
