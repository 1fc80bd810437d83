#!/usr/bin/env bash
# The option tables of cli/ (cli/opts.h) and what is built from them: every
# visible option of every command appears in its --help, '_' and '-'
# spellings of long options both parse, the generated man page has a section
# per command and renders without groff warnings, the bash completion offers
# a command's options, and unknown options still exit 2 with a message.
set -u
MAGPIE=${MAGPIE:?}
BIN=$(dirname "$MAGPIE")
MAN="$BIN/doc/magpie.1"
BASH_COMP="$BIN/completions/magpie"
ZSH_COMP="$BIN/completions/_magpie"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fails=0
ok() { echo "ok   $1"; }
ko() {
    echo "FAIL $1"
    fails=$((fails + 1))
}

# --- every table option in its command's --help ---
# The bash completion lists each command's visible options (from the same
# tables); a command key is its words, so "benchmark" holds the options of
# the serving, --trace-dir and --base-url modes together.
help_of() { # help_of KEY: the --help text(s) of every command under that key
    case "$1" in
    "") "$MAGPIE" --help ;;
    benchmark)
        "$MAGPIE" benchmark --help
        "$MAGPIE" benchmark --trace-dir x --help
        "$MAGPIE" benchmark --base-url x --help
        ;;
    *) "$MAGPIE" $1 --help ;;
    esac
}
keys=$(sed -n 's/^    "\([^"]*\)") echo.*/\1/p' "$BASH_COMP" | sort -u)
[ -n "$keys" ] || ko "no command keys in $BASH_COMP"
nkeys=0
for key in "" $keys; do
    opts=$(bash -c 'source "$1"; _magpie_opts "$2"' _ "$BASH_COMP" "$key")
    [ -n "$opts" ] || continue
    nkeys=$((nkeys + 1))
    help_of "$key" >"$t/help" 2>&1
    missing=""
    for o in $opts; do
        grep -qE -- "(^|[ ,/])$o([ ,=/]|\$)" "$t/help" || missing="$missing $o"
    done
    if [ -n "$missing" ]; then ko "help of '$key' lacks:$missing"; else ok "help of '${key:-magpie}' lists its options"; fi
done
[ "$nkeys" -ge 15 ] && ok "$nkeys command keys" || ko "only $nkeys command keys"

# --- '_' and '-' spellings ---
check_rc() { # check_rc NAME WANT CMD...
    local name=$1 want=$2
    shift 2
    "$@" >"$t/out" 2>"$t/err"
    local rc=$?
    if [ "$rc" = "$want" ]; then ok "$name"; else
        ko "$name: exit $rc, expected $want"
        head -3 "$t/err"
    fi
}
no_unknown() { # the last command did not report an unknown option
    if grep -q "unknown" "$t/err"; then ko "$1: $(head -1 "$t/err")"; else ok "$1"; fi
}
# trace report: TraceLens's names and ours, both spellings, on a missing trace
for o in --output_csvs_dir --output-csvs-dir; do
    check_rc "trace report $o" 2 "$MAGPIE" trace report "$t/none.json" $o "$t/o" --short_kernel_threshold_us 5 --short-kernel-histogram-bins 7
    no_unknown "trace report $o parses"
done
check_rc "trace report --gpu_arch_platform (alias)" 2 "$MAGPIE" trace report "$t/none.json" -o "$t/o" --gpu_arch_platform H100
no_unknown "trace report --gpu_arch_platform parses"
check_rc "trace report --gpu-arch=H100" 2 "$MAGPIE" trace report "$t/none.json" -o "$t/o" --gpu-arch=H100
no_unknown "trace report --gpu-arch=H100 parses"
# benchmark gap analysis: hyphen and underscore (the latter new with the tables)
for o in --top-k --top_k; do
    check_rc "benchmark --trace-dir $o" 2 "$MAGPIE" benchmark --trace-dir "$t/none" $o 5
    no_unknown "benchmark $o parses"
done
# trace collective, trace split, trace compare (hand-parsed), discover
check_rc "trace collective --world_size" 2 "$MAGPIE" trace collective --world_size 2 --rank_regex 'r(\d+)' -o "$t/o" "$t/none*.json"
no_unknown "trace collective --world_size parses"
check_rc "trace split --gzip_level" 2 "$MAGPIE" trace split "$t/none.json" --output_dir "$t/o" --gzip_level 3
no_unknown "trace split --gzip_level parses"
check_rc "trace compare --output-csvs-dir" 2 "$MAGPIE" trace compare "$t/a" "$t/b" --output-csvs-dir "$t/o"
no_unknown "trace compare --output-csvs-dir parses"
check_rc "discover --no_tests" 2 "$MAGPIE" discover "$t/none" --no_tests
no_unknown "discover --no_tests parses"
# the load generator's own parser
check_rc "benchmark --base-url --num_prompts" 2 "$MAGPIE" benchmark --base-url http://127.0.0.1:9 --model m --num_prompts 0
grep -q -- "expects an integer in range" "$t/err" && ok "--num_prompts reached its range check" || ko "--num_prompts: $(head -1 "$t/err")"
check_rc "benchmark --base-url --random-input-len=" 2 "$MAGPIE" benchmark --base-url http://127.0.0.1:9 --model m --random-input-len=-1
grep -q -- "expects an integer in range" "$t/err" && ok "--random-input-len= reached its range check" || ko "--random-input-len=: $(head -1 "$t/err")"

