#!/usr/bin/env bash
# Train the four release checkpoints with the CPU recipes, ONE AT A TIME, then package each release
# (test evaluation + model card under releases/<name>/). Safe to re-run: finished runs are skipped,
# interrupted ones continue with --resume. Usage (from the repository root):
#   TKG_INDT_DATA=/path/to/data nohup bash recipes/train/train_releases.sh > runs/queue.log 2>&1 &
# Logs: runs/<name>/train.log, runs/<name>/release.log. Names default to all four.
# RUNS=folder puts the run folders elsewhere (default runs); GRATE_RELEASES=folder stages the releases.
set -u
runs="${RUNS:-runs}"
names=("$@")
[ ${#names[@]} -eq 0 ] && names=(grate-trix trix grate-ultra ultra)
for name in "${names[@]}"; do
  out="$runs/$name"
  mkdir -p "$out"
  if [ ! -f "$out/summary.json" ]; then
    resume=""
    [ -f "$out/state/state.json" ] && resume="--resume"
    echo "$(date -Is) train $name $resume"
    tkg-indt train --recipe "recipes/train/$name-cpu.yaml" --out "$out" $resume >> "$out/train.log" 2>&1 \
      || { echo "$(date -Is) train $name failed (see $out/train.log)"; continue; }
  fi
  if [ ! -f "${GRATE_RELEASES:-releases}/$name/MODEL_CARD.md" ]; then
    echo "$(date -Is) release $name"
    python -m grate.train.release "$name" --run "$out" >> "$out/release.log" 2>&1 \
      || echo "$(date -Is) release $name failed (see $out/release.log)"
  fi
done
echo "$(date -Is) done"
