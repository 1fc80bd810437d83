/* The shared option machinery of the command line: getopt_long arrays
 * with the '_'/'-' twins of every long name, `--help` text, the man page
 * and the bash/zsh completion scripts, all from the cli_opt tables
 * (opts.h) that each command declares beside its code. */
#include "opts.h"

#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/base.h>

enum { HELP_COL = 28, HELP_WIDTH = 79 };

bool cli_opt_applies(const struct cli_cmd *cmd, const struct cli_opt *o)
{
    return !(o->flags & CLI_MODE_MASK) || (o->flags & cmd->mode);
}

/* The end of a table: an entry with neither name, letter nor help. */
static bool opt_end(const struct cli_opt *o)
{
    return !o->name && !o->letter && !o->help;
}

const struct cli_opt *cli_opt_next(const struct cli_cmd *cmd, const struct cli_opt *prev)
{
    for (const struct cli_opt *o = prev ? prev + 1 : cmd->opts; !opt_end(o); o++)
        if (cli_opt_applies(cmd, o))
            return o;
    return NULL;
}

/* A group heading inside a table: only help is set. */
static bool opt_group(const struct cli_opt *o)
{
    return !o->name && !o->letter && o->help;
}

static bool visible(const struct cli_opt *o)
{
    return !(o->flags & CLI_HIDDEN);
}

/* The other spelling of a long name ('-' <-> '_'); false if it has none. */
static bool twin(const char *name, char *out, size_t cap)
{
    size_t n = strlen(name);
    if (n >= cap || !strpbrk(name, "-_"))
        return false;
    for (size_t i = 0; i <= n; i++)
        out[i] = name[i] == '-' ? '_' : name[i] == '_' ? '-' : name[i];
    return true;
}

static bool has_long(const struct option *lo, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(lo[i].name, name) == 0)
            return true;
    return false;
}

void cli_parser_init(struct cli_parser *p, const struct cli_cmd *cmd)
{
    size_t nl = 0, ns = 0, nt = 0;
    memset(p, 0, sizeof(*p));
    if (cmd->flags & CLI_STOP_AT_ARG)
        p->shortopts[ns++] = '+';
    for (const struct cli_opt *o = cli_opt_next(cmd, NULL); o && nl < CLI_MAX_OPTS;
         o = cli_opt_next(cmd, o)) {
        if (o->letter) {
            p->shortopts[ns++] = o->letter;
            if (o->arg != CLI_NOARG)
                p->shortopts[ns++] = ':';
            if (o->arg == CLI_OPTARG)
                p->shortopts[ns++] = ':';
        }
        if (!o->name)
            continue;
        p->longopts[nl++] = (struct option){o->name, o->arg, NULL, o->id};
    }
    /* the twins after every declared name, so a declared spelling wins */
    size_t declared = nl;
    for (const struct cli_opt *o = cli_opt_next(cmd, NULL); o; o = cli_opt_next(cmd, o)) {
        if (!o->name || (o->flags & CLI_EXACT) || nt >= CLI_MAX_OPTS ||
            !twin(o->name, p->names[nt], sizeof(p->names[nt])) ||
            has_long(p->longopts, declared, p->names[nt]))
            continue;
        p->longopts[nl++] = (struct option){p->names[nt++], o->arg, NULL, o->id};
    }
    p->longopts[nl] = (struct option){NULL, 0, NULL, 0};
    opterr = 0;
    optind = 0; /* glibc: full re-initialisation (main already ran getopt) */
}

int cli_next(struct cli_parser *p, int argc, char **argv)
{
    int li = -1;
    int c = getopt_long(argc, argv, p->shortopts, p->longopts, &li);
    p->name = li >= 0 ? p->longopts[li].name : NULL;
    return c;
}

static bool same_name(const char *a, const char *b, bool exact)
{
    for (; *a && *b; a++, b++) {
        char x = *a, y = *b;
        if (!exact) {
            x = x == '_' ? '-' : x;
            y = y == '_' ? '-' : y;
        }
        if (x != y)
            return false;
    }
    return *a == *b;
}

const struct cli_opt *cli_find(const struct cli_cmd *cmd, const char *word)
{
    if (word[0] != '-')
        return NULL;
    for (const struct cli_opt *o = cli_opt_next(cmd, NULL); o; o = cli_opt_next(cmd, o)) {
        if (word[1] == '-' && o->name && same_name(word + 2, o->name, o->flags & CLI_EXACT))
            return o;
        if (word[1] != '-' && o->letter && word[1] == o->letter && !word[2])
            return o;
    }
    return NULL;
}

/* ---- help ---- */

/* "-o, --output-dir DIR" */
static void opt_label(const struct cli_opt *o, char *buf, size_t cap)
{
    const char *m = o->metavar ? o->metavar : "";
    const char *sp = o->metavar ? " " : "";
    if (o->letter && o->name)
        snprintf(buf, cap, "-%c, --%s%s%s", o->letter, o->name, sp, m);
    else if (o->letter)
        snprintf(buf, cap, "-%c%s%s", o->letter, sp, m);
    else
        snprintf(buf, cap, "    --%s%s%s", o->name, sp, m);
}

