#!/usr/bin/env bash
# Makes the LLVM majors `make tools` installs (llvm-N and lld-N) installable from apt, adding apt.llvm.org's suite
# for a major only where this machine's own sources lack it. Why: Debian bookworm has llvm-22/lld-22 (in
# bookworm-security), but Ubuntu 24.04 -- GitHub's ubuntu-latest -- has no llvm-22 in its archive; its
# llvm-14..19 and cvise come from Ubuntu's own universe. Idempotent: a major that is installable is left alone, a
# source line is never written twice, and a machine that needs nothing is not touched (not even `apt-get update`).
# Run as root (CI: `sudo ci/install-llvm.sh 22 19 16 15 14`), before `make setup`.
#   ci/install-llvm.sh [MAJOR...]          (default: 22)
# For tests: APT_ROOT prefixes /etc/apt (default: none), CODENAME overrides /etc/os-release's VERSION_CODENAME.
set -euo pipefail

majors=("$@")
[ ${#majors[@]} -gt 0 ] || majors=(22)
root=${APT_ROOT:-}
keyring=$root/etc/apt/keyrings/apt.llvm.org.asc
sources=$root/etc/apt/sources.list.d/apt.llvm.org.list
key_url=https://apt.llvm.org/llvm-snapshot.gpg.key

installable() {  # llvm-N and lld-N both have an install candidate in the current package lists
  apt-cache policy "llvm-$1" "lld-$1" 2>/dev/null |
    awk '/Candidate:/ && $2 != "(none)" { n++ } END { exit !(n == 2) }'
}

missing() {
  local m
  for m in "${majors[@]}"; do
    installable "$m" || echo "$m"
  done
}

command -v apt-cache >/dev/null || { echo "install-llvm: no apt here; install llvm-N and lld-N yourself" >&2; exit 1; }
mapfile -t need < <(missing)
if [ ${#need[@]} -eq 0 ]; then
  echo "install-llvm: llvm/lld ${majors[*]} are installable from this machine's apt sources"
  exit 0
fi
apt-get update -qq  # the lists may be stale or empty (a fresh runner): look again before adding anything
mapfile -t need < <(missing)
if [ ${#need[@]} -eq 0 ]; then
  echo "install-llvm: llvm/lld ${majors[*]} are installable after apt-get update"
  exit 0
fi

# shellcheck source=/dev/null
codename=${CODENAME:-$(. /etc/os-release && echo "${VERSION_CODENAME:-}")}
[ -n "$codename" ] || { echo "install-llvm: no VERSION_CODENAME in /etc/os-release" >&2; exit 1; }
if [ ! -s "$keyring" ]; then
  mkdir -p "$(dirname "$keyring")"
  curl -fsSL --retry 3 "$key_url" -o "$keyring.tmp"
  mv "$keyring.tmp" "$keyring"
fi
mkdir -p "$(dirname "$sources")"
touch "$sources"
for m in "${need[@]}"; do
  line="deb [signed-by=/etc/apt/keyrings/apt.llvm.org.asc] https://apt.llvm.org/$codename/ llvm-toolchain-$codename-$m main"
  grep -qxF "$line" "$sources" || echo "$line" >>"$sources"
  echo "install-llvm: llvm-$m and lld-$m from apt.llvm.org ($codename)"
done
apt-get update -qq
mapfile -t still < <(missing)
if [ ${#still[@]} -gt 0 ]; then
  echo "install-llvm: llvm/lld ${still[*]} still not installable (does apt.llvm.org have $codename for them?)" >&2
  exit 1
fi
