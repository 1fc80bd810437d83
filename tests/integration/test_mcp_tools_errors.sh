#!/usr/bin/env bash
# The MCP kernel tools' early argument errors (issue 27), through the worker
# entry that runs one tool call (`magpie mcp --worker TOOL ARGS.json`: the
# result JSON on stdout, exit 1 for a tool failure): analyze and compare
# name a kernel file or working directory that does not exist (or is of the
# wrong kind) before anything runs, a docker image that docker would read as
# an option is refused naming docker_image, and create_kernel_config keeps a
# kernel_id holding newlines inside its one YAML value.
#
# Env: MAGPIE (magpie binary).
set -u
: "${MAGPIE:?MAGPIE must point to the magpie binary}"
if ! command -v python3 >/dev/null; then
    echo "SKIPPED: python3 not found (used to write and read the JSON)"
    exit 0
fi
t=$(mktemp -d "${TMPDIR:-/tmp}/mcp_tools_err.XXXXXX")
trap 'rm -rf "$t"' EXIT
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# worker TOOL JSON: runs the tool on the argument object JSON (Python syntax
# is fine: it goes through json.dumps); result in $t/out, exit status in RC
worker() {
    python3 -c 'import json, sys; json.dump(eval(sys.argv[1]), open(sys.argv[2], "w"))' \
        "$2" "$t/args.json" || { fail "bad test arguments: $2"; return; }
    (cd "$t/run" && timeout 120 "$MAGPIE" mcp --worker "$1" "$t/args.json" >"$t/out" 2>"$t/err")
    RC=$?
}
# expect_error NAME MESSAGE: the call failed (exit 1) with {"error": MESSAGE}
# exactly, and made no workspace
expect_error() {
    local got
    got=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["error"])' "$t/out" \
        2>/dev/null)
    if [ "$RC" != 1 ] || [ "$got" != "$2" ]; then
        fail "$1: exit $RC, answer $(head -c 400 "$t/out") $(head -c 200 "$t/err")"
    else
        echo "ok   $1"
    fi
    [ -z "$(ls -A "$t/run")" ] || fail "$1: something was written: $(ls -A "$t/run")"
}

mkdir -p "$t/run" "$t/src dir"
k=$t/src\ dir/vadd.cl
printf '__kernel void vadd(__global float *a) { a[get_global_id(0)] += 1.0f; }\n' >"$k"
missing="$t/no such 'dir'/k\$1.cl"

worker analyze "{'kernel_path': '''$missing''', 'testcase_command': 'true'}"
expect_error "analyze: missing kernel_path" "kernel_path: no such file: $missing"
worker analyze "{'kernel_path': '''$t''', 'testcase_command': 'true'}"
expect_error "analyze: kernel_path a directory" "kernel_path: a directory, not a file: $t"
worker analyze "{'kernel_path': '''$k''', 'testcase_command': 'true', 'working_dir': '$t/nowd'}"
expect_error "analyze: missing working_dir" "working_dir: no such directory: $t/nowd"
worker analyze "{'kernel_path': '''$k''', 'testcase_command': 'true', 'working_dir': '''$k'''}"
expect_error "analyze: working_dir a file" "working_dir: not a directory: $k"
worker analyze "{'kernel_path': '''$k''', 'testcase_command': 'true',
                 'environment': 'container', 'docker_image': '--privileged'}"
expect_error "analyze: docker_image an option" \
    "docker_image: an image name cannot start with '-' (docker and podman would read it as an option): '--privileged'"

worker compare "{'kernel_paths': ['''$k''', '''$missing''']}"
expect_error "compare: missing kernel_paths[1]" "kernel_paths[1]: no such file: $missing"
worker compare "{'kernel_paths': ['''$missing''', '''$k''']}"
expect_error "compare: missing kernel_paths[0]" "kernel_paths[0]: no such file: $missing"
worker compare "{'kernel_paths': ['''$k''', '''$k'''], 'working_dir': '$t/nowd'}"
expect_error "compare: missing working_dir" "working_dir: no such directory: $t/nowd"
worker compare "{'kernel_paths': ['''$k''', '''$k'''], 'environment': 'container',
                 'docker_image': 'img name'}"
expect_error "compare: docker_image with a space" \
    "docker_image: an image name cannot hold whitespace or control characters: found a space at byte 4"

# create_kernel_config: a kernel_id that tries to add a kernel stays one value
worker create_kernel_config "{'kernel_id': 'k\nkernels:\n  - id: evil\n#',
    'kernel_path': '''$k''', 'testcase_command': 'true'}"
if [ "$RC" != 0 ]; then
    fail "create_kernel_config: exit $RC: $(head -c 400 "$t/out")"
else
    if python3 - "$t/out" <<'PY'; then
import json, sys
y = json.load(open(sys.argv[1]))["config_content"]
lines = y.splitlines()
# two header comments, "kernels:", then the one entry's keys, each on one line
assert lines[0].startswith('# Kernel configuration for "k\\nkernels:\\n  - id: evil\\n#" ('), lines
assert [l for l in lines if not l.startswith("#")][0] == "kernels:", lines
assert sum(1 for l in lines if l.startswith("kernels:")) == 1, lines
assert sum(1 for l in lines if l.lstrip().startswith("- ")) == 1, lines
assert '  - id: "k\\nkernels:\\n  - id: evil\\n#"' in lines, lines
PY
        echo "ok   create_kernel_config: kernel_id with newlines"
    else
        fail "create_kernel_config: the id escaped its value"
    fi
fi

if [ "$fails" -gt 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "ok"
