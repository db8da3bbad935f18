# debsrc.sh: download a Debian source package through a private apt source
# list (sourced by get-regress.sh and build-pg.sh).
#
#   debsrc_suites PGVERSION          the Debian suites that carry postgresql-PGVERSION
#   debsrc_mirrors                   the Debian mirrors of the system's apt sources
#   debsrc_fetch PACKAGE SUITES DIR  download the upstream tarball (orig.tar.*) of
#                                    the newest PACKAGE source package found in
#                                    SUITES into DIR; prints "VERSION TARBALL"
#
# The package lists live in a temporary directory; the system's apt
# configuration is left alone.  The tarball is checked against the SHA-256 of
# the signed index.  The mirrors are those of the system's binary
# packages, as deb-src lines.  Needs apt-get and apt-cache (Debian).
#
# A mirror may list a version whose upstream tarball it no longer serves while
# it keeps the files of the same release's earlier uploads (trixie-security's
# postgresql-17 has been such a case).  Then the tarball of the nearest earlier
# minor release in the same pool directory is taken: its .dsc must carry a good
# signature from the Debian developers' keyring (package debian-keyring, gpgv),
# and the tarball must match the SHA-256 of the signed part of that .dsc.

# debsrc_suites PGVERSION: Debian 12 packages PostgreSQL 15, Debian 13 (trixie)
# 17, unstable (sid) 18
debsrc_suites() {
	local codename
	case $1 in
		15)
			codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
			echo "$codename $codename-updates $codename-security"
			;;
		17) echo "trixie trixie-updates trixie-security" ;;
		18) echo "sid" ;;
		*) echo "debsrc: no Debian suite known for PostgreSQL $1 (15, 17, 18)" >&2; return 1 ;;
	esac
}

# debsrc_mirrors: the Debian mirrors of the system's apt sources, one a line
debsrc_mirrors() {
	grep -hsE '^(URIs:|deb )' /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list |
		grep -oE 'https?://[^ ]+' | sort -u || true
}

