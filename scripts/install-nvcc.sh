#!/usr/bin/env bash
# Installs the pinned CUDA 13.0 compiler wheels (nvcc, nvvm, crt, runtime headers, cccl) from PyPI into
# one directory, and prints the path of its nvcc on stdout (everything else goes to stderr).
#
# usage: scripts/install-nvcc.sh [DIR]
#   DIR defaults to $EMUGEMM_CUDA_WHEELS, else $HOME/.cache/emugemm-cuda13.0.
#
# All five wheels are pinned and installed in ONE pip call: nvcc's metadata leaves nvvm/crt unpinned
# (pip would pull the newest, whose PTX the GPU machine's CUDA 13.0 driver refuses), and a second
# `pip install --target` into the same directory does not merge the `nvidia/` namespace.
# Nothing is done when DIR already holds an nvcc reporting release 13.0. A fresh install goes to a
# temporary sibling directory first and is moved into place only when complete.
set -euo pipefail

dir="${1:-${EMUGEMM_CUDA_WHEELS:-$HOME/.cache/emugemm-cuda13.0}}"
nvcc="$dir/nvidia/cu13/bin/nvcc"

is_pinned() { "$nvcc" --version 2>/dev/null | grep -q 'release 13\.0,'; }

if ! is_pinned; then
	echo "install-nvcc: installing the CUDA 13.0 compiler wheels into $dir" >&2
	partial="$dir.partial.$$"
	trap 'rm -rf "$partial"' EXIT
	mkdir -p "$(dirname "$dir")"
	python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location --root-user-action=ignore --target "$partial" \
		'nvidia-cuda-nvcc==13.0.88' 'nvidia-nvvm==13.0.88' 'nvidia-cuda-crt==13.0.88' \
		'nvidia-cuda-runtime==13.0.96' 'nvidia-cuda-cccl==13.0.85' >&2
	rm -rf "$dir"
	mv "$partial" "$dir"
	trap - EXIT
	is_pinned || { echo "install-nvcc: $nvcc does not report release 13.0 after the install" >&2; exit 1; }
fi
"$nvcc" --version | grep 'release' >&2
echo "$nvcc"
