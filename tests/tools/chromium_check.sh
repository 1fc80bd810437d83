#!/usr/bin/env bash
# chromium_check.sh HTML PNG: loads HTML in headless Chromium and writes a
# screenshot to PNG. Exit 0 when Chromium exited 0, the screenshot is a PNG
# and nothing reached the console; 1 with the reasons on stdout otherwise;
# 77 when chromium is not installed. The Chromium log is kept as PNG.log.
set -u
html=$1 png=$2
chrome=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chrome" ] || exit 77
log=$png.log
timeout 120 "$chrome" --headless --disable-gpu --no-sandbox --enable-logging=stderr --v=0 \
    --user-data-dir="$(dirname "$png")/chrome-profile" --screenshot="$png" \
    --window-size=1400,2000 "file://$html" >"$log" 2>&1
rc=$?
bad=0
if [ "$rc" != 0 ]; then
    echo "chromium exited $rc"
    bad=1
fi
if ! [ -s "$png" ] || [ "$(head -c 4 "$png" | od -An -c | tr -d ' ')" != '211PNG' ]; then
    echo "no screenshot"
    tail -5 "$log" | sed 's/^/  chromium: /'
    bad=1
fi
if grep -E 'CONSOLE|Uncaught' "$log" >"$log.console"; then
    echo "console messages while loading $(basename "$html"):"
    sed 's/^/  /' "$log.console" | head -10
    bad=1
fi
exit $bad
