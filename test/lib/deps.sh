#!/usr/bin/env bash
# Install, from Debian's packages, whatever the build and the tests need and
# the machine lacks.  Runs as root (as on CI); as another user it only reports.
#
# ND_DEPS=build (set by `make demo`) limits it to what building neardup and
# running a throwaway cluster need; by default it is everything `make test`
# needs.  --list prints the packages instead of installing them.
set -euo pipefail

packages=(
	postgresql-15               # server binaries (initdb, postgres)
	postgresql-server-dev-15    # PGXS, server headers, pg_regress
	libxxhash-dev               # XXH3 (header-only, inlined)
	gcc make
)
[ "${ND_DEPS:-test}" = build ] || packages+=(
	clang libclang-rt-14-dev    # libFuzzer + sanitizers for the fuzz suite
	libipc-run-perl             # PostgreSQL's TAP framework
	postgresql-15-cron          # the nightly job under a scheduler (e2e)
	postgresql-15-plpgsql-check # static check of the PL/pgSQL functions (regress)
	# the Debian package and the release (e2e package.sh, version_consistency.sh)
	dpkg-dev debhelper postgresql-server-dev-all lintian
	pgxnclient python3
)

if [ "${1:-}" = --list ]; then
	printf '%s\n' "${packages[@]}"
	exit 0
fi

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

echo "neardup: installing missing packages: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "neardup: not root; install them yourself: apt-get install ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
