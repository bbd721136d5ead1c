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
# fl_cut FIELDS ARGS...: a CSV command with only some columns kept (cut -d, -fFIELDS).
fl_cut() {
  local fields=$1
  shift
  echo
  echo "\$ flashlab $* | cut -d, -f$fields"
  "$FLASHLAB" "$@" | cut -d, -f"$fields"
}
