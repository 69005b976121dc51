/* echo_first.c: answers every turn at once with the first legal play, and nothing else.
 * No logging, no state: it exists to measure what the referee itself costs per move.
 * C99, standard library only.  Same scanning as random_bot.c (see there for comments).
 * Build: make          Run: ./echo_first
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *read_line(FILE *in)
{
    static char *buf = NULL;
    static size_t cap = 0;
    size_t n = 0;
    int c;
    while ((c = getc(in)) != EOF) {
        if (n + 1 >= cap) {
            cap = cap ? cap * 2 : 4096;
            buf = realloc(buf, cap);
            if (!buf) exit(1);
        }
        if (c == '\n') break;
        buf[n++] = (char)c;
    }
    if (c == EOF && n == 0) return NULL;
    buf[n] = '\0';
    return buf;
}

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    return p;
}

static const char *skip_value(const char *p)
{
    const char *start;
    p = skip_ws(p);
    if (*p == '"') {
        for (p++; *p && *p != '"'; p++)
            if (*p == '\\' && p[1]) p++;
        return *p ? p + 1 : NULL;
    }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        do {
            if (*p == '"') {
                p = skip_value(p);
                if (!p) return NULL;
                continue;
            }
            if (*p == '\0') return NULL;
            if (*p == '{' || *p == '[') depth++;
            if (*p == '}' || *p == ']') depth--;
            p++;
        } while (depth > 0);
        return p;
    }
    start = p;
    while (*p && !strchr(",:}] \t\r\n", *p)) p++;
    return p > start ? p : NULL;
}

static const char *find_key(const char *p, const char *key)
{
    size_t klen = strlen(key);
    if (!p) return NULL;
    p = skip_ws(p);
    if (*p != '{') return NULL;
    p = skip_ws(p + 1);
    while (*p == '"') {
        const char *name = p + 1;
        const char *after = skip_value(p);
        int match;
        if (!after) return NULL;
        match = (size_t)(after - 1 - name) == klen && memcmp(name, key, klen) == 0;
        p = skip_ws(after);
        if (*p != ':') return NULL;
        p = skip_ws(p + 1);
        if (match) return p;
        p = skip_value(p);
        if (!p) return NULL;
        p = skip_ws(p);
        if (*p != ',') return NULL;
        p = skip_ws(p + 1);
    }
    return NULL;
}

static int is_string(const char *p, const char *word)
{
    size_t n = strlen(word);
    return p && p[0] == '"' && strncmp(p + 1, word, n) == 0 && p[n + 1] == '"';
}

/* The play: the legal entry as it is, behind "type":"play": {"tile":...,"end":...} and whatever
 * else a game's entries carry ("closed", "stop", "declare", mexican_train's "train", kolbasa's
 * "place" instead of "end"), so no game needs code of its own here. */
static void put_play(const char *entry)
{
    const char *end = skip_value(entry);
    fputs("{\"type\":\"play\",", stdout);
    if (end) fwrite(entry + 1, 1, (size_t)(end - entry - 1), stdout);
    else fputs("\"tile\":null}", stdout);
    fputs("\n", stdout);
}

int main(void)
{
    char *line;
    while ((line = read_line(stdin)) != NULL) {
        const char *type = find_key(line, "type");
        if (is_string(type, "turn")) {
            const char *legal = find_key(line, "legal");
            const char *first;
            if (!legal || *legal != '[') continue;
            first = skip_ws(legal + 1);
            if (*first != '{') continue; /* an empty list: nothing to play */
            put_play(first);
            fflush(stdout);
        } else if (is_string(type, "hello")) {
            /* the referee needs a hello back before anything else */
            puts("{\"type\":\"hello\",\"name\":\"echo_first.c\",\"version\":\"1.0\","
                 "\"author\":\"referee sample bots\",\"protocol\":1}");
            fflush(stdout);
        } else if (is_string(type, "match_end")) {
            return 0;
        }
    }
    return 0;
}
