#!/usr/bin/env bash
# Installs dense-rt's build dependencies from Debian packages when any is missing (Debian 12).
# CUDA is optional and not installed here: the CUDA packs build only when /usr/local/cuda/bin/nvcc exists.
# npm (for the test oracle download) counts as present when the command exists: machines with a
# Node.js from elsewhere must not get Debian's npm, which conflicts with it.
set -euo pipefail
pkgs=(cmake ninja-build g++ clang libclang-rt-14-dev pkg-config
      libboost-dev libboost-filesystem-dev libyaml-cpp-dev libspdlog-dev libfmt-dev
      libcli11-dev nlohmann-json3-dev libgtest-dev libutf8proc-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "install ok installed" >/dev/null || missing+=("$p")
done
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "install-deps: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >&2 || true
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
