#!/usr/bin/env bash
# One version number, everywhere a release names it:
#   - neardup.control's default_version (X.Y, or X.Y.Z for a fix release)
#     is the version;
#   - the newest update script, sql/neardup--*--X.Y[.Z].sql, leads to it, and
#     the update scripts chain from 0.1 to it with no gap;
#   - META.json (PGXN Meta Spec 1.0.0, which wants semantic versions) has
#     X.Y.0 (X.Y.Z) as the distribution's and the extension's version, and the
#     spec's required keys;
#   - debian/changelog's newest entry has the version as its upstream one;
#   - `make dist` writes neardup-VERSION.zip with its files under neardup-VERSION/
#     (needs a git checkout);
#   - and the comparison fails on a copy of the files whose META.json says
#     another version (the control: this test can fail).
# Needs python3 (for JSON; pgxnclient, a test dependency, brings it).
# Prints TAP.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

n=0
ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}

# json FILE EXPR: a Python expression over the parsed file `m`, printed.
json() {
	python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# semver VERSION: PGXN's form of a version (X.Y -> X.Y.0; X.Y.Z as it is)
semver() {
	if [[ $1 =~ ^[0-9]+\.[0-9]+$ ]]; then echo "$1.0"; else echo "$1"; fi
}

# mismatches DIR: one line per place whose version differs from the
# control file's (nothing when all agree).
mismatches() {
	local dir=$1 v sem newest chain meta_v prov_v deb_v
	v=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$dir/neardup.control")
	[[ $v =~ ^[0-9]+\.[0-9]+(\.[0-9]+)?$ ]] || echo "neardup.control: default_version '$v' is not X.Y or X.Y.Z"
	newest=$(ls "$dir"/sql/neardup--*--*.sql | sed 's/.*--\(.*\)\.sql$/\1/' | sort -V | tail -1)
	[ "$newest" = "$v" ] || echo "newest update script leads to $newest, not $v"
	# the chain: from 0.1, each script's target is the next one's source
	local next
	chain=0.1
	while next=$(compgen -G "$dir/sql/neardup--$chain--*.sql" | head -1) && [ -n "$next" ]; do
		chain=$(echo "$next" | sed 's/.*--\(.*\)\.sql$/\1/')
	done
	[ "$chain" = "$v" ] || echo "the update scripts from 0.1 end at $chain, not $v"
	sem=$(semver "$v")
	meta_v=$(json "$dir/META.json" 'm["version"]' 2>&1)
	[ "$meta_v" = "$sem" ] || echo "META.json: version $meta_v, not $sem"
	prov_v=$(json "$dir/META.json" 'm["provides"]["neardup"]["version"]' 2>&1)
	[ "$prov_v" = "$sem" ] || echo "META.json: provides.neardup.version $prov_v, not $sem"
	deb_v=$(sed -n '1s/^neardup (\([^)-]*\)-[^)]*).*/\1/p' "$dir/debian/changelog")
	[ "$deb_v" = "$v" ] || echo "debian/changelog: upstream version '$deb_v', not $v"
}

version=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$ROOT/neardup.control")
out=$(mismatches "$ROOT")
[ -z "$out" ] && [ -n "$version" ]
ok $? "neardup.control, the update scripts, META.json and debian/changelog all name $version${out:+: $(echo "$out" | paste -sd ';')}"

# META.json against PGXN Meta Spec 1.0.0 (pgxn check does not read it: it
# runs the distribution's installcheck, see test/e2e/package.sh)
spec=$(python3 - "$ROOT" <<'PY' 2>&1
import json, os, re, sys
root = sys.argv[1]
m = json.load(open(os.path.join(root, "META.json")))
bad = [k + " missing" for k in ("name", "abstract", "maintainer", "license",
                                "provides", "version", "meta-spec") if k not in m]
if m.get("meta-spec", {}).get("version") != "1.0.0":
    bad.append("meta-spec.version is not 1.0.0")
if m.get("name") != "neardup":
    bad.append("name is not neardup")
versions = [m.get("version", "")]
for name, ext in m.get("provides", {}).items():
    bad += [name + "." + k + " missing" for k in ("file", "version") if k not in ext]
    if not os.path.exists(os.path.join(root, ext.get("file", ""))):
        bad.append(name + ".file " + ext.get("file", "") + " is not in the tree")
    versions.append(ext.get("version", ""))
bad += [str(v) + " is not a semantic version" for v in versions
        if not re.fullmatch(r"\d+\.\d+\.\d+", str(v))]
print("; ".join(bad))
PY
)
[ -z "$spec" ]
ok $? "META.json has PGXN Meta Spec 1.0.0's required keys and semantic versions${spec:+: $spec}"

# make dist: the tarball's name and top directory carry the version
if git -C "$ROOT" rev-parse --verify -q HEAD >/dev/null 2>&1 && command -v python3 >/dev/null; then
	tmp=$(mktemp -d /tmp/nd-dist.XXXXXX)
	trap 'rm -rf "$tmp"' EXIT
	make -s -C "$ROOT" dist DISTDIR="$tmp" >/dev/null 2>&1
	top=$(python3 -c 'import sys, zipfile; print(" ".join(sorted({n.split("/")[0] for n in zipfile.ZipFile(sys.argv[1]).namelist()})))' \
		"$tmp/neardup-$version.zip" 2>&1)
	[ "$top" = "neardup-$version" ]
	ok $? "make dist writes neardup-$version.zip, its files under neardup-$version/ (found: $top)"
else
	ok 0 "make dist writes neardup-$version.zip # SKIP not a git checkout"
fi

# the control: the same comparison on a copy whose META.json is wrong
ctl=$(mktemp -d /tmp/nd-version.XXXXXX)
trap 'rm -rf "$ctl" "${tmp:-}"' EXIT
mkdir -p "$ctl/sql" "$ctl/debian"
cp "$ROOT/neardup.control" "$ROOT/META.json" "$ctl/"
cp "$ROOT"/sql/neardup--*.sql "$ctl/sql/"
cp "$ROOT/debian/changelog" "$ctl/debian/"
[ -z "$(mismatches "$ctl")" ] || echo "# the copy differs before it is changed"
sed -i 's/"version": "'"$(semver "$version")"'"/"version": "9.9.0"/' "$ctl/META.json"
wrong=$(mismatches "$ctl")
echo "# control: ${wrong//$'\n'/; }"
[[ $wrong == *"META.json: version 9.9.0, not $(semver "$version")"* ]]
ok $? "a META.json naming another version fails the comparison (control)"
