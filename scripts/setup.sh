#!/usr/bin/env bash
# Installs the Debian packages flashlab builds with, when any is missing (shared/TOOLCHAIN.md).
# Safe to run again: it installs nothing when everything is present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libeigen3-dev doctest-dev libcli11-dev nlohmann-json3-dev libfmt-dev libbenchmark-dev
  libimgui-dev libglfw3-dev libstb-dev libgl-dev xvfb xauth
  libplplot-dev plplot-driver-cairo
  clang libclang-rt-14-dev
  pybind11-dev python3-dev python3-numpy python3-matplotlib python3-pytest
  python3-nbclient python3-nbformat python3-ipykernel jupyter-nbconvert
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