# debsrc_earlier PACKAGE VERSION DIRECTORY DIR URIS TMP: the upstream tarball
# of the nearest earlier minor release of VERSION (same Debian revision) that
# the mirrors in URIS keep in DIRECTORY, checked as the header comment says,
# into DIR; prints "VERSION TARBALL".  Notes go to TMP/apt.log.
debsrc_earlier() {
	local pkg=$1 version=$2 directory=$3 dir=$4 uris=$5 tmp=$6
	local keyring=/usr/share/keyrings/debian-keyring.gpg log=$6/apt.log
	local up=${2%%-*} rev=${2#*-} major minor m u dsc sha file
	major=${up%.*}
	minor=${up##*.}
	case $minor in '' | *[!0-9]*) return 1 ;; esac
	if [ ! -r $keyring ] || ! command -v gpgv >/dev/null; then
		echo "debsrc: earlier uploads need gpgv and $keyring (package debian-keyring)" >>"$log"
		return 1
	fi
	for ((m = minor - 1; m >= 0 && m >= minor - 8; m--)); do
		dsc=${pkg}_$major.$m-$rev.dsc
		for u in $uris; do
			rm -f "$tmp/$dsc" "$tmp/signed"
			/usr/lib/apt/apt-helper -o "APT::Sandbox::User=root" download-file \
				"$u/$directory/$dsc" "$tmp/$dsc" >>"$log" 2>&1 || continue
			if ! gpgv --keyring $keyring --output "$tmp/signed" "$tmp/$dsc" >>"$log" 2>&1; then
				echo "debsrc: $dsc has no good signature from $keyring" >>"$log"
				continue
			fi
			read -r sha file < <(awk '/^Checksums-Sha256:/ { s = 1; next } /^[^ ]/ { s = 0 }
				s && $3 ~ /\.orig\.tar\./ { print $1, $3; exit }' "$tmp/signed")
			[ -n "${file:-}" ] || continue
			if /usr/lib/apt/apt-helper -o "APT::Sandbox::User=root" download-file \
				"$u/$directory/$file" "$dir/$file" "SHA256:$sha" >>"$log" 2>&1; then
				echo "debsrc: $pkg $version's tarball is missing; took $major.$m-$rev's" \
					"(signed .dsc)" >&2
				echo "$major.$m-$rev $dir/$file"
				return 0
			fi
		done
	done
	return 1
}

debsrc_fetch() {
	local pkg=$1 suites=$2 dir=$3 tmp uris u s got="" rc=0 tool
	local version directory file sha
	for tool in apt-get apt-cache /usr/lib/apt/apt-helper; do
		if ! command -v $tool >/dev/null; then
			echo "debsrc: needs $tool (Debian)" >&2
			return 1
		fi
	done
	tmp=$(mktemp -d /tmp/gpuhash-debsrc.XXXXXX) || return 1
	chmod 755 "$tmp"	# apt's download user must reach it
	mkdir -p "$tmp/lists/partial" "$dir"
	uris=$(debsrc_mirrors)
	if [ -z "$uris" ]; then
		echo "debsrc: found no Debian mirror in apt's sources" >&2
		rm -rf "$tmp"
		return 1
	fi
	for u in $uris; do
		for s in $suites; do
			case $u:$s in
				*security*:*-security) echo "deb-src $u $s main" ;;
				*security*:* | *:*-security) ;;	# security suites only on the security mirror
				*) echo "deb-src $u $s main" ;;
			esac
		done
	done >"$tmp/sources.list"
	local apt_opts=(-o "Dir::Etc::SourceList=$tmp/sources.list" -o "Dir::Etc::SourceParts=$tmp/none"
		-o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache="
		-o "APT::Sandbox::User=root")
	if ! apt-get "${apt_opts[@]}" -qq update >"$tmp/apt.log" 2>&1; then
		tail -20 "$tmp/apt.log" >&2
		echo "debsrc: apt-get update failed for $suites" >&2
		rm -rf "$tmp"
		return 1
	fi
	# One line per source package version: version, pool directory, upstream
	# tarball and its SHA-256 (from the signed index), newest first.
	apt-cache "${apt_opts[@]}" showsrc "$pkg" 2>/dev/null | awk '
		/^Package: / { v = ""; d = ""; f = ""; h = ""; sums = 0 }
		/^Version: / { v = $2 }
		/^Directory: / { d = $2 }
		/^[A-Z]/ { sums = ($1 == "Checksums-Sha256:") }
		sums && $3 ~ /\.orig\.tar\./ { h = $1; f = $3 }
		/^$/ && v != "" && f != "" { print v, d, f, h; v = "" }
		END { if (v != "" && f != "") print v, d, f, h }
	' | sort -u -r -V >"$tmp/candidates"
	# The first version whose tarball a mirror serves (a mirror may list a
	# version whose files it no longer has).
	while read -r version directory file sha; do
		for u in $uris; do
			if /usr/lib/apt/apt-helper -o "APT::Sandbox::User=root" download-file \
				"$u/$directory/$file" "$dir/$file" "SHA256:$sha" >>"$tmp/apt.log" 2>&1; then
				got="$version $dir/$file"
				break 2
			fi
		done
	done <"$tmp/candidates"
	if [ -z "$got" ]; then
		while read -r version directory file sha; do
			got=$(debsrc_earlier "$pkg" "$version" "$directory" "$dir" "$uris" "$tmp") && break
		done <"$tmp/candidates"
	fi
	if [ -z "$got" ]; then
		tail -5 "$tmp/apt.log" >&2
		echo "debsrc: no $pkg source tarball could be downloaded from $suites" \
			"(versions listed: $(cut -d' ' -f1 "$tmp/candidates" | tr '\n' ' '))" >&2
		rc=1
	fi
	rm -rf "$tmp"
	[ -n "$got" ] && echo "$got"
	return $rc
}
