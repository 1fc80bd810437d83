/* Exact prompt lengths from the server's tokenizer (docs/workloads.md).
 *
 * magpie has no tokenizer. Token-id prompts are exact by construction; text
 * prompts (chat, ShareGPT, JSONL text, the word prompts of the synthetic
 * chat datasets) are estimates until the server counts them. vLLM and
 * SGLang answer POST /tokenize with {"count": N, "tokens": [...]} (vLLM
 * applies the chat template to a "messages" body, so a chat prompt's count
 * is what usage.prompt_tokens will say). This asks once per prompt before
 * the run, on one keep-alive connection, and stops at the first failure:
 * a server without /tokenize costs one request.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include <magpie/fmt.h>
#include <magpie/loadgen.h>

#include "loadgen_int.h"

#define MAX_ANSWER ((size_t)64 << 20)

static size_t collect(char *p, size_t size, size_t nmemb, void *user)
{
    struct mp_buf *b = user;
    return mp_buf_append(b, p, size * nmemb) ? 0 : size * nmemb;
}

static int tok_body(const struct mp_loadgen_config *cfg, const char *text, struct mp_buf *b)
{
    b->len = 0;
    int rc = mp_buf_puts(b, "{\"model\":");
    rc |= mp_json_str(b, cfg->model, strlen(cfg->model));
    if (cfg->api == MP_LOADGEN_API_CHAT) {
        rc |= mp_buf_puts(b, ",\"messages\":[{\"role\":\"user\",\"content\":");
        rc |= mp_json_str(b, text, strlen(text));
        rc |= mp_buf_puts(b, "}]}");
    } else {
        rc |= mp_buf_puts(b, ",\"prompt\":");
        rc |= mp_json_str(b, text, strlen(text));
        rc |= mp_buf_putc(b, '}');
    }
    return rc ? MP_ENOMEM : 0;
}

/* The count of one answer, -1 when it has none. */
static long long answer_count(const struct mp_buf *ans)
{
    json_error_t je;
    json_t *j = json_loadb(ans->data ? ans->data : "", ans->len, 0, &je);
    json_t *c = json_object_get(j, "count");
    long long n =
        json_is_integer(c) && json_integer_value(c) >= 0 && json_integer_value(c) <= INT32_MAX
            ? (long long)json_integer_value(c)
            : -1;
    json_decref(j);
    return n;
}

int mp_loadgen_tokenize(const struct mp_loadgen_config *cfg, struct mp_loadgen_dataset *ds,
                        size_t *counted, struct mp_diag *d)
{
    *counted = 0;
    char url[2100];
    size_t bl = strlen(cfg->base_url);
    while (bl && cfg->base_url[bl - 1] == '/')
        bl--;
    snprintf(url, sizeof(url), "%.*s/tokenize", (int)(bl < 2048 ? bl : 2048), cfg->base_url);
    if (!ds->exact && !(ds->exact = loadgen_ds_array(ds, sizeof(bool))))
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    struct mp_buf body, ans;
    mp_buf_init(&body, (size_t)1 << 30);
    mp_buf_init(&ans, MAX_ANSWER);
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    for (int i = 0; h && i < cfg->n_headers; i++)
        h = curl_slist_append(h, cfg->headers[i]);
    bool inited = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
    CURL *c = inited ? curl_easy_init() : NULL;
    int rc = 0;
    if (!c || !h) {
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
        goto out;
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &ans);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    if (cfg->insecure) {
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    for (size_t i = 0; i < ds->n; i++) {
        struct mp_loadgen_prompt *p = &ds->prompts[i];
        if (p->ids) {
            ds->exact[i] = true;
            continue;
        }
        if (!p->text || (ds->history && ds->prev && ds->prev[i] >= 0))
            continue;
        if ((rc = tok_body(cfg, p->text, &body))) {
            mp_diag_set(d, rc, "out of memory");
            goto out;
        }
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body.len);
        ans.len = 0;
        long code = 0;
        CURLcode cc = curl_easy_perform(c);
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
        long long n = cc == CURLE_OK && code == 200 ? answer_count(&ans) : -1;
        if (n < 0) {
            if (*counted == 0)
                mp_log(MP_LOG_WARN,
                       "%s did not count the first prompt (%s); prompt lengths "
                       "stay estimated",
                       url, cc != CURLE_OK ? curl_easy_strerror(cc) : "no count in the answer");
            break;
        }
        p->prompt_len = (int32_t)n;
        ds->exact[i] = true;
        (*counted)++;
    }
out:
    if (c)
        curl_easy_cleanup(c);
    curl_slist_free_all(h);
    if (inited)
        curl_global_cleanup();
    mp_buf_fini(&body);
    mp_buf_fini(&ans);
    return rc;
}
