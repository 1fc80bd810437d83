#!/usr/bin/env bash
# Accuracy of the kernel-to-source mapper on the labelled table: runs
# bench/sources_accuracy.sh, which downloads the pinned vLLM/SGLang sdists
# and the torch wheel's ATen headers once (exit 77 = skipped when offline).
# The amd-aiter wheel (40 MB) is left out here: with it, five vLLM rows are
# honestly ambiguous (aiter ships copies of the same kernels; the names alone
# cannot decide) and recall over indexed rows is 0.849, reported by the bench
# itself (docs/sources.md); the rule it exposed (a name that only starts with
# a host function's name is not claimed) is covered by unit.test_sources.
set -uo pipefail
: "${MAGPIE:?}" "${MP_SRC:?}"
MP_SOURCES_NO_AITER=1 bash "$MP_SRC/bench/sources_accuracy.sh" "$MAGPIE"
