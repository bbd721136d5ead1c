# Sourced by the lab scripts: finds the flashlab binary and echoes each command before running it.
set -euo pipefail
FLASHLAB=${FLASHLAB:-build/sim/cli/flashlab}
if [ ! -x "$FLASHLAB" ]; then
  echo "lab: $FLASHLAB not found; build first (README) or set FLASHLAB=/path/to/flashlab" >&2
  exit 2
fi
fl() {
  echo
  echo "\$ flashlab $*"
  "$FLASHLAB" "$@"
}
# fl_csv COLUMNS ARGS...: a CSV command with only the named columns kept (COLUMNS: names from its
# header, comma-separated, e.g. value,algo,hbm_read_bytes); a name the header lacks stops the lab.
fl_csv() {
  local columns=$1
  shift
  echo
  echo "\$ flashlab $*   # columns: $columns"
  "$FLASHLAB" "$@" | awk -F, -v want="$columns" '
    NR == 1 {
      n = split(want, names, ",")
      for (k = 1; k <= n; k++) {
        for (c = 1; c <= NF; c++) if ($c == names[k]) index_of[k] = c
        if (!index_of[k]) { print "lab: the CSV has no column " names[k] " (its header: " $0 ")" > "/dev/stderr"; exit 3 }
      }
    }
    { line = $(index_of[1]); for (k = 2; k <= n; k++) line = line "," $(index_of[k]); print line }'
}
