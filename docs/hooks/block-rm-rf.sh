#!/bin/bash
# pre_tool hook (match = "bash"): deny `rm -rf` (-r and -f in any order
# or spelling) unless every target is one of the build directories below.
# A guard against mistakes, not a sandbox: a determined command can hide
# a deletion in many other ways. Needs jq.
allowed='^(\./)?(build|dist|target|node_modules|\.cache)/?$'
cmd=$(jq -r '.tool.arguments.command // ""')
# Split the command at shell separators and look at each simple command.
while IFS= read -r part; do
	read -r -a words <<<"$part"
	[ "${words[0]}" = rm ] || [ "${words[0]}" = /bin/rm ] || continue
	recursive=false force=false targets=()
	for w in "${words[@]:1}"; do
		case "$w" in
		--recursive) recursive=true ;;
		--force) force=true ;;
		--*) ;;
		-*)
			[[ $w == *[rR]* ]] && recursive=true
			[[ $w == *f* ]] && force=true
			;;
		*) targets+=("$w") ;;
		esac
	done
	$recursive && $force || continue
	for t in "${targets[@]}"; do
		if ! [[ $t =~ $allowed ]]; then
			echo "rm -rf of '$t' is not allowed by the block-rm-rf hook (allowed: build, dist, target, node_modules, .cache); delete files one by one or ask the user" >&2
			exit 2
		fi
	done
done < <(sed -E 's/(\&\&|\|\||;|\||\$\(|`|\(|\))/\n/g' <<<"$cmd")
exit 0
