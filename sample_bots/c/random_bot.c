/* random_bot.c: plays a uniformly random legal play.  C99, standard library only.
 *
 * The protocol (PROTOCOL.md): one JSON object per line on stdin, one per line on stdout.
 * We answer "hello" with our name and "turn" with a "play" copied from one entry of the
 * turn's "legal" array; every other message needs no answer and is ignored.
 *
 * No JSON library: a message is scanned just enough to read its top-level "type" and, for a
 * turn, the "legal" array.  Unknown fields and unknown message types are skipped.
 *
 * Seed: the environment variable BOT_SEED (or the first argument), else the clock.
 * Build: make          Run: ./random_bot          Log: stderr
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Read one line of any length (without its newline).  NULL at end of input. */
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

/* Skip one JSON value (string, number, object, array, true/false/null).
 * Returns the position just after it, or NULL if the text is not valid there. */
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

/* The value of `key` in the JSON object at p (top level of that object only), or NULL. */
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

/* Item `index` of the JSON array at p, or NULL.  With index < 0, count the items instead
 * and return the count through *count. */
static const char *array_item(const char *p, int index, int *count)
{
    int i = 0;
    if (count) *count = 0;
    if (!p) return NULL;
    p = skip_ws(p);
    if (*p != '[') return NULL;
    p = skip_ws(p + 1);
    while (*p && *p != ']') {
        if (i == index) return p;
        p = skip_value(p);
        if (!p) break;
        i++;
        p = skip_ws(p);
        if (*p == ',') p = skip_ws(p + 1);
    }
    if (count) *count = i;
    return NULL;
}

/* True when the JSON value at p is the string `word`. */
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

int main(int argc, char **argv)
{
    const char *seed = getenv("BOT_SEED");
    char *line;
    if ((!seed || !*seed) && argc > 1) seed = argv[1];
    srand(seed && *seed ? (unsigned)strtoul(seed, NULL, 10) : (unsigned)time(NULL) ^ (unsigned)clock());

    while ((line = read_line(stdin)) != NULL) {
        const char *type = find_key(line, "type");
        if (is_string(type, "hello")) {
            puts("{\"type\":\"hello\",\"name\":\"random_bot.c\",\"version\":\"1.0\","
                 "\"author\":\"referee sample bots\",\"protocol\":1}");
            fflush(stdout);
        } else if (is_string(type, "turn")) {
            const char *legal = find_key(line, "legal");
            const char *choice;
            int n = 0, k;
            array_item(legal, -1, &n);
            if (n == 0) {
                fprintf(stderr, "random_bot.c: a turn without legal plays\n");
                continue;
            }
            k = rand() % n;
            choice = array_item(legal, k, NULL);
            put_play(choice);
            fflush(stdout);
            fprintf(stderr, "random_bot.c: chose legal play %d of %d\n", k + 1, n);
        } else if (is_string(type, "match_end")) {
            return 0;
        }
        /* anything else (deal, placed, drew, passed, deal_end, game_end, new types) is ignored */
    }
    return 0; /* stdin closed */
}
