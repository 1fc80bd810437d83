/* Ray Jobs API client: cluster address resolution (Jobs API URL, "auto",
 * Magpie's host:6379 GCS form, ray://), Magpie's status mapping, and HTTP
 * requests to the dashboard with libcurl under a short connect timeout so
 * that an unreachable head is reported at once. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include <magpie/ray.h>

#include "ray_int.h"

static int bad_addr(struct mp_diag *d, const char *addr, const char *why)
{
    mp_diag_set_field(d, "cluster_address");
    return mp_diag_set(d, MP_EINVAL,
                       "bad Ray cluster address '%s': %s (expected http://host:8265, host:6379, "
                       "ray://host:10001 or auto)",
                       addr, why);
}

static int dashboard_port(void)
{
    const char *e = getenv("MAGPIE_RAY_DASHBOARD_PORT");
    if (e && *e) {
        char *end;
        long p = strtol(e, &end, 10);
        if (!*end && p > 0 && p < 65536)
            return (int)p;
    }
    return MP_RAY_DASHBOARD_PORT;
}

/* host[:port] at s (n bytes): host into host, port into *port (-1 none). */
static int split_hostport(const char *s, size_t n, char *host, size_t hn, long *port)
{
    *port = -1;
    size_t hl;
    const char *colon;
    if (n && s[0] == '[') { /* [v6]:port */
        const char *rb = memchr(s, ']', n);
        if (!rb)
            return -1;
        hl = (size_t)(rb - s) + 1;
        colon = (hl < n && s[hl] == ':') ? s + hl : NULL;
        if (hl < n && !colon)
            return -1;
    } else {
        colon = memchr(s, ':', n);
        hl = colon ? (size_t)(colon - s) : n;
    }
    if (hl == 0 || hl >= hn)
        return -1;
    for (size_t i = 0; i < hl; i++)
        if (isspace((unsigned char)s[i]) || s[i] == '/' || s[i] == '@')
            return -1;
    memcpy(host, s, hl);
    host[hl] = 0;
    if (colon) {
        size_t pl = n - (size_t)(colon + 1 - s);
        if (pl == 0 || pl > 5)
            return -1;
        long p = 0;
        for (size_t i = 0; i < pl; i++) {
            if (!isdigit((unsigned char)colon[1 + i]))
                return -1;
            p = p * 10 + (colon[1 + i] - '0');
        }
        if (p < 1 || p > 65535)
            return -1;
        *port = p;
    }
    return 0;
}

static int resolve(const char *addr, char *url, size_t url_len, int depth, struct mp_diag *d)
{
    if (!addr || !*addr || strcmp(addr, "auto") == 0) {
        const char *env = depth == 0 ? getenv("RAY_ADDRESS") : NULL;
        if (env && *env && strcmp(env, "auto") != 0) {
            int rc = resolve(env, url, url_len, depth + 1, d);
            if (rc)
                mp_diag_set_field(d, "RAY_ADDRESS");
            return rc;
        }
        snprintf(url, url_len, "%s", MP_RAY_DEFAULT_URL);
        return 0;
    }
    char host[256];
    long port;
    const char *rest = addr;
    bool http = false;
    if (strncmp(addr, "http://", 7) == 0 || strncmp(addr, "https://", 8) == 0) {
        http = true;
        rest = strchr(addr, ':') + 3;
    } else if (strncmp(addr, "ray://", 6) == 0) {
        rest = addr + 6;
    } else if (strstr(addr, "://")) {
        return bad_addr(d, addr, "unknown scheme");
    }
    size_t n = strlen(rest);
    while (n && rest[n - 1] == '/')
        n--;
    if (memchr(rest, '/', n) && http) {
        /* a path prefix (a proxy in front of the dashboard) is kept */
        const char *slash = memchr(rest, '/', n);
        if (split_hostport(rest, (size_t)(slash - rest), host, sizeof(host), &port))
            return bad_addr(d, addr, "not a host[:port]");
    } else if (split_hostport(rest, n, host, sizeof(host), &port)) {
        return bad_addr(d, addr, "not a host[:port]");
    }
    int w;
    if (http)
        w = snprintf(url, url_len, "%.*s", (int)(rest - addr + (ptrdiff_t)n), addr);
    else
        w = snprintf(url, url_len, "http://%s:%d", host,
                     port == MP_RAY_DASHBOARD_PORT ? MP_RAY_DASHBOARD_PORT : dashboard_port());
    if (w < 0 || (size_t)w >= url_len)
        return bad_addr(d, addr, "too long");
    return 0;
}

int mp_ray_address_resolve(const char *addr, char *url, size_t url_len, struct mp_diag *d)
{
    return resolve(addr, url, url_len, 0, d);
}

const char *mp_ray_status_map(const char *s)
{
    if (!s)
        return "UNKNOWN";
    if (strcmp(s, "PENDING") == 0 || strcmp(s, "RUNNING") == 0)
        return "RUNNING";
    if (strcmp(s, "SUCCEEDED") == 0)
        return "SUCCEEDED";
    if (strcmp(s, "FAILED") == 0 || strcmp(s, "STOPPED") == 0)
        return "FAILED";
    return "UNKNOWN";
}

