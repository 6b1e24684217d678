#!/bin/bash
# approval_requested hook: a desktop notification when SCV waits for an
# approval (notify-send on Linux, osascript on macOS; a bell otherwise).
# Needs jq.
event=$(cat)
title="SCV needs an approval"
body=$(jq -r '"\(.tool.name): \(.tool.summary // "")"' <<<"$event" | head -c 300)
if command -v notify-send >/dev/null; then
	notify-send --app-name=scv "$title" "$body"
elif command -v osascript >/dev/null; then
	osascript -e 'on run argv' -e 'display notification (item 2 of argv) with title (item 1 of argv)' -e 'end run' "$title" "$body"
else
	printf '\a' >/dev/tty 2>/dev/null
fi
exit 0
