# The Linux targets `make pack` cross-builds on a Linux x64 host, one line each:
#   <rust triple> <zig target> <npm platform dir under packages/gust/npm>
# glibc targets link against glibc 2.17 (zig's `.2.17` suffix), so the binary loads on CentOS 7-era systems and
# anything newer. musl targets link musl dynamically (.cargo/config.toml). macOS and Windows binaries are built on their own OS by .github/workflows/release.yml.
LINUX_TARGETS=(
  "x86_64-unknown-linux-gnu   x86_64-unknown-linux-gnu.2.17   linux-x64-gnu"
  "aarch64-unknown-linux-gnu  aarch64-unknown-linux-gnu.2.17  linux-arm64-gnu"
  "x86_64-unknown-linux-musl  x86_64-unknown-linux-musl       linux-x64-musl"
  "aarch64-unknown-linux-musl aarch64-unknown-linux-musl      linux-arm64-musl"
)
