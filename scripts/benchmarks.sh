#!/usr/bin/env bash
# Every benchmark figure of docs/BENCHMARKS.md, written to one folder.
#
#   scripts/benchmarks.sh OUT_DIR [LOCOMO_JSON]
#
# Builds the LTP-format files (the project's LTP reconstruction and the five
# held-out cue sets woven into LoCoMo conversations) under OUT_DIR/files, then runs
# `atma bench judge`, `gate`, `ltp`, `locomo` and `perf` into OUT_DIR. LoCoMo is read
# from your copy (CC BY-NC 4.0; default ../shared/data/locomo/locomo10.json); nothing
# of it is written inside the repository. Run it from the repository root after
# `make venv`. The held-out fifth file is part of the run: run it once, at the end of
# a piece of work, and never tune anything on its figures (dev, test, final and
# fresh are spent: development files now).
set -euo pipefail
OUT=${1:?usage: scripts/benchmarks.sh OUT_DIR [LOCOMO_JSON]}
LOCOMO=${2:-../shared/data/locomo/locomo10.json}
BIN=${VENV:-.venv}/bin
mkdir -p "$OUT/files"

"$BIN/atma" ltp build --locomo "$LOCOMO" --out "$OUT/files/ltp.json" --seed 0
for set in dev test; do
  "$BIN/python" scripts/make_heldout_ltp.py --locomo "$LOCOMO" \
    --units "benchmarks/heldout/units_$set.json" --out "$OUT/files/heldout_$set.json"
done
"$BIN/python" scripts/make_heldout_ltp.py --locomo "$LOCOMO" \
  --units benchmarks/heldout/units_final.json --out "$OUT/files/heldout_final.json" \
  --profiles 8 --units-per-profile 16 --name heldout-final
"$BIN/python" scripts/make_heldout_ltp.py --locomo "$LOCOMO" \
  --units benchmarks/heldout/units_fresh.json --out "$OUT/files/heldout_fresh.json" \
  --profiles 6 --units-per-profile 16 --name heldout-fresh
"$BIN/python" scripts/make_heldout_ltp.py --locomo "$LOCOMO" \
  --units benchmarks/heldout/units_fifth.json --out "$OUT/files/heldout_fifth.json" \
  --profiles 6 --units-per-profile 16 --name heldout-fifth

for f in ltp heldout_dev heldout_test heldout_final heldout_fresh heldout_fifth; do
  "$BIN/atma" bench judge "$OUT/files/$f.json" --out "$OUT/judge_$f.json"
  "$BIN/atma" bench gate "$OUT/files/$f.json" --out "$OUT/gate_$f.json"
  "$BIN/atma" bench ltp "$OUT/files/$f.json" --out "$OUT/ltp_$f.json" --plot "$OUT/ltp_$f.png"
done
"$BIN/atma" bench locomo "$LOCOMO" --out "$OUT/locomo.json" --plot "$OUT/locomo.png"
"$BIN/atma" bench perf --out "$OUT/perf.json" --plot "$OUT/perf.png"
