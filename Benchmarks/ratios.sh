#!/usr/bin/env bash
# Runs the benchmarks and prints each one's median beside the floor it is judged against,
# measured in the same run, with the ratio and the target listed in targets.txt. Exits non-zero
# when a ratio is over its target. A row whose name says "resident memory" is judged by its
# median peak resident memory instead of its time (the column then holds memory, not ns).
#
# Usage: [RUNS=N] Benchmarks/ratios.sh [--target REGEX] [--filter REGEX]
#
# The PostgreSQL rows need VALUESTORE_BENCHMARK_POSTGRES=1, and sync over HTTP's rows
# VALUESTORE_BENCHMARK_HTTP=1, both under pg_virtualenv: without them the package does not build
# those suites.
#
# With RUNS=N (default 1) the benchmarks run N times and each row keeps its lowest median: on a
# shared or virtual machine the speed of the CPU and the disk shifts between runs, and the lowest
# median is the one least disturbed. Each row and its floor are both taken this way.
set -euo pipefail
cd "$(dirname "$0")"

runs=${RUNS:-1}
all=""
for ((run = 1; run <= runs; run++)); do
    output=$(swift package --disable-sandbox benchmark --no-progress --time-units nanoseconds "$@" 2>/dev/null)
    # Medians (p50) by benchmark name, read from the text tables: a name line, then its table.
    all+=$(printf '%s\n' "$output" | awk '
        /^[^│╒╞╘═ ]/ { name = $0 }
        /^│ Time \(wall clock\)/ && name !~ /resident memory/ { split($0, cells, "│"); gsub(/ /, "", cells[5]); print name "|" cells[5] }
        /^│ Memory \(resident peak\)/ && name ~ /resident memory/ { split($0, cells, "│"); gsub(/ /, "", cells[5]); print name "|" cells[5] }
    ')$'\n'
done
medians=$(printf '%s' "$all" | awk -F'|' '
    NF == 2 { value = $2 + 0; if (!($1 in best) || value < best[$1]) best[$1] = value }
    END { for (name in best) printf "%s|%d\n", name, best[name] }
')

printf '%-36s %-58s %9s %9s %6s %8s\n' "benchmark" "judged against" "median ns" "floor ns" "ratio" "target"
status=0
while IFS='|' read -r bench floor target; do
    value=$(printf '%s\n' "$medians" | awk -F'|' -v n="$bench" '$1 == n { print $2 }')
    base=$(printf '%s\n' "$medians" | awk -F'|' -v n="$floor" '$1 == n { print $2 }')
    [[ -z $value || -z $base ]] && continue
    ratio=$(awk -v a="$value" -v b="$base" 'BEGIN { printf "%.2f", a / b }')
    # A target of "-" marks a row of context: its ratio is printed, and judges nothing.
    if [[ $target == - ]]; then
        limit="-" verdict="context"
    else
        limit="<= $target"
        verdict=$(awk -v r="$ratio" -v t="$target" 'BEGIN { print (r <= t) ? "ok" : "OVER" }')
        [[ $verdict == OVER ]] && status=1
    fi
    printf '%-36s %-58s %9s %9s %6s %8s %s\n' "$bench" "$floor" "$value" "$base" "$ratio" "$limit" "$verdict"
done < <(grep -v '^#' targets.txt | grep .)
exit $status
