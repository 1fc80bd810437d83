/* Documents generated from the option tables (opts.h): the magpie.1 man
 * page (one section per command) and the bash and zsh completion scripts.
 * The build runs `magpie --help-man`, `--help-bash` and `--help-zsh`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/base.h>

#include "opts.h"

/* ---- man page ---- */

/* Text with roff's special characters escaped; at line start a '.' or '\''
 * is protected too. */
static void roff(FILE *f, const char *s, size_t n, bool line_start)
{
    for (size_t i = 0; i < n && s[i]; i++) {
        char c = s[i];
        if (line_start && (c == '.' || c == '\''))
            fputs("\\&", f);
        line_start = false;
        if (c == '\\')
            fputs("\\e", f);
        else if (c == '-')
            fputs("\\-", f);
        else
            fputc(c, f);
    }
}

/* Hand-wrapped paragraphs: blank lines become .PP, indented lines (examples,
 * tables) are kept as they are in no-fill mode. */
static void roff_block(FILE *f, const char *text)
{
    bool nofill = false;
    for (const char *s = text; *s;) {
        size_t n = strcspn(s, "\n");
        bool indented = s[0] == ' ';
        if (n == 0) {
            if (nofill)
                fputs(".fi\n", f);
            nofill = false;
            fputs(".PP\n", f);
        } else {
            if (indented && !nofill)
                fputs(".nf\n", f);
            else if (!indented && nofill)
                fputs(".fi\n", f);
            nofill = indented;
            roff(f, s, n, true);
            fputc('\n', f);
        }
        s += n + (s[n] == '\n');
    }
    if (nofill)
        fputs(".fi\n", f);
}

static void man_opt(FILE *f, const struct cli_opt *o)
{
    if (!o->name && !o->letter) { /* a group heading */
        fputs(".PP\n\\fI", f);
        roff(f, o->help, strlen(o->help), false);
        fputs(":\\fR\n", f);
        return;
    }
    fputs(".TP\n", f);
    if (o->letter) {
        fprintf(f, "\\fB\\-%c\\fR", o->letter);
        if (o->name)
            fputs(", ", f);
    }
    if (o->name) {
        fputs("\\fB\\-\\-", f);
        roff(f, o->name, strlen(o->name), false);
        fputs("\\fR", f);
    }
    if (o->metavar) {
        fputs(" \\fI", f);
        roff(f, o->metavar, strlen(o->metavar), false);
        fputs("\\fR", f);
    }
    fputc('\n', f);
    if (o->help)
        roff(f, o->help, strlen(o->help), true);
    fputc('\n', f);
}

static void man_cmd(FILE *f, const struct cli_cmd *c)
{
    fputs(".SH \"MAGPIE ", f);
    for (const char *s = c->name; *s; s++) {
        if (*s == '-')
            fputs("\\-", f);
        else
            fputc(*s >= 'a' && *s <= 'z' ? *s - 'a' + 'A' : *s, f);
    }
    fputs("\"\n", f);
    /* the usage lines of --help, as typed */
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (m) {
        cli_usage(m, c);
        fclose(m);
        fputs(".PP\n.nf\n", f);
        for (const char *s = buf; s && *s;) {
            size_t n = strcspn(s, "\n");
            size_t skip = strncmp(s, "usage: ", 7) == 0 ? 7 : strspn(s, " ");
            skip = skip > n ? n : skip;
            fputs("\\fB", f);
            roff(f, s + skip, n - skip, false);
            fputs("\\fR\n", f);
            s += n + (s[n] == '\n');
        }
        fputs(".fi\n", f);
        free(buf);
    }
    fputs(".PP\n", f);
    roff(f, c->summary, strlen(c->summary), true);
    fputc('\n', f);
    if (c->intro) {
        fputs(".PP\n", f);
        roff_block(f, c->intro);
    }
    fputs(".PP\n", f);
    if (c->opts_title)
        roff(f, c->opts_title, strlen(c->opts_title), true);
    else
        fputs("options", f);
    fputs(":\n", f);
    for (const struct cli_opt *o = cli_opt_next(c, NULL); o; o = cli_opt_next(c, o))
        if (!(o->flags & CLI_HIDDEN))
            man_opt(f, o);
    if (c->outro) {
        fputs(".PP\n", f);
        roff_block(f, c->outro);
    }
}

void cli_write_man(FILE *f)
{
    const struct cli_cmd *root = cli_commands[0];
    fprintf(f,
            ".\\\" magpie.1, generated from the option tables of cli/ at build time.\n"
            ".TH MAGPIE 1 \"\" \"magpie %s\" \"User Commands\"\n"
            ".SH NAME\n"
            "magpie \\- GPU performance loop for LLM inference\n"
            ".SH SYNOPSIS\n"
            "\\fBmagpie\\fR [\\fIglobal options\\fR] \\fIcommand\\fR [\\fIoptions\\fR]\n"
            ".SH DESCRIPTION\n",
            MP_VERSION);
    roff_block(f, root->intro);
    fputs(".PP\nEach command below has its own section; `magpie COMMAND \\-\\-help` prints "
          "the same text.\n",
          f);
    fputs(".SH \"GLOBAL OPTIONS\"\n", f);
    for (const struct cli_opt *o = cli_opt_next(root, NULL); o; o = cli_opt_next(root, o))
        if (!(o->flags & CLI_HIDDEN))
            man_opt(f, o);
    if (root->outro) {
        fputs(".PP\n", f);
        roff_block(f, root->outro);
    }
    for (size_t i = 1; cli_commands[i]; i++)
        man_cmd(f, cli_commands[i]);
}