/* Prints text from column col (the cursor is at column at), wrapped at
 * HELP_WIDTH; the continuation lines start at col. */
static void wrap(FILE *f, const char *text, int col, int at)
{
    const char *s = text;
    int pos = at;
    if (pos < col) {
        fprintf(f, "%*s", col - pos, "");
        pos = col;
    }
    bool first = true;
    while (*s) {
        while (*s == ' ')
            s++;
        size_t w = strcspn(s, " ");
        if (!w)
            break;
        if (!first && pos + 1 + (int)w > HELP_WIDTH) {
            fprintf(f, "\n%*s", col, "");
            pos = col;
            first = true;
        }
        if (!first) {
            fputc(' ', f);
            pos++;
        }
        fprintf(f, "%.*s", (int)w, s);
        pos += (int)w;
        s += w;
        first = false;
    }
    fputc('\n', f);
}

static size_t n_visible(const struct cli_cmd *cmd)
{
    size_t n = 0;
    for (const struct cli_opt *o = cli_opt_next(cmd, NULL); o; o = cli_opt_next(cmd, o))
        n += visible(o) && !opt_group(o) && o->id != 'h';
    return n;
}

/* One "[--opt ARG]" item of the usage line, wrapped at HELP_WIDTH under
 * the first item (column indent). */
static void synopsis_item(FILE *f, const char *item, int indent, int *pos)
{
    int w = (int)strlen(item);
    if (*pos + 1 + w > HELP_WIDTH && *pos > indent) {
        fprintf(f, "\n%*s", indent, "");
        *pos = indent;
    } else {
        fputc(' ', f);
        (*pos)++;
    }
    fputs(item, f);
    *pos += w;
}

/* The generated usage line: name, args, then the option list (or
 * [options] when it is long). */
static void synopsis(FILE *f, const struct cli_cmd *cmd)
{
    int pos = fprintf(f, "usage: magpie%s%s", *cmd->name ? " " : "", cmd->name);
    int indent = pos + 1;
    if (cmd->args && *cmd->args)
        pos += fprintf(f, " %s", cmd->args);
    if (n_visible(cmd) > 6) {
        fprintf(f, " [options]\n");
        return;
    }
    for (const struct cli_opt *o = cli_opt_next(cmd, NULL); o; o = cli_opt_next(cmd, o)) {
        if (!visible(o) || opt_group(o) || o->id == 'h')
            continue;
        char item[160];
        if (o->letter)
            snprintf(item, sizeof(item), "[-%c%s%s]", o->letter, o->metavar ? " " : "",
                     o->metavar ? o->metavar : "");
        else
            snprintf(item, sizeof(item), "[--%s%s%s]", o->name, o->metavar ? " " : "",
                     o->metavar ? o->metavar : "");
        synopsis_item(f, item, indent, &pos);
    }
    fputc('\n', f);
}

bool cli_is_child(const struct cli_cmd *parent, const struct cli_cmd *cmd)
{
    size_t k = strlen(parent->name);
    const char *n = cmd->name;
    if (parent == cmd || strncmp(n, parent->name, k) != 0 || (k && n[k] != ' '))
        return false;
    const char *w = n + k + (k > 0);
    return *w && *w != '-' && !strchr(w, ' ');
}

static void children(FILE *f, const struct cli_cmd *cmd)
{
    bool any = false;
    for (size_t i = 0; cli_commands[i]; i++) {
        const struct cli_cmd *c = cli_commands[i];
        if (!cli_is_child(cmd, c))
            continue;
        if (!any)
            fprintf(f, "\ncommands:\n");
        any = true;
        const char *w = c->name + strlen(cmd->name) + (*cmd->name != 0);
        fprintf(f, "  %-12s", w);
        wrap(f, c->summary, 15, 14 + (int)(strlen(w) > 12 ? strlen(w) - 12 : 0));
    }
}

void cli_usage(FILE *f, const struct cli_cmd *cmd)
{
    if (!(cmd->flags & CLI_NO_SYNOPSIS)) {
        synopsis(f, cmd);
        if (cmd->usage)
            fprintf(f, "%s", cmd->usage);
    } else {
        fprintf(f, "usage: %s", cmd->usage);
    }
}

void cli_help(FILE *f, const struct cli_cmd *cmd)
{
    cli_usage(f, cmd);
    if (cmd->intro)
        fprintf(f, "\n%s", cmd->intro);
    children(f, cmd);
    fprintf(f, "\n%s:\n", cmd->opts_title ? cmd->opts_title : "options");
    for (const struct cli_opt *o = cli_opt_next(cmd, NULL); o; o = cli_opt_next(cmd, o)) {
        if (!visible(o))
            continue;
        if (opt_group(o)) {
            fprintf(f, "%s:\n", o->help);
            continue;
        }
        char label[128];
        opt_label(o, label, sizeof(label));
        fprintf(f, "  %s", label);
        int at = 2 + (int)strlen(label);
        if (at + 2 > HELP_COL) {
            fputc('\n', f);
            at = 0;
        }
        wrap(f, o->help ? o->help : "", HELP_COL, at);
    }
    if (cmd->outro)
        fprintf(f, "\n%s", cmd->outro);
}