# --- unknown options: exit 2 and a clear message ---
unknown() { # unknown NAME PATTERN CMD...
    local name=$1 pat=$2
    shift 2
    check_rc "unknown option: $name" 2 "$@"
    grep -qE -- "$pat" "$t/err" && ok "message: $name" || ko "message: $name: $(head -1 "$t/err")"
}
unknown "global" "unknown global option '--frob'" "$MAGPIE" --frob
unknown "trace report" "unknown option '--frob' for trace report" "$MAGPIE" trace report --frob
unknown "trace kernels" "unknown option '--frob' for trace kernels" "$MAGPIE" trace kernels --frob x
unknown "analyze" "unknown option '--frob' for analyze" "$MAGPIE" analyze --frob
unknown "compare --compile-cmd" "unknown option '--compile-cmd' for compare" "$MAGPIE" compare --compile-cmd x a b
unknown "benchmark" "unknown or incomplete option '--frob' for benchmark" "$MAGPIE" benchmark --trace-dir x --frob
unknown "benchmark --base-url" "unknown option '--frob' for benchmark --base-url" "$MAGPIE" benchmark --base-url x --frob
unknown "gpu" "unknown option '--frob' for gpu show" "$MAGPIE" gpu show --frob
unknown "trace sources" "unknown option '--frob'" "$MAGPIE" trace sources --frob
unknown "discover" "unknown option '--frob'" "$MAGPIE" discover --frob
unknown "mcp" "unknown or incomplete option '--frob' for mcp" "$MAGPIE" mcp --frob

# --- the man page ---
if [ -s "$MAN" ]; then
    ok "man page generated"
    grep -q '^\.TH MAGPIE 1' "$MAN" && ok "man: .TH" || ko "man: no .TH"
    for c in ANALYZE COMPARE BENCHMARK "BENCHMARK \\\\-\\\\-TRACE\\\\-DIR" "BENCHMARK COMPARE" TRACE \
        "TRACE KERNELS" "TRACE REPORT" "TRACE COLLECTIVE" "TRACE SPLIT" "TRACE STAGES" \
        "TRACE SOURCES" "TRACE COMPARE" MCP RAY DISCOVER SUGGEST GPU; do
        grep -q "^\.SH \"MAGPIE $c\"\$" "$MAN" && ok "man: section $c" || ko "man: no section for $c"
    done
    # what --help-man prints now is what the build wrote
    "$MAGPIE" --help-man | cmp -s - "$MAN" && ok "man page up to date" || ko "man page differs from --help-man"
    if command -v groff >/dev/null; then
        groff -man -Tutf8 -ww "$MAN" >"$t/man.txt" 2>"$t/groff.err"
        if [ -s "$t/groff.err" ]; then ko "groff warnings: $(head -3 "$t/groff.err")"; else ok "groff -ww: no warnings"; fi
        grep -q "where the CSVs go" "$t/man.txt" && ok "man renders options" || ko "man: options not rendered"
    else
        echo "note: groff not installed; man page rendering not checked"
    fi
else
    ko "no man page at $MAN"
fi

# --- completions ---
comp() { # comp WORD...: what bash completion offers for the last word
    bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _magpie; printf "%s\n" "${COMPREPLY[@]}"' _ "$BASH_COMP" "$@"
}
if [ -s "$BASH_COMP" ]; then
    comp magpie trace report --include-o >"$t/c"
    grep -qx -- '--include-overlap-info' "$t/c" && ok "bash: trace report options" || ko "bash: trace report --include-o -> $(tr '\n' ' ' <"$t/c")"
    comp magpie trace s >"$t/c"
    grep -qx split "$t/c" && grep -qx stages "$t/c" && grep -qx sources "$t/c" && ok "bash: trace subcommands" || ko "bash: trace s -> $(tr '\n' ' ' <"$t/c")"
    comp magpie tr >"$t/c"
    grep -qx trace "$t/c" && ok "bash: commands" || ko "bash: tr -> $(tr '\n' ' ' <"$t/c")"
    comp magpie -v benchmark --trace-dir x --gro >"$t/c"
    grep -qx -- '--group-by' "$t/c" && ok "bash: benchmark --trace-dir options" || ko "bash: benchmark --gro -> $(tr '\n' ' ' <"$t/c")"
    comp magpie gpu "" >"$t/c"
    grep -qx reset "$t/c" && ok "bash: gpu verbs" || ko "bash: gpu -> $(tr '\n' ' ' <"$t/c")"
    comp magpie trace report --profile_json >"$t/c"
    ! grep -q . "$t/c" && ok "bash: no hidden aliases offered" || ko "bash: offered $(tr '\n' ' ' <"$t/c")"
else
    ko "no bash completion at $BASH_COMP"
fi
if [ -s "$ZSH_COMP" ]; then
    head -1 "$ZSH_COMP" | grep -q '^#compdef magpie' && ok "zsh: #compdef" || ko "zsh: no #compdef line"
    if command -v zsh >/dev/null; then
        zsh -n "$ZSH_COMP" && ok "zsh: syntax" || ko "zsh: syntax error"
    fi
else
    ko "no zsh completion at $ZSH_COMP"
fi

[ "$fails" = 0 ] && echo "all passed" || echo "$fails failure(s)"
[ "$fails" = 0 ]