/* ---- completions ---- */

/* The completion key of a command: its words up to the first option word
 * ("benchmark --trace-dir" -> "benchmark"). */
static size_t key_len(const char *name)
{
    const char *dash = strstr(name, " -");
    return dash ? (size_t)(dash - name) : strlen(name);
}

static void opt_words(FILE *f, const struct cli_cmd *c)
{
    for (const struct cli_opt *o = cli_opt_next(c, NULL); o; o = cli_opt_next(c, o)) {
        if (o->flags & CLI_HIDDEN)
            continue;
        if (o->letter)
            fprintf(f, " -%c", o->letter);
        /* a group heading has neither and prints nothing */
        if (o->name)
            fprintf(f, " --%s", o->name);
    }
}

/* case arms: key) words ;; -- the options of every command with that key */
static void case_opts(FILE *f)
{
    for (size_t i = 0; cli_commands[i]; i++) {
        const struct cli_cmd *c = cli_commands[i];
        size_t k = key_len(c->name);
        bool seen = false;
        for (size_t j = 0; j < i; j++)
            seen |= key_len(cli_commands[j]->name) == k &&
                    strncmp(cli_commands[j]->name, c->name, k) == 0;
        if (seen)
            continue;
        fprintf(f, "    \"%.*s\") echo \"", (int)k, c->name);
        for (size_t j = i; cli_commands[j]; j++)
            if (key_len(cli_commands[j]->name) == k &&
                strncmp(cli_commands[j]->name, c->name, k) == 0)
                opt_words(f, cli_commands[j]);
        fputs("\" ;;\n", f);
    }
}

/* case arms: key) the next words: subcommands and cli_cmd.words */
static void case_subs(FILE *f)
{
    for (size_t i = 0; cli_commands[i]; i++) {
        const struct cli_cmd *c = cli_commands[i];
        if (key_len(c->name) != strlen(c->name))
            continue;
        fprintf(f, "    \"%s\") echo \"", c->name);
        const char *sep = "";
        for (size_t j = 0; cli_commands[j]; j++) {
            if (!cli_is_child(c, cli_commands[j]))
                continue;
            fprintf(f, "%s%s", sep, cli_commands[j]->name + strlen(c->name) + (*c->name != 0));
            sep = " ";
        }
        if (c->words)
            fprintf(f, "%s%s", sep, c->words);
        fputs("\" ;;\n", f);
    }
}

static void shell_tables(FILE *f)
{
    fputs("_magpie_opts() {\n  case \"$1\" in\n", f);
    case_opts(f);
    fputs("  esac\n}\n\n_magpie_subs() {\n  case \"$1\" in\n", f);
    case_subs(f);
    fputs("  esac\n}\n\n", f);
}

void cli_write_bash(FILE *f)
{
    fputs("# bash completion for magpie, generated from the option tables of cli/.\n\n", f);
    shell_tables(f);
    fputs("_magpie() {\n"
          "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" key=\"\" subs w i\n"
          "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
          "    w=\"${COMP_WORDS[i]}\"\n"
          "    [[ $w == -* ]] && continue\n"
          "    subs=\" $(_magpie_subs \"$key\") \"\n"
          "    [[ $subs == *\" $w \"* ]] && key=\"${key:+$key }$w\"\n"
          "  done\n"
          "  if [[ $cur == -* ]]; then\n"
          "    COMPREPLY=($(compgen -W \"$(_magpie_opts \"$key\")\" -- \"$cur\"))\n"
          "  else\n"
          "    COMPREPLY=($(compgen -W \"$(_magpie_subs \"$key\")\" -- \"$cur\"))\n"
          "    ((${#COMPREPLY[@]})) || COMPREPLY=($(compgen -f -- \"$cur\"))\n"
          "  fi\n"
          "}\n"
          "complete -o filenames -F _magpie magpie\n",
          f);
}

void cli_write_zsh(FILE *f)
{
    fputs("#compdef magpie\n"
          "# zsh completion for magpie, generated from the option tables of cli/.\n\n",
          f);
    shell_tables(f);
    fputs("_magpie() {\n"
          "  local key=\"\" subs w i\n"
          "  for ((i = 2; i < CURRENT; i++)); do\n"
          "    w=\"${words[i]}\"\n"
          "    [[ $w == -* ]] && continue\n"
          "    subs=\" $(_magpie_subs \"$key\") \"\n"
          "    [[ $subs == *\" $w \"* ]] && key=\"${key:+$key }$w\"\n"
          "  done\n"
          "  if [[ ${words[CURRENT]} == -* ]]; then\n"
          "    compadd -- ${=$(_magpie_opts \"$key\")}\n"
          "  else\n"
          "    subs=\"$(_magpie_subs \"$key\")\"\n"
          "    if [[ -n $subs ]]; then compadd -- ${=subs}; else _files; fi\n"
          "  fi\n"
          "}\n\n"
          "_magpie \"$@\"\n",
          f);
}
