// Package filechange holds the one shape of a workspace file a turn wrote:
// what the write tool reports, the loop merges per turn, the store keeps
// and undo reverts. It is a leaf (standard library only) because both
// internal/tool and internal/store, leaves themselves, use it.
package filechange

// Change is what one tool call (or, merged, one turn) did to one
// workspace file, kept so the change can be undone: the content before
// and a hash of what it left. A turn's changes to one path merge into one
// Change (the content before the turn, the hash of the last write).
//
// It lives here, not in internal/tool or internal/store, because those two
// leaves may not import each other and both need it.
type Change struct {
	// Path is workspace-relative, in slash form.
	Path string
	// Existed says the file existed before; Before is its content then.
	Existed bool
	Before  []byte
	// Unkept, when set, says why Before was not kept (a file over the
	// undo limit, an unreadable one): the change cannot be undone.
	Unkept string
	// After is the lowercase hex SHA-256 of the content the call left.
	After string
}
