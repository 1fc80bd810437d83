/* The few plain HTTP calls the orchestrator makes to an engine (libcurl
 * easy interface): readiness probes (GET /health, GET /v1/models), profiler
 * control (POST /start_profile, /stop_profile) and GET /version. The load
 * itself goes through the loadgen engine, not through here.
 */
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "serve_int.h"

#define HTTP_BODY_MAX ((size_t)1 << 20)

static size_t on_body(char *p, size_t sz, size_t n, void *user)
{
    struct mp_buf *b = user;
    size_t len = sz * n;
    if (b->len + len > HTTP_BODY_MAX)
        return len; /* keep the first MiB, drop the rest */
    return mp_buf_append(b, p, len) ? 0 : len;
}

int serve_http_init(struct mp_diag *d)
{
    static bool inited;
    if (inited)
        return 0;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return mp_diag_set(
            d, MP_EIO,
            "the HTTP client library libcurl.so.4 cannot be used, and it is needed to "
            "probe the engine and send the load: install libcurl4 (nothing was "
            "started)");
    inited = true;
    return 0;
}

int serve_http(const char *method, const char *url, double timeout_s, long *status,
               struct mp_buf *body, char *err, size_t err_len)
{
    return serve_http_json(method, url, NULL, timeout_s, status, body, err, err_len);
}

int serve_http_json(const char *method, const char *url, const char *json, double timeout_s,
                    long *status, struct mp_buf *body, char *err, size_t err_len)
{
    if (serve_http_init(NULL) != 0) {
        snprintf(err, err_len, "libcurl could not be loaded");
        return MP_EIO;
    }
    *status = 0;
    if (err_len)
        err[0] = 0;
    CURL *h = curl_easy_init();
    if (!h) {
        snprintf(err, err_len, "cannot create an HTTP handle");
        return MP_ENOMEM;
    }
    char ebuf[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(timeout_s * 1000));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(timeout_s < 5 ? timeout_s * 1000 : 5000));
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
    struct curl_slist *hdr = NULL;
    if (strcmp(method, "POST") == 0) {
        curl_easy_setopt(h, CURLOPT_POST, 1L);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, json ? json : "");
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, json ? (long)strlen(json) : 0L);
        if (json && (hdr = curl_slist_append(NULL, "Content-Type: application/json")))
            curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    }
    CURLcode cc = curl_easy_perform(h);
    curl_slist_free_all(hdr);
    if (cc == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    else
        snprintf(err, err_len, "%s", ebuf[0] ? ebuf : curl_easy_strerror(cc));
    curl_easy_cleanup(h);
    if (cc == CURLE_OPERATION_TIMEDOUT)
        return MP_ETIMEOUT;
    return cc == CURLE_OK ? 0 : MP_EIO;
}

int serve_first_model(const char *body, char *out, size_t len)
{
    json_error_t je;
    json_t *root = json_loads(body, 0, &je);
    json_t *data = json_object_get(root, "data");
    json_t *id = json_object_get(json_array_get(data, 0), "id");
    int rc = MP_ENOTFOUND;
    if (json_is_string(id)) {
        snprintf(out, len, "%s", json_string_value(id));
        rc = 0;
    }
    json_decref(root);
    return rc;
}

int serve_version(const char *base_url, char *out, size_t len)
{
    char url[1200], err[256];
    struct mp_buf b;
    long st = 0;
    mp_buf_init(&b, 0);
    snprintf(url, sizeof(url), "%s/version", base_url);
    int rc = serve_http("GET", url, 5, &st, &b, err, sizeof(err));
    if (!rc && st == 200 && b.len) {
        json_error_t je;
        json_t *root = json_loads(mp_buf_cstr(&b), 0, &je);
        json_t *v = json_object_get(root, "version");
        rc = MP_ENOTFOUND;
        if (json_is_string(v)) {
            snprintf(out, len, "%s", json_string_value(v));
            rc = 0;
        }
        json_decref(root);
    } else if (!rc) {
        rc = MP_ENOTFOUND;
    }
    mp_buf_fini(&b);
    return rc;
}
