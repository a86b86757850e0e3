#!/usr/bin/env bash
# Runs criterion benchmarks under five code layouts and prints each one's median.
#
#   benches/layouts.sh <bench> '<criterion filter>' [rounds]
#   benches/layouts.sh bt 'bt_tick/(agent_tick_status|hand_written_steady)$' 2
#
# A loop of a few dozen instructions runs faster or slower by tens of percent depending on
# where its branches and loop heads fall (alignment, the branch predictor's and the op
# cache's indexing), and so does the hand-written loop it is compared with: one build gives
# one sample of that spread. This rebuilds the bench crate (only it) with LLVM's alignment
# flags for loops, functions and branch targets, so a ratio can be read across layouts
# instead of from one lucky or unlucky build. BENCHMARKS.md ("ratios across code layouts")
# records what it showed. Not part of CI: it takes about a minute per layout.
set -euo pipefail

bench=${1:?usage: benches/layouts.sh <bench> <criterion filter> [rounds]}
filter=${2:?usage: benches/layouts.sh <bench> <criterion filter> [rounds]}
rounds=${3:-2}
cd "$(dirname "$0")/.."

layouts=(
    ""
    "-align-loops=64"
    "-align-all-functions=6"
    "-align-all-nofallthru-blocks=5"
    "-align-loops=32 -align-all-functions=5"
)
for flags in "${layouts[@]}"; do
    args=()
    for flag in $flags; do
        args+=(-C "llvm-args=$flag")
    done
    cargo rustc -q -p stratagem-benches --bench "$bench" --profile bench -- "${args[@]}"
    # The build just made is the newest binary of this bench.
    bin=$(find target/release/deps -maxdepth 1 -type f -executable -name "$bench-*" -printf '%T@ %p\n' |
        sort -n | tail -1 | cut -d' ' -f2)
    for round in $(seq "$rounds"); do
        echo "layout [${flags:-default}] round $round, load $(cut -d' ' -f1 /proc/loadavg)"
        "$bin" --bench --warm-up-time 1 --measurement-time 3 "$filter" 2>&1 |
            awk '/^[^ ]+\// { name = $1 }
                 /time: +\[/ { gsub(/.*time: +\[/, ""); print "  " name, $3, $4 }'
    done
done
