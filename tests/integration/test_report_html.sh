#!/usr/bin/env bash
# Human views of `magpie trace report` end to end on the bundled example
# trace: the terminal summary (and --no-summary), report.html loaded in
# headless Chromium (no console errors, a screenshot is produced; SKIPPED
# when chromium is not installed), and the xlsx workbook (--xlsx and
# TraceLens's --output_xlsx_path) read back with python3's zipfile.
set -u
MAGPIE=${MAGPIE:?}
SRC=${MP_SRC:?}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fails=0
fail() {
    echo "FAIL $*"
    fails=$((fails + 1))
}
trace=$(ls "$SRC"/examples/traces/tp2/tp2-rank-0.*.json.gz | head -1)

# report with an arch: CSVs, report.html, xlsx and the summary on stdout
if "$MAGPIE" trace report "$trace" --gpu-arch H200 -o "$t/rep" --xlsx "$t/rep.xlsx" -q \
    >"$t/out" 2>"$t/err"; then
    echo "ok   trace report --gpu-arch H200 --xlsx"
else
    fail "trace report exited $?"
    sed 's/^/  err: /' "$t/err" | head -5
fi
for pat in '^GPU time [0-9.]+ ms$' '^  idle +[0-9.]+ ms +[0-9.]+%$' \
    '^Time by category: [0-9.]+ ms of op kernel time' '^  GEMM +[0-9.]+ +[0-9.]+%' \
    '^Top 10 of [0-9]+ op shapes by kernel time \(roofline: H200, 4.80 TB/s\)' \
    '^  1  aten::mm .* (compute|memory)$' "wrote $t/rep/report.html" "wrote $t/rep.xlsx"; do
    grep -qE -- "$pat" "$t/out" || fail "summary lacks /$pat/"
done
if grep -qiE '\b(nan|inf)\b' "$t/out"; then fail "summary prints nan/inf"; fi
html=$t/rep/report.html
[ -s "$html" ] || fail "report.html not written"
grep -q '<circle class="pt"' "$html" || fail "report.html has no roofline points"
grep -q '<line class="roof-mem"' "$html" || fail "report.html has no memory roof"
grep -q '<line class="roof"' "$html" || fail "report.html has no compute roof"
[ "$(grep -c '<svg' "$html")" = "$(grep -c '</svg>' "$html")" ] || fail "unbalanced <svg>"
if grep -qE '<script|src=|href=' "$html"; then fail "report.html is not self-contained"; fi
if grep -qiE '[^a-z_](nan|inf)[^a-z_]' "$html"; then fail "report.html prints nan/inf"; fi

# --no-summary; TraceLens's --output_xlsx_path spelling
"$MAGPIE" trace report "$trace" -o "$t/rep2" --output_xlsx_path "$t/rep2.xlsx" --no-summary -q \
    >"$t/out2" 2>&1 || fail "--no-summary / --output_xlsx_path exited $?"
if grep -qE '^Time by category|^Top [0-9]+ of' "$t/out2"; then fail "--no-summary still prints"; fi
[ -s "$t/rep2.xlsx" ] || fail "--output_xlsx_path wrote nothing"
[ -s "$t/rep2/report.html" ] || fail "report.html not written without an arch"
if grep -q '<line class="roof' "$t/rep2/report.html"; then fail "roofs drawn without an arch"; fi
cmp -s "$t/rep/GEMM.csv" "$t/rep2/GEMM.csv" && fail "arch did not change GEMM.csv (roofline columns)"

# the workbook: a zip whose sheets are the CSV files, cells read back
if command -v python3 >/dev/null 2>&1; then
    if python3 - "$t/rep.xlsx" "$t/rep" >"$t/py" 2>&1 <<'PY'; then
import csv, os, re, sys, zipfile
import xml.etree.ElementTree as ET
csv.field_size_limit(1 << 30)
ns = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main"}
xlsx, d = sys.argv[1], sys.argv[2]
z = zipfile.ZipFile(xlsx)
assert z.testzip() is None, "corrupt member"
wb = ET.fromstring(z.read("xl/workbook.xml"))
names = [s.get("name") for s in wb.find("m:sheets", ns)]
stems = sorted(f[:-4] for f in os.listdir(d) if f.endswith(".csv"))
assert sorted(names) == stems, (names, stems)
assert names[0] == "gpu_timeline", names
for i, name in enumerate(names):
    rows = list(csv.reader(open(f"{d}/{name}.csv", newline="", encoding="utf-8")))
    x = ET.fromstring(z.read(f"xl/worksheets/sheet{i + 1}.xml"))
    n = len(x.findall("m:sheetData/m:row", ns))
    assert n == len(rows), (name, n, len(rows))
    if name == "gpu_timeline":
        cells = {c.get("r"): c for c in x.iter("{%s}c" % ns["m"])}
        assert cells["A1"].get("s"), "header not formatted"
        assert cells["B2"].get("t") is None and float(cells["B2"].find("m:v", ns).text) == float(rows[1][1])
print("sheets:", " ".join(names))
PY
        echo "ok   xlsx: $(cat "$t/py")"
    else
        fail "xlsx check"
        sed 's/^/  py: /' "$t/py" | head -10
    fi
else
    echo "SKIPPED xlsx read-back (python3 not installed)"
fi

# report.html in headless Chromium: loads, no console errors, a screenshot
bash "$SRC/tests/tools/chromium_check.sh" "$html" "$t/shot.png" >"$t/chrome.out"
case $? in
0) echo "ok   chromium: screenshot ($(wc -c <"$t/shot.png") bytes), no console messages" ;;
77) echo "SKIPPED chromium check (chromium not installed)" ;;
*) fail "chromium check of report.html:" && sed 's/^/  /' "$t/chrome.out" ;;
esac

[ "$fails" = 0 ] && echo "all passed" || echo "$fails failure(s)"
exit $((fails > 0))
