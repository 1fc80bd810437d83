#!/usr/bin/env bash
# Accuracy of the kernel-to-source mapper on the labelled table: runs
# bench/sources_accuracy.sh, which downloads the pinned vLLM/SGLang sdists
# and the torch wheel's ATen headers once (exit 77 = skipped when offline).
# The amd-aiter wheel (40 MB) is left out here (the bench reports the run
# with it, docs/sources.md); the with_stack capture traces in ../shared are
# read when present, so the rows that aiter's copies launched are then
# reported launch_site_not_indexed rather than claimed for vLLM.
set -uo pipefail
: "${MAGPIE:?}" "${MP_SRC:?}"
MP_SOURCES_NO_AITER=1 bash "$MP_SRC/bench/sources_accuracy.sh" "$MAGPIE"
