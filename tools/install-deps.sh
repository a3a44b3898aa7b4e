#!/bin/sh
# Installs the Debian packages graphcc needs to build and test, and only the
# ones that are missing. Safe to run again: with everything present it only
# runs dpkg queries. Needs root (or sudo) when something is missing.
set -eu

# libpcre2-dev (RegexFullMatch), libjpeg62-turbo-dev and libpng-dev
# (ImageDecoder): headers at build time; the runtime opens libpcre2-8.so.0,
# libjpeg.so.62 and libpng16.so.16 with dlopen only when a model has those
# ops (runtime/extlib.h), and links none of them.
BUILD_PKGS="build-essential pkg-config libyaml-dev libopenblas-dev libprotobuf-c-dev protobuf-c-compiler libonnx-dev libssl-dev libxxhash-dev libpcre2-dev libjpeg62-turbo-dev libpng-dev"
# clang + libclang-rt-14-dev: libFuzzer with the sanitizers (make fuzz).
# valgrind (make valgrind) and gdb are on the base image.
# python3-dev .. python3-distributed: the Python module (make python, its
# pytest suite, make wheel / pip install --no-build-isolation .).
TEST_PKGS="python3 python3-pil python3-onnx python3-numpy python3-torch python3-torchvision python3-yaml python3-jsonschema graphviz clang libclang-rt-14-dev python3-dev python3-setuptools python3-pip python3-wheel python3-pytest python3-distributed"

want="$BUILD_PKGS"
case "${1:-all}" in
build) ;;
all | test) want="$want $TEST_PKGS" ;;
*) echo "usage: $0 [build|test|all]" >&2; exit 2 ;;
esac

missing=""
for p in $want; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing"
SUDO=""
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
		echo "install-deps: need root to install:$missing" >&2
		exit 1
	fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing
