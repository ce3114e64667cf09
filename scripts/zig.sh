# Sourced by scripts/native.sh and scripts/pack.sh: `zig_tools` installs zig and cargo-zigbuild from PyPI (pinned)
# into .tools/venv when missing and puts them on PATH (cargo-zigbuild finds zig as `python -m ziglang` through
# the venv's python); it returns non-zero when they cannot be installed (no python3 venv module, no PyPI).
# `host_glibc_platform` prints this machine's glibc package name (linux-x64-gnu, linux-arm64-gnu), or nothing.
ZIG_VERSION=0.17.1
ZIGBUILD_VERSION=0.24.0
ZIG_TOOLS=.tools/venv

zig_tools() {
  if [[ ! -x $ZIG_TOOLS/bin/cargo-zigbuild ]] || ! "$ZIG_TOOLS/bin/python" -c "import ziglang" 2>/dev/null; then
    echo "installing zig $ZIG_VERSION and cargo-zigbuild $ZIGBUILD_VERSION from PyPI into $ZIG_TOOLS"
    python3 -m venv "$ZIG_TOOLS" &&
      "$ZIG_TOOLS/bin/pip" install --quiet --disable-pip-version-check "ziglang==$ZIG_VERSION" "cargo-zigbuild==$ZIGBUILD_VERSION" ||
      return 1
  fi
  export PATH="$PWD/$ZIG_TOOLS/bin:$PATH"
}

host_glibc_platform() {
  [[ $(uname -s) == Linux ]] && getconf GNU_LIBC_VERSION >/dev/null 2>&1 || return 0
  case "$(uname -m)" in
    x86_64) echo linux-x64-gnu ;;
    aarch64 | arm64) echo linux-arm64-gnu ;;
  esac
}
