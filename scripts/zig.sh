# Sourced by scripts/native.sh and scripts/pack.sh: zig and cargo-zigbuild from PyPI (pinned) in .tools/venv, put
# on PATH. cargo-zigbuild finds zig as `python -m ziglang` through the venv's python.
ZIG_VERSION=0.17.1
ZIGBUILD_VERSION=0.24.0
ZIG_TOOLS=.tools/venv
if [[ ! -x $ZIG_TOOLS/bin/cargo-zigbuild ]] || ! $ZIG_TOOLS/bin/python -c "import ziglang" 2>/dev/null; then
  echo "installing zig $ZIG_VERSION and cargo-zigbuild $ZIGBUILD_VERSION from PyPI into $ZIG_TOOLS"
  python3 -m venv "$ZIG_TOOLS"
  "$ZIG_TOOLS/bin/pip" install --quiet --disable-pip-version-check "ziglang==$ZIG_VERSION" "cargo-zigbuild==$ZIGBUILD_VERSION"
fi
export PATH="$PWD/$ZIG_TOOLS/bin:$PATH"
