// Package textcut cuts text to a byte budget without splitting a UTF-8
// character: the one implementation behind every bounded output, capture
// and message in SCV (tool results, process captures, progress lines,
// provider errors). It imports only the standard library, so the leaves
// (proc, tool, store) can use it too.
package textcut

import "unicode/utf8"

// Prefix returns s cut to at most n bytes, ending on a character boundary.
func Prefix(s string, n int) string {
	if n < 0 {
		n = 0
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// TrimEnd drops an incomplete multi-byte character at the end of s, as a
// byte-limited read or cut leaves it. A complete character, and bytes that
// are not UTF-8 at all, are kept.
func TrimEnd[T ~string | ~[]byte](s T) T {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(string(s[i:])) {
				return s[:i]
			}
			return s
		}
	}
	return s
}

// TrimStart drops the continuation bytes of a character whose beginning was
// cut off (the kept tail of a stream). Valid UTF-8 has at most three in a
// row, so at most three bytes are dropped whatever the input.
func TrimStart[T ~string | ~[]byte](s T) T {
	for i := 0; i < len(s) && i < utf8.UTFMax-1; i++ {
		if utf8.RuneStart(s[i]) {
			return s[i:]
		}
	}
	return s[min(len(s), utf8.UTFMax-1):]
}