bool mp_ray_status_terminal(const char *s)
{
    return s &&
           (strcmp(s, "SUCCEEDED") == 0 || strcmp(s, "FAILED") == 0 || strcmp(s, "STOPPED") == 0);
}

struct mp_ray_client {
    char url[600];
    char given[512];
    long connect_ms, request_ms;
    CURL *h;
};

int mp_ray_client_new(const char *addr, double connect_timeout_s, double request_timeout_s,
                      struct mp_ray_client **out, struct mp_diag *d)
{
    *out = NULL;
    char url[600];
    int rc = mp_ray_address_resolve(addr, url, sizeof(url), d);
    if (rc)
        return rc;
    static bool inited;
    if (!inited) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        inited = true;
    }
    struct mp_ray_client *c = mp_calloc(1, sizeof(*c));
    if (!c)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    snprintf(c->url, sizeof(c->url), "%s", url);
    snprintf(c->given, sizeof(c->given), "%s", addr && *addr ? addr : "auto");
    c->connect_ms = (long)((connect_timeout_s > 0 ? connect_timeout_s : 3.0) * 1000);
    c->request_ms = (long)((request_timeout_s > 0 ? request_timeout_s : 30.0) * 1000);
    c->h = curl_easy_init();
    if (!c->h) {
        free(c);
        return mp_diag_set(d, MP_ENOMEM, "curl_easy_init failed");
    }
    *out = c;
    return 0;
}

void mp_ray_client_free(struct mp_ray_client *c)
{
    if (!c)
        return;
    curl_easy_cleanup(c->h);
    free(c);
}

const char *mp_ray_client_url(const struct mp_ray_client *c)
{
    return c->url;
}

static size_t on_body(char *p, size_t size, size_t n, void *user)
{
    struct mp_buf *b = user;
    return mp_buf_append(b, p, size * n) ? 0 : size * n;
}

int mp_ray_request(struct mp_ray_client *c, const char *method, const char *path, const char *body,
                   long *http_status, struct mp_buf *resp, struct mp_diag *d)
{
    char url[1200];
    snprintf(url, sizeof(url), "%s%s", c->url, path);
    CURL *h = c->h;
    curl_easy_reset(h);
    char err[CURL_ERROR_SIZE] = "";
    struct curl_slist *hdr = NULL;
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_ms);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->request_ms);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, err);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, resp);
    curl_easy_setopt(h, CURLOPT_NOPROXY, "*"); /* the head is addressed directly */
    if (strcmp(method, "GET") != 0)
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    if (body) {
        hdr = curl_slist_append(hdr, "Content-Type: application/json");
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    } else if (strcmp(method, "POST") == 0) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
    }
    CURLcode cc = curl_easy_perform(h);
    curl_slist_free_all(hdr);
    if (cc != CURLE_OK) {
        mp_diag_set_field(d, "cluster_address");
        if (strcmp(c->given, c->url) == 0)
            return mp_diag_set(d, MP_EIO, "Ray head not reachable at %s: %s", c->url,
                               *err ? err : curl_easy_strerror(cc));
        return mp_diag_set(d, MP_EIO, "Ray head not reachable at %s (cluster address '%s'): %s",
                           c->url, c->given, *err ? err : curl_easy_strerror(cc));
    }
    long st = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &st);
    *http_status = st;
    mp_buf_cstr(resp);
    return 0;
}

int mp_ray_ping(struct mp_ray_client *c, char **ray_version, struct mp_diag *d)
{
    struct mp_buf b;
    mp_buf_init(&b, 1 << 20);
    long st = 0;
    int rc = mp_ray_request(c, "GET", "/api/version", NULL, &st, &b, d);
    if (!rc && st != 200)
        rc = mp_diag_set(
            d, MP_EIO, "%s does not look like a Ray dashboard: GET /api/version answered HTTP %ld",
            c->url, st);
    if (!rc && ray_version) {
        json_t *j = json_loads(mp_buf_cstr(&b), 0, NULL);
        const char *v = json_string_value(json_object_get(j, "ray_version"));
        *ray_version = mp_strdup(v ? v : "");
        json_decref(j);
    }
    mp_buf_fini(&b);
    return rc;
}

int ray_json_request(struct mp_ray_client *c, const char *method, const char *path, json_t *body,
                     long *st, json_t **out, struct mp_diag *d)
{
    *out = NULL;
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    struct mp_buf b;
    mp_buf_init(&b, 64u << 20);
    int rc = mp_ray_request(c, method, path, text, st, &b, d);
    free(text);
    if (!rc && b.len)
        *out = json_loads(mp_buf_cstr(&b), JSON_DECODE_ANY, NULL);
    if (!rc && !*out && b.len)
        *out = json_stringn(b.data, b.len); /* an error text */
    mp_buf_fini(&b);
    return rc;
}
