#!/usr/bin/env bash
# test/pg/server.sh MAJOR [--cassert]: a PostgreSQL server of that major
# built from Debian's source package, for the tests of the majors the
# system does not install.  Prints the installation's prefix (its
# bin/pg_config) as the last line.
#
# The source comes from Debian's archive through an apt configuration of
# its own (deb-src lines for trixie, unstable and experimental, package
# lists kept in the cache), so the system's sources stay on bookworm:
#   17: trixie, 18: unstable, 19: experimental.  16 has no source there.
# The build goes to ND_PG_CACHE (default /var/tmp/neardup-pg), outside
# any clone, as MAJOR[-cassert]/; a complete build there is reused.
# --cassert builds with assertions (--enable-cassert), the only way to see
# PostgreSQL's own Assert()s fail.  TAP support is always on (the Perl
# modules are installed with it, under lib/pgxs/src/test/perl).
set -euo pipefail

major=${1:?usage: server.sh MAJOR [--cassert]}
flavour=
[ "${2:-}" = --cassert ] && flavour=-cassert
cache=${ND_PG_CACHE:-/var/tmp/neardup-pg}
prefix=$cache/$major$flavour
log() { echo "server.sh: $*" >&2; }

if [ -x "$prefix/bin/pg_config" ] && [ -f "$prefix/.complete" ]; then
	echo "$prefix"
	exit 0
fi
case "$major" in
	17 | 18 | 19) ;;
	*) log "no Debian source package for PostgreSQL $major here (17, 18, 19)"; exit 2 ;;
esac
[ "$(id -u)" -eq 0 ] || { log "run as root (apt)"; exit 4; }

mkdir -p "$cache/apt/lists/partial" "$cache/src"
cat >"$cache/apt/sources.list" <<LIST
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian unstable main
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian experimental main
LIST
apt_opts=(-o "Dir::Etc::sourcelist=$cache/apt/sources.list" -o Dir::Etc::sourceparts=-
	-o "Dir::State::Lists=$cache/apt/lists" -o APT::Get::List-Cleanup=0)

# the build needs a C compiler, make, bison and flex (the tarballs of 17 and
# later carry no generated parsers); TAP needs IPC::Run
missing=()
for p in gcc make bison flex libreadline-dev zlib1g-dev libipc-run-perl; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# fetch_from_pool UPSTREAM REVISION: the orig tarball of that version from
# the archive's pool, checked against the SHA-256 its .dsc gives; prints it
fetch_from_pool() {
	local pool=http://deb.debian.org/debian/pool/main/p/postgresql-$major
	local dsc=$cache/src/postgresql-${major}_$1-$2.dsc file sum
	/usr/lib/apt/apt-helper download-file "$pool/$(basename "$dsc" | sed 's/+/%2b/g')" "$dsc" >/dev/null 2>&1 || { rm -f "$dsc"; return 1; }
	read -r sum file < <(awk '/^Checksums-Sha256:/ {on = 1; next} /^[^ ]/ {on = 0} on && $3 ~ /orig\.tar/ {print $1, $3}' "$dsc")
	[ -n "${file:-}" ] || return 1
	/usr/lib/apt/apt-helper download-file "$pool/$file" "$cache/src/$file" "SHA256:$sum" >/dev/null 2>&1 || { rm -f "$cache/src/$file"; return 1; }
	log "postgresql-$major $1 fetched from the pool (SHA-256 as its .dsc states)"
	echo "$cache/src/$file"
}

tarball=$(ls "$cache/src"/postgresql-"$major"_*.orig.tar.* 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$tarball" ]; then
	log "fetching the source of postgresql-$major"
	apt-get "${apt_opts[@]}" update -qq
	# the newest version the archive serves: try each listed one in turn
	versions=$(apt-cache "${apt_opts[@]}" showsrc "postgresql-$major" | sed -n 's/^Version: //p' | sort -Vr)
	for v in $versions; do
		(cd "$cache/src" && apt-get "${apt_opts[@]}" source --download-only -qq "postgresql-$major=$v" >&2) && break ||
			log "postgresql-$major $v could not be fetched"
	done
	tarball=$(ls "$cache/src"/postgresql-"$major"_*.orig.tar.* 2>/dev/null | sort -V | tail -1 || true)
	# A mirror may lag its own index: the listed version is missing from
	# the pool while the point releases before it are still there.  Walk
	# back from the listed one (17.12-0+deb13u1: 17.11-0+deb13u1, ...),
	# fetch the .dsc, and accept the tarball only with the SHA-256 it names.
	if [ -z "$tarball" ]; then
		for v in $versions; do
			upstream=${v%%-*} rev=${v#*-}
			case "$upstream" in *.*) ;; *) continue ;; esac
			minor=${upstream#*.}
			case "$minor" in *[!0-9]*) continue ;; esac
			for m in $(seq $((minor - 1)) -1 $((minor > 4 ? minor - 4 : 0))); do
				tarball=$(fetch_from_pool "$major.$m" "$rev") && break
			done
			[ -n "$tarball" ] && break
		done
	fi
	[ -n "$tarball" ] || { log "no source of postgresql-$major could be fetched"; exit 3; }
fi

build=$cache/build/$major$flavour
rm -rf "$build" "$prefix"
# Under `make test` this script runs below a make, whose MAKELEVEL and
# MAKEFLAGS its children inherit: PostgreSQL's build then takes itself for
# a sub-make and skips its generated headers (utils/errcodes.h missing).
unset MAKELEVEL MAKEFLAGS MFLAGS
mkdir -p "$build"
log "building $(basename "$tarball") into $prefix (some minutes)"
tar -xf "$tarball" -C "$build" --strip-components=1
conf=(--prefix="$prefix" --enable-tap-tests --without-icu --with-openssl=no)
[ -n "$flavour" ] && conf+=(--enable-cassert --enable-debug)
(
	cd "$build"
	./configure "${conf[@]}" CFLAGS="-O2" >configure.log 2>&1 || { tail -30 configure.log; exit 1; }
	make -s -j"$(nproc)" >make.log 2>&1 || { tail -50 make.log; exit 1; }
	make -s -C contrib -j"$(nproc)" >>make.log 2>&1 || { tail -50 make.log; exit 1; }
	make -s install >>make.log 2>&1 && make -s -C contrib install >>make.log 2>&1
) >&2
chmod -R a+rX "$prefix"
touch "$prefix/.complete"
rm -rf "$build"
echo "$prefix"
