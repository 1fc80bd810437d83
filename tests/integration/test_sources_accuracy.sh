#!/usr/bin/env bash
# Accuracy of the kernel-to-source mapper on the labelled table: runs
# bench/sources_accuracy.sh, which downloads the pinned vLLM/SGLang sdists
# and the torch wheel's ATen headers once (exit 77 = skipped when offline).
set -uo pipefail
: "${MAGPIE:?}" "${MP_SRC:?}"
bash "$MP_SRC/bench/sources_accuracy.sh" "$MAGPIE"
