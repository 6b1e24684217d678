#!/bin/bash
# post_tool hook (match = "write"): format every .go file the write tool
# wrote with gofmt; what gofmt says becomes a note the model reads with
# the result. Needs jq and gofmt.
event=$(cat)
path=$(jq -r '.tool.arguments.path // empty' <<<"$event")
[ "$(jq -r '.result.success' <<<"$event")" = true ] || exit 0
case "$path" in
*.go) ;;
*) exit 0 ;;
esac
if ! out=$(gofmt -l -w -- "$path" 2>&1); then
	echo "gofmt could not format $path:"
	echo "$out"
elif [ -n "$out" ]; then
	echo "gofmt reformatted $path; read it again before editing it further."
fi
exit 0
